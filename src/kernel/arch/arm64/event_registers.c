// SPDX-License-Identifier: GPL-2.0
/*
 * arm64's register names for kprobe events' %REG fetch arguments
 * (src/kernel/events/registers.c), as the kernel's regs_query_register_offset() spells them:
 * x0..x30, sp, pc, pstate. The kernel's table is not exported to modules.
 */
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/stddef.h>

#include "../../events/events.h"

#define OKP_REG(name, field) { name, offsetof(struct pt_regs, field) }

const struct okp_event_register okp_event_registers[] = {
	OKP_REG("x0", regs[0]), OKP_REG("x1", regs[1]), OKP_REG("x2", regs[2]),
	OKP_REG("x3", regs[3]), OKP_REG("x4", regs[4]), OKP_REG("x5", regs[5]),
	OKP_REG("x6", regs[6]), OKP_REG("x7", regs[7]), OKP_REG("x8", regs[8]),
	OKP_REG("x9", regs[9]), OKP_REG("x10", regs[10]), OKP_REG("x11", regs[11]),
	OKP_REG("x12", regs[12]), OKP_REG("x13", regs[13]), OKP_REG("x14", regs[14]),
	OKP_REG("x15", regs[15]), OKP_REG("x16", regs[16]), OKP_REG("x17", regs[17]),
	OKP_REG("x18", regs[18]), OKP_REG("x19", regs[19]), OKP_REG("x20", regs[20]),
	OKP_REG("x21", regs[21]), OKP_REG("x22", regs[22]), OKP_REG("x23", regs[23]),
	OKP_REG("x24", regs[24]), OKP_REG("x25", regs[25]), OKP_REG("x26", regs[26]),
	OKP_REG("x27", regs[27]), OKP_REG("x28", regs[28]), OKP_REG("x29", regs[29]),
	OKP_REG("x30", regs[30]), OKP_REG("sp", sp), OKP_REG("pc", pc),
	OKP_REG("pstate", pstate),
};
const unsigned int okp_event_register_count = ARRAY_SIZE(okp_event_registers);
