// SPDX-License-Identifier: GPL-2.0
/*
 * riscv64's register names for kprobe events' %REG fetch arguments
 * (src/kernel/events/registers.c), as the kernel's regs_query_register_offset() spells them:
 * ra, sp, a0.., epc, the ABI names. The kernel's table is not exported to modules.
 */
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/stddef.h>

#include "../../events/events.h"

#define OKP_REG(name, field) { name, offsetof(struct pt_regs, field) }

const struct okp_event_register okp_event_registers[] = {
	OKP_REG("epc", epc), OKP_REG("ra", ra), OKP_REG("sp", sp), OKP_REG("gp", gp),
	OKP_REG("tp", tp), OKP_REG("t0", t0), OKP_REG("t1", t1), OKP_REG("t2", t2),
	OKP_REG("s0", s0), OKP_REG("s1", s1), OKP_REG("a0", a0), OKP_REG("a1", a1),
	OKP_REG("a2", a2), OKP_REG("a3", a3), OKP_REG("a4", a4), OKP_REG("a5", a5),
	OKP_REG("a6", a6), OKP_REG("a7", a7), OKP_REG("s2", s2), OKP_REG("s3", s3),
	OKP_REG("s4", s4), OKP_REG("s5", s5), OKP_REG("s6", s6), OKP_REG("s7", s7),
	OKP_REG("s8", s8), OKP_REG("s9", s9), OKP_REG("s10", s10), OKP_REG("s11", s11),
	OKP_REG("t3", t3), OKP_REG("t4", t4), OKP_REG("t5", t5), OKP_REG("t6", t6),
	OKP_REG("status", status), OKP_REG("badaddr", badaddr), OKP_REG("cause", cause),
	OKP_REG("orig_a0", orig_a0),
};
const unsigned int okp_event_register_count = ARRAY_SIZE(okp_event_registers);
