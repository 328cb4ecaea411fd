/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of okp_sweep's coverage mode share (sweep_coverage.c: the batches and
 * okprobes' side; sweep_coverage_kernel.c: the kernel's side; sweep_coverage_rules.c: the
 * kernel's rules; sweep_coverage_tally.c: the tally and the report). All of it runs with
 * sweep.c's mutex held, which is what serializes the shared state below.
 */
#ifndef OKP_SWEEP_COVERAGE_H
#define OKP_SWEEP_COVERAGE_H

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/seq_file.h>
#include <linux/types.h>
#include <okprobes/okprobes.h>
#include "sweep.h"

struct insn;

/* Where a batch is: the guest script's writes must come in this order (sweep_coverage.c). */
enum cov_step { P_IDLE, P_OKP_ARMED, P_OKP_RELEASED, P_K_ARMED, P_K_WAITED };

/* A relative branch of a function: the kernel's kind (jmp, jcc, loop, jrcxz) or a call. */
struct cov_branch {
	unsigned int off;
	bool call;
	unsigned long target;
};

struct cov_func {
	struct cov_branch *br;
	unsigned int nbr;
	unsigned int indirect;	/* the first indirect jump or jump to a thunk, or ~0 */
	char indirect_what[64];
	char before_end[96];	/* how the symbol before ends ("" until asked) */
};

/* One boundary of the batch, as each framework took it. */
struct cov_probe {
	unsigned int func, off;
	int okp_ret, k_ret;
	bool okp_moved, okp_opt, okp_ftrace, k_moved, k_opt, k_ftrace, k_aggr;
	char reason[OKP_REASON_MAX];
};

struct cov_stats {
	unsigned long funcs_done, boundaries, okp_refused, k_refused, moved, both, ftrace,
		ftrace_disagree, okp_opt, k_opt, both_opt, only_okp, only_k, neither;
	unsigned long k_flagged_batch, k_prepared_not_opt, k_infer_mismatch, batches;
	/* failures */
	unsigned long okp_byte_bad, okp_region_bad, okp_pending, okp_no_reason, okp_slots_full,
		text_mismatch, k_text_timeout, k_pending, splat;
	u64 okp_reg_ns, okp_wait_ns, okp_unreg_ns, k_reg_ns, k_wait_ns, k_unreg_ns;
};

/* sweep_coverage.c: the module parameters, the batch and the counts */
extern uint cov_gap, cov_batch_max;
extern struct cov_func *cov_funcs;	/* per sampled function */
extern struct cov_probe *cov_probes;	/* the batch's boundaries, cov_nprobes of them */
extern unsigned int cov_nprobes;
extern struct kprobe *cov_kprobes;	/* the kernel's probes, one per boundary */
extern struct kprobe **cov_k_armed;	/* those registered, cov_nk of them */
extern unsigned int cov_nk;
extern enum cov_step cov_phase;
extern struct cov_stats cov_st;
unsigned long cov_failures(void);
bool cov_splat(const char *when, const struct sweep_func *f, unsigned int off);
unsigned int cov_text_differs(bool report);
void cov_free_finished(void);
u8 cov_byte_at(unsigned long a);

/* sweep_coverage_kernel.c */
extern atomic_long_t cov_k_hits;
int cov_k_pre(struct kprobe *p, struct pt_regs *regs);

/* sweep_coverage_rules.c: the kernel's decoder and optimizer rules */
bool cov_decode(const struct sweep_func *f, unsigned int off, struct insn *insn);
int cov_scan_function(struct sweep_func *f, struct cov_func *c);
const char *cov_kernel_rule(const struct sweep_func *f, const struct cov_func *c,
			    unsigned int off, char *buf, size_t len);
const char *cov_symbol_before_end(const struct sweep_func *f, struct cov_func *c);

/* sweep_coverage_tally.c */
void cov_tally(void);
void cov_tally_exit(void);

#endif
