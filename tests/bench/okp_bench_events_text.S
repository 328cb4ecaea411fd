/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The probed text of the kprobe-events benchmark (okp_bench_events.c, tests/bench/events), in
 * assembly so that the site is no ftrace site and both frameworks see the same instructions.
 * The shape of okp_bench_target_opt (okp_bench_text.S): no branch, every instruction boostable
 * and position-independent, so the probe at `add $1,%rax` is an int3 with optimization off
 * and, with it on, a jmp rel32 over `add` + `mov` (7 bytes) in both frameworks.
 */
#include <linux/linkage.h>

	.text

/*
 * unsigned long okp_bench_event_target(const struct okp_bench_event_record *r): returns
 * (unsigned long)r + 1. %rdi holds r at the probe, for the events' %di and +0(%di).
 *   +0   mov %rdi,%rax   3 bytes (after the ENDBR64 where the kernel has IBT)
 *   +3   add $1,%rax     4 bytes: the probe
 *   +7   mov %rax,%rdx   3 bytes
 */
SYM_FUNC_START(okp_bench_event_target)
	mov	%rdi, %rax
	addq	$1, %rax
	mov	%rax, %rdx
	RET
SYM_FUNC_END(okp_bench_event_target)
