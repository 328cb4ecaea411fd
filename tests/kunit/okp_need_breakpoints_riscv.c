// SPDX-License-Identifier: GPL-2.0
/*
 * okp_kunit_need_breakpoints() on riscv64 (okp_need_breakpoints.h): asks okprobes itself, once,
 * by registering a probe on a known instruction boundary (the beq of probe_targets_riscv.S),
 * whether it serves breakpoint probes here. Only its degraded-mode refusal skips; any other
 * answer lets the case run and judge, so a broken registration still fails.
 */
#include <linux/errno.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>

#include "okp_need_breakpoints.h"

struct okp_rv_at {
	long insn, post1, post2;
};
long okp_rv_beq(long a, long b);
extern const struct okp_rv_at okp_rv_beq_at;

#define OKP_DEGRADED_PREFIX "no breakpoint probes:"

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
			.addr = (okp_kprobe_opcode_t *)((unsigned long)okp_rv_beq + okp_rv_beq_at.insn),
			.pre_handler = okp_nb_pre,
		};
		int ret = okp_register_kprobe(&probe);

		if (!ret)
			okp_unregister_kprobe(&probe);
		okp_nb_state = 1;
		if (ret == -EOPNOTSUPP &&
		    !strncmp(okp_kprobe_reason(&probe), OKP_DEGRADED_PREFIX, strlen(OKP_DEGRADED_PREFIX))) {
			strscpy(okp_nb_reason, okp_kprobe_reason(&probe), sizeof(okp_nb_reason));
			okp_nb_state = -1;
		}
	}
	if (okp_nb_state < 0)
		kunit_skip(test, "okprobes refuses breakpoint probes on this kernel (%s)", okp_nb_reason);
}
