/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two return-probe suites share: okprobes_kretprobe (okprobes' stubs,
 * okp_kretprobe_kunit.c, which defines all of this) and okprobes_kretprobe_rethook (the
 * kernel's rethook, okp_kretprobe_rethook_kunit.c): the probed functions, the handlers' log and
 * the cases that hold whatever carries a frame's return.
 */
#ifndef OKP_KRETPROBE_KUNIT_H
#define OKP_KRETPROBE_KUNIT_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <okprobes/okprobes.h>

/* What the handlers okp_rt_setup() installs record, in order. */
#define OKP_RT_LOG 64
struct okp_rt_log {
	long entries[OKP_RT_LOG], returns[OKP_RT_LOG];
	unsigned int nentry, nreturn;
	long retvals[OKP_RT_LOG];
	unsigned long ret_ips[OKP_RT_LOG];
	unsigned long retaddrs[OKP_RT_LOG];	/* okp_get_kretprobe_retaddr() */
	bool data_mismatch;
	bool skip_entries;	/* entry_handler returns 1 */
};
extern struct okp_rt_log okp_rt;

/* Probed functions: okp_rt_mul3(a, b) = 3a + b. okp_rt_exit_inside() waits for
 * okp_rt_exit_now, then exits inside (okp_rt_exited); okp_rt_exiter is a kthread that calls
 * it. okp_rt_call_site() calls okp_rt_whoami(), which records its raw return address in
 * okp_rt_raw_ret. */
long okp_rt_mul3(long a, long b);
long okp_rt_exit_inside(long a);
int okp_rt_exiter(void *arg);
extern struct completion okp_rt_exit_now, okp_rt_exited;
long okp_rt_whoami(long a);
long okp_rt_call_site(long a);
extern unsigned long okp_rt_raw_ret;

/* A return probe on fn with the logging handlers (the log cleared). */
void okp_rt_setup(struct okp_kretprobe *rp, void *fn, int maxactive);
void okp_rt_expect_stubs_free(struct kunit *test);

/* The cases whose checks hold through the stubs and through rethook alike. */
void okp_kretprobe_pairs_and_values(struct kunit *test);
void okp_kretprobe_breakpoint_entry(struct kunit *test);
void okp_kretprobe_recursion_lifo(struct kunit *test);
void okp_kretprobe_exhaustion(struct kunit *test);
void okp_kretprobe_sleepers(struct kunit *test);
void okp_kretprobe_unregister_while_inside(struct kunit *test);
void okp_kretprobe_entry_handler_skips(struct kunit *test);
void okp_kretprobe_enable_disable(struct kunit *test);
void okp_kretprobe_data_size_limit(struct kunit *test);
void okp_kretprobe_batch(struct kunit *test);
void okp_kretprobe_already_registered(struct kunit *test);
void okp_kretprobe_large_maxactive(struct kunit *test);
void okp_kretprobe_scale(struct kunit *test);

#define OKP_KRETPROBE_COMMON_CASES \
	KUNIT_CASE(okp_kretprobe_pairs_and_values), \
	KUNIT_CASE(okp_kretprobe_breakpoint_entry), \
	KUNIT_CASE(okp_kretprobe_recursion_lifo), \
	KUNIT_CASE(okp_kretprobe_exhaustion), \
	KUNIT_CASE(okp_kretprobe_sleepers), \
	KUNIT_CASE(okp_kretprobe_unregister_while_inside), \
	KUNIT_CASE(okp_kretprobe_entry_handler_skips), \
	KUNIT_CASE(okp_kretprobe_enable_disable), \
	KUNIT_CASE(okp_kretprobe_data_size_limit), \
	KUNIT_CASE(okp_kretprobe_batch), \
	KUNIT_CASE(okp_kretprobe_already_registered), \
	KUNIT_CASE(okp_kretprobe_large_maxactive), \
	KUNIT_CASE(okp_kretprobe_scale)

#endif /* OKP_KRETPROBE_KUNIT_H */
