/* SPDX-License-Identifier: GPL-2.0 */
/* What the benchmark's files share (okp_bench.c): parameters, error count, statistics. */
#ifndef OKP_BENCH_H
#define OKP_BENCH_H

#include <linux/printk.h>
#include <linux/types.h>

#define MAX_ROUNDS 101

extern unsigned long calls;
extern unsigned int rounds, warmup;
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

/* okp_bench_ret.c */
void bench_returns(void);

/* okp_bench_text.S */
unsigned long okp_bench_target_lea(unsigned long x);

#endif /* OKP_BENCH_H */
