// SPDX-License-Identifier: GPL-2.0
/*
 * x86-64's register names for kprobe events' %REG fetch arguments
 * (src/kernel/events/registers.c), as the kernel's regs_query_register_offset() spells them:
 * ax, di, r8.., ip, flags (without the r of rax). The kernel's table is not exported to modules.
 */
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/stddef.h>

#include "../../events/events.h"

#define OKP_REG(name, field) { name, offsetof(struct pt_regs, field) }

const struct okp_event_register okp_event_registers[] = {
	OKP_REG("r15", r15), OKP_REG("r14", r14), OKP_REG("r13", r13), OKP_REG("r12", r12),
	OKP_REG("r11", r11), OKP_REG("r10", r10), OKP_REG("r9", r9), OKP_REG("r8", r8),
	OKP_REG("ax", ax), OKP_REG("bx", bx), OKP_REG("cx", cx), OKP_REG("dx", dx),
	OKP_REG("si", si), OKP_REG("di", di), OKP_REG("bp", bp), OKP_REG("sp", sp),
	OKP_REG("flags", flags), OKP_REG("ip", ip), OKP_REG("cs", cs), OKP_REG("ss", ss),
	OKP_REG("orig_ax", orig_ax),
};
const unsigned int okp_event_register_count = ARRAY_SIZE(okp_event_registers);
