/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What okp_sweep's two modes share (sweep.c: the reliability sweep and the function intake;
 * sweep_coverage.c: the jump-optimization coverage mode, coverage=1).
 */
#ifndef OKP_SWEEP_H
#define OKP_SWEEP_H

#include <linux/seq_file.h>
#include <linux/types.h>

#define SLACK MAX_INSN_SIZE	/* bytes read past the end: the last instruction may cross it */

struct dentry;
struct okp_kprobe;
struct pt_regs;

struct sweep_func {
	unsigned long addr;
	unsigned int size;
	unsigned int decoded;	/* bytes the kernel decoder covered: size unless it stopped */
	unsigned int next;	/* next offset to try */
	unsigned int crossing;	/* the instruction running past the end, or ~0 */
	bool prepared;
	u8 *orig;		/* the text before any probe of this sweep, size + SLACK bytes */
	unsigned long *boundary; /* instruction starts, by the kernel's decoder */
	char *name;
	/* coverage mode */
	unsigned long *todo;	/* boundaries not yet measured */
	unsigned int left;	/* how many */
	unsigned int mark;	/* the last batch that probed it */
};

/* sweep.c, called with its mutex held */
unsigned int sweep_nfuncs(void);
struct sweep_func *sweep_func(unsigned int i);
int sweep_prepare(struct sweep_func *f);
void sweep_free_func(struct sweep_func *f);
unsigned int sweep_insn_at(const struct sweep_func *f, unsigned int off, unsigned int *len);
__printf(2, 3) void sweep_note(const struct sweep_func *f, const char *fmt, ...);
void sweep_show_notes(struct seq_file *m, const char *prefix);
void sweep_show_selection(struct seq_file *m, const char *prefix);
unsigned int sweep_new_splat(void);	/* taint/lockdep bits of a splat since the last call */
int sweep_count_pre(struct okp_kprobe *p, struct pt_regs *regs);
long sweep_hits(void);

void sweep_classify(const char *reason, char *out, size_t len);	/* a reason's class */
struct okp_kprobe **sweep_armed(unsigned int *n);	/* the batch's armed probes */
void sweep_lock(void);
void sweep_unlock(void);

/* sweep_return.c: return probes on every sampled function (debugfs "return") */
void return_init(struct dentry *dir);
void return_exit(void);

/* sweep_optimize.c: the batch's probes after the optimizer ran (debugfs "optimize") */
void optimize_init(struct dentry *dir);

/* sweep_decode.c: Zydis against the kernel's decoder on all vmlinux text (debugfs "decode") */
int decode_init(struct dentry *dir);
void decode_exit(void);
/* okprobes' test-only export (src/kernel/arch/x86/test_decode.c): Zydis' length, or -EILSEQ */
int okp_test_insn_length(const void *bytes, unsigned long avail);

/* sweep_coverage.c, called with sweep.c's mutex held */
int coverage_init(void);
void coverage_exit(void);
int coverage_run(void);		/* the next batch with okprobes: register, optimize, count */
int coverage_release(void);	/* okprobes' probes unregistered, text checked */
int coverage_kregister(void);	/* the same addresses with the kernel's register_kprobe */
int coverage_kwait(void);	/* until the kernel's optimizer has done them; count */
int coverage_krelease(void);	/* unregistered, until the kernel restored the text */
void coverage_state(struct seq_file *m);
void coverage_report(struct seq_file *m);

#endif
