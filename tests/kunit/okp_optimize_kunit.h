/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of suite "okprobes_optimize" (x86-64, okp_optimize_kunit.c) share: the asm
 * targets of optimize_targets_x86.S and what each computes, the inputs every target is called
 * with, probes that record what their handlers saw (okp_optimize_probes.c), and the table of
 * instruction classes a region may hold (okp_optimize_class_kunit.c).
 */
#ifndef OKP_OPTIMIZE_KUNIT_H
#define OKP_OPTIMIZE_KUNIT_H

#include <kunit/test.h>
#include <linux/minmax.h>
#include <linux/types.h>
#include <okprobes/okprobes.h>

/* --- The asm targets (optimize_targets_x86.S); see there for what each computes. --- */

/* Keep in sync with optimize_targets_x86.S. */
#define OKP_OT_MARK 0x1122334455667788UL	/* r11 at every probe */
#define OKP_OT_DATA 0x5eedL			/* okp_ot_data */

#define OKP_OT_JMP32 0xe9
#define OKP_OT_JMP_SIZE 5

/* Where a target's probe goes and where its region ends, as offsets from the function. */
struct okp_ot_site {
	u32 probe, end;
};

#define OKP_OT_TARGET(name)		\
	long okp_ot_##name(long a, long b);	\
	extern const struct okp_ot_site okp_ot_##name##_site

OKP_OT_TARGET(riprel_load);
OKP_OT_TARGET(riprel_store);
OKP_OT_TARGET(jcc);
OKP_OT_TARGET(jmp8);
OKP_OT_TARGET(call);
OKP_OT_TARGET(push_pop);
OKP_OT_TARGET(flags);
OKP_OT_TARGET(alu);
OKP_OT_TARGET(skip);
OKP_OT_TARGET(into_region);
OKP_OT_TARGET(into_region_past_label);
OKP_OT_TARGET(jump_table);
extern const struct okp_ot_site okp_ot_jump_table_into_site;	/* in okp_ot_jump_table */

extern const u32 okp_ot_skip_to_off;
extern long okp_ot_store;
extern unsigned long okp_ot_sp, okp_ot_ret_addr;

typedef long (*okp_ot_fn)(long a, long b);

static inline const u8 *okp_ot_at(okp_ot_fn fn, u32 off)
{
	return (const u8 *)fn + off;
}

/* What each target returns for f(a, b), probed or not. */
static inline long okp_ot_expect_riprel_load(long a, long b)
{
	return a + 2 * b + OKP_OT_DATA;
}

static inline long okp_ot_expect_riprel_store(long a, long b)
{
	return a + 1 + b;
}

static inline long okp_ot_expect_jcc(long a, long b)
{
	return a < b ? a + b : a - b + 100;
}

static inline long okp_ot_expect_jmp8(long a, long b)
{
	return a + 2 * b + 7;
}

static inline long okp_ot_expect_call(long a, long b)
{
	return 4 * a + 3 * b + 7;
}

static inline long okp_ot_expect_push_pop(long a, long b)
{
	return a + 4 * b;
}

static inline long okp_ot_expect_flags(long a, long b)
{
	return 4 * min(a, b) + (a < b);
}

static inline long okp_ot_expect_alu(long a, long b)
{
	return 16 * a + b;
}

static inline long okp_ot_expect_skip(long a, long b)
{
	return a + 1000 + b + 1;
}

static inline long okp_ot_expect_into_region(long a, long b)
{
	return b ? a + 100 + b : a;
}

/* okp_ot_jump_table: a switch on a & 7 (optimize_targets_x86.S). */
static inline long okp_ot_expect_jump_table(long a, long b)
{
	static const long add[8] = { 1000, 2000, 3 + 5, 5, 40, 7, 7, 7 };

	return b + add[a & 7];
}

/* The inputs every target is called with: a < b, a > b, a == b, negatives, zeros. */
struct okp_ot_input {
	long a, b;
};

