/* SPDX-License-Identifier: GPL-2.0 */
/* What the benchmark's files share (okp_bench.c): parameters, error count, statistics. */
#ifndef OKP_BENCH_H
#define OKP_BENCH_H

#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/types.h>

#define MAX_ROUNDS 101

/* A benchmark knob: a read-only module parameter (set at insmod) with its description. */
#define BENCH_PARAM(name, type, desc)	\
	module_param(name, type, 0444);	\
	MODULE_PARM_DESC(name, desc)

extern unsigned long calls;
extern unsigned int rounds, warmup, reg_reps, reg_max;
extern unsigned int errors;

#define bench_error(fmt, ...) \
	do { errors++; pr_err("BENCH-ERROR " fmt "\n", ##__VA_ARGS__); } while (0)

const char *milli(char *buf, size_t len, s64 v);
u64 median(u64 *v, unsigned int n);
s64 ratio_milli(s64 a, s64 b);
void bench_report_states(const char *tn, const char *const *names, unsigned int nstates,
			 u64 (*times)[MAX_ROUNDS], u64 *med_ps, u64 *min_ps);
void bench_report_ratio(const char *tn, const char *mode, u64 (*times)[MAX_ROUNDS],
			const u64 *med_ps, const u64 *min_ps, unsigned int ok, unsigned int ke);
void *first_insn(const void *fn);
/* One call of fn for tests/bench/trace-path (module parameter trace_path), else nothing. */
void bench_trace_call(const char *tn, const char *sn, unsigned long (*fn)(unsigned long));

/* The two jump-optimization switches, /proc/sys/debug/<name>. */
#define KPROBES_OPT "kprobes-optimization"
#define OKP_OPT "okprobes-optimization"
int bench_sysctl_read(const char *name);
bool bench_sysctl_write(const char *name, int value);
/* The byte at addr is a jmp rel32: a jump-optimized probe's jump is in place. */
bool text_is_jump(const void *addr);
/* The kernel's kprobe kp (alone at its address) is jump-optimized, its jump written. */
bool kernel_kprobe_optimized(struct kprobe *kp);

/* okp_bench_ret.c */
void bench_returns(bool optimized);

/* okp_bench_opt.c */
void bench_opt_hits(void);
void bench_opt_registration(void);
bool bench_kernel_optimized_wait(struct kprobe *kp, const char *what);
void bench_kernel_optimizer_flush(void);

/* okp_bench_scale.c */
void bench_scale(void);

/* okp_bench_text.S */
unsigned long okp_bench_target_lea(unsigned long x);
unsigned long okp_bench_target_opt(unsigned long x);

#endif /* OKP_BENCH_H */
