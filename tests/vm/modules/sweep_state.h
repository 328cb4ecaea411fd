/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of okp_sweep's reliability sweep share (sweep.c: the module; sweep_intake.c:
 * the function list; sweep_batch.c: a batch; sweep_reasons.c: outcomes grouped). All of it
 * runs with sweep.c's mutex held (sweep_lock()), which serializes the shared state below.
 */
#ifndef OKP_SWEEP_STATE_H
#define OKP_SWEEP_STATE_H

#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/seq_file.h>
#include <linux/types.h>
#include "sweep.h"

/* What an outcome is counted as: a boundary refused, a non-boundary, a boundary's note. */
enum sweep_kind { K_BOUNDARY_REFUSED, K_NONBOUNDARY, K_ACCEPTED_NOTE, K_NR };

struct sweep_stats {
	unsigned long funcs_done, unreadable, decode_stops, offsets, boundaries, nonboundaries;
	unsigned long accepted, moved, nb_ilseq, nb_blacklisted, nb_hidden, b_refused, batches;
	unsigned long max_armed;
	unsigned long nb_accepted, nb_wrong, b_ilseq, b_no_reason, text_mismatch, b_crossing_ilseq;
	unsigned long splat;	/* a taint flag of a splat appeared, or lockdep turned off */
	u64 register_ns, unregister_ns, accept_ns, refuse_ns;
};

/* The probes that were hit most, over the whole sweep. */
#define NHOT 10
struct sweep_hot {
	unsigned long nhit;
	char where[KSYM_SYMBOL_LEN];
};

/* sweep.c: module parameter */
extern uint sweep_max_armed;

/* sweep_intake.c */
extern uint sweep_max_size;
extern const struct file_operations sweep_funcs_fops;
int intake_init(void);		/* checks its parameters */
void intake_exit(void);

/* sweep_batch.c */
extern struct sweep_stats sweep_st;
extern struct sweep_hot sweep_hot[NHOT];
extern struct okp_kprobe *sweep_kps;		/* max_armed of them */
extern struct okp_kprobe **sweep_armed_probes;	/* those armed, sweep_narmed of them */
extern unsigned int sweep_narmed;
void sweep_splat_init(void);	/* what counts as a splat from now on */
bool sweep_started(void);	/* a batch ran: the function list is fixed */
int sweep_run_batch(void);
void sweep_release_batch(void);

/* sweep_reasons.c */
void sweep_count_errno(enum sweep_kind kind, int err);
void sweep_count_reason(enum sweep_kind kind, int err, const char *reason,
			const struct sweep_func *f, unsigned int off);
void sweep_failure(const char *what, const struct sweep_func *f, unsigned int off, int err,
		   const char *reason);
void reasons_show(struct seq_file *m);
void reasons_exit(void);

#endif
