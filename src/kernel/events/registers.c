// SPDX-License-Identifier: GPL-2.0
/*
 * %REG of a fetch argument: the arch's register names, as the kernel's
 * regs_query_register_offset() spells them (x86-64: ax, di, r8.., ip, flags; arm64: x0..x30,
 * sp, pc, pstate; riscv64: ra, sp, a0.., epc), to the register's offset in struct pt_regs.
 * The kernel's own table is not exported to modules, hence this copy of its names.
 *
 * Locking: none; a constant table.
 */
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/stddef.h>
#include <linux/string.h>

#include "events.h"

struct okp_register_name {
	const char *name;
	unsigned int offset;
};

#define OKP_REG(name, field) { name, offsetof(struct pt_regs, field) }

static const struct okp_register_name okp_register_names[] = {
#if defined(CONFIG_X86_64)
	OKP_REG("r15", r15), OKP_REG("r14", r14), OKP_REG("r13", r13), OKP_REG("r12", r12),
	OKP_REG("r11", r11), OKP_REG("r10", r10), OKP_REG("r9", r9), OKP_REG("r8", r8),
	OKP_REG("ax", ax), OKP_REG("bx", bx), OKP_REG("cx", cx), OKP_REG("dx", dx),
	OKP_REG("si", si), OKP_REG("di", di), OKP_REG("bp", bp), OKP_REG("sp", sp),
	OKP_REG("flags", flags), OKP_REG("ip", ip), OKP_REG("cs", cs), OKP_REG("ss", ss),
	OKP_REG("orig_ax", orig_ax),
#elif defined(CONFIG_ARM64)
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
#elif defined(CONFIG_RISCV)
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
#endif
};

int okp_event_register_offset(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(okp_register_names); i++)
		if (!strcmp(okp_register_names[i].name, name))
			return okp_register_names[i].offset;
	return -EINVAL;
}