#define OKP_OT_NINPUTS 8
extern const struct okp_ot_input okp_ot_inputs[OKP_OT_NINPUTS];

/* --- Probes that record what their pre_handler saw. --- */

struct okp_ot_probe {
	struct okp_kprobe kp;
	int id;
	bool quiet;		/* the stress case: count nothing, record nothing */
	unsigned long redirect;	/* pre_handler: resume there and return 1 */
	/* What the handlers saw, the last hit. */
	unsigned int hits, post_hits;
	unsigned long ip, sp, di, si, r11, flags;
	unsigned long post_ip, post_ax, post_flags;	/* the post_handler's view */
	bool irqs_off;		/* irqs_disabled() in the pre_handler */
	unsigned int preempt;	/* preempt_count() in the pre_handler */
};

/* The order handlers ran in: 10 * id + 1 for a pre_handler. */
#define OKP_OT_NORDER 8
extern int okp_ot_order[OKP_OT_NORDER];
extern unsigned int okp_ot_norder;

struct okp_ot_probe *okp_ot_new(struct kunit *test, int id, const u8 *addr, bool post);
void okp_ot_clear(struct okp_ot_probe *p);
/* Register/unregister, tracked (okp_t_track) so that .exit cleans up after a failed case. */
int okp_ot_register(struct okp_ot_probe *p);
void okp_ot_unregister(struct okp_ot_probe *p);
void okp_ot_expect_regs(struct kunit *test, const struct okp_ot_probe *p, long a, long b);

static inline bool okp_ot_optimized(const struct okp_ot_probe *p)
{
	return p->kp.flags & OKP_KPROBE_FLAG_OPTIMIZED;
}

#define OKP_OT_ASSERT_OPTIMIZED(test, p)						\
	KUNIT_ASSERT_TRUE_MSG(test, okp_ot_optimized(p), "%pS is not optimized: '%s'",	\
			      (p)->kp.addr, okp_kprobe_reason(&(p)->kp))

#define OKP_OT_EXPECT_OPTIMIZED(test, p)						\
	KUNIT_EXPECT_TRUE_MSG(test, okp_ot_optimized(p), "%pS is not optimized: '%s'",	\
			      (p)->kp.addr, okp_kprobe_reason(&(p)->kp))

/* The longest region a target has (the bytes a case saves to compare after unregistering). */
#define OKP_OT_REGION_MAX 32

/* --- Every class a region may hold (okp_optimize_class_kunit.c). --- */

struct okp_ot_case {
	const char *name;
	okp_ot_fn fn;
	const struct okp_ot_site *site;
	long (*expect)(long a, long b);
	/* More to check after a call; p is NULL for an unprobed call. */
	void (*check)(struct kunit *test, const struct okp_ot_case *c, long a, long b,
		      const struct okp_ot_probe *p);
	bool shared;		/* its result goes through a global: not for several CPUs at once */
};

#define OKP_OT_NCASES 9
extern const struct okp_ot_case okp_ot_cases[OKP_OT_NCASES];
void okp_ot_case_desc(const struct okp_ot_case *c, char *desc);

/* The cases, one file an idea; the suite (okp_optimize_kunit.c) lists them. */
void okprobes_optimize_class(struct kunit *test);
void okprobes_optimize_branch_into_region(struct kunit *test);
void okprobes_optimize_branch_into_region_past_label(struct kunit *test);
void okprobes_optimize_jump_table(struct kunit *test);
void okprobes_optimize_post_handler(struct kunit *test);
void okprobes_optimize_post_handler_joins(struct kunit *test);
void okprobes_optimize_redirect(struct kunit *test);
void okprobes_optimize_aggregate(struct kunit *test);
void okprobes_optimize_disable_enable(struct kunit *test);
void okprobes_optimize_stress(struct kunit *test);

#endif /* OKP_OPTIMIZE_KUNIT_H */
