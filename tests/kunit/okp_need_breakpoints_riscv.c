// SPDX-License-Identifier: GPL-2.0
/*
 * okp_kunit_need_breakpoints() on riscv64 (okp_need_breakpoints.h): asks okprobes itself, once,
 * by registering a probe on a known instruction boundary whether it serves breakpoint probes
 * here. Without a breakpoint trap okprobes serves a mid-function probe by a jump where one
 * fits (docs/riscv64-detours.md), so the boundary asked is one no jump fits: the c.jr of
 * probe_targets_riscv.S, an unresolved indirect jump alone in its function (a jump probe's
 * region check refuses the whole function). Only the degraded-mode refusal skips, or a probe
 * there that is not a breakpoint; any other answer lets the case run and judge, so a broken
 * registration still fails.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>

#include "okp_need_breakpoints.h"

struct okp_rv_at {
	long insn, post1, post2;
};
long okp_rv_c_jr(long a, long b);
extern const struct okp_rv_at okp_rv_c_jr_at;

/* The refusal without a breakpoint trap: with no jump probes, and with them (no jump fits). */
static const char *const okp_degraded_prefixes[] = {
	"no breakpoint probes:",
	"no breakpoint on this kernel, and no jump:",
};

static bool okp_nb_degraded_refusal(int ret, const char *reason)
{
	unsigned int i;

	if (ret != -EOPNOTSUPP)
		return false;
	for (i = 0; i < ARRAY_SIZE(okp_degraded_prefixes); i++) {
		if (!strncmp(reason, okp_degraded_prefixes[i], strlen(okp_degraded_prefixes[i])))
			return true;
	}
	return false;
}

/* c.ebreak, or ebreak (okprobes keeps the instruction's length). */
static bool okp_nb_is_breakpoint(const void *addr)
{
	u16 parcel = *(const u16 *)addr;
	u32 insn;

	if ((parcel & 3) != 3)
		return parcel == 0x9002;
	memcpy(&insn, addr, 4);
	return insn == 0x00100073U;
}

static int okp_nb_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	return 0;
}

/* 0: not asked yet; 1: breakpoint probes are served; -1: they are not, for okp_nb_reason. */
static int okp_nb_state;
static char okp_nb_reason[OKP_REASON_MAX];

void okp_kunit_need_breakpoints(struct kunit *test)
{
	if (!okp_nb_state) {
		struct okp_kprobe probe = {
			.addr = (okp_kprobe_opcode_t *)((unsigned long)okp_rv_c_jr + okp_rv_c_jr_at.insn),
			.pre_handler = okp_nb_pre,
		};
		int ret = okp_register_kprobe(&probe);
		bool jump = !ret && !okp_nb_is_breakpoint(probe.addr);

		if (!ret)
			okp_unregister_kprobe(&probe);
		okp_nb_state = 1;
		if (okp_nb_degraded_refusal(ret, okp_kprobe_reason(&probe))) {
			strscpy(okp_nb_reason, okp_kprobe_reason(&probe), sizeof(okp_nb_reason));
			okp_nb_state = -1;
		} else if (jump) {
			strscpy(okp_nb_reason, "a probe where no jump fits was not a breakpoint",
				sizeof(okp_nb_reason));
			okp_nb_state = -1;
		}
	}
	if (okp_nb_state < 0)
		kunit_skip(test, "okprobes refuses breakpoint probes on this kernel (%s)", okp_nb_reason);
}
