/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam: the one interface between okprobes' freestanding C++ core and the kernel glue.
 *
 * Plain C types only. The core includes this and nothing from the kernel; the glue includes
 * this and implements the okp_seam_* functions with kernel primitives. Any kernel layout the
 * core reads (the register frame) is mirrored here and static-asserted against the kernel's
 * own definition in src/kernel/layout_checks.c, so a mismatch fails the build, not a probe.
 */
#ifndef OKP_SEAM_H
#define OKP_SEAM_H

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned long okp_addr_t;

/* Allocation context, always named by the caller: the core never guesses whether it may sleep. */
enum okp_gfp {
	OKP_GFP_KERNEL = 0, /* may sleep: registration paths only */
	OKP_GFP_ATOMIC = 1, /* must not sleep: never used on the probe-hit path */
};

enum okp_log_level {
	OKP_LOG_ERR = 3,
	OKP_LOG_WARNING = 4,
	OKP_LOG_INFO = 6,
	OKP_LOG_DEBUG = 7,
};

/* --- Provided by the glue (src/kernel/seam.c), called by the core. --- */

/* Returns NULL on failure. Memory is zeroed. */
void *okp_seam_alloc(unsigned long size, enum okp_gfp gfp);
void okp_seam_free(void *ptr);
/* One log line, prefixed "okprobes: " by the glue. */
void okp_seam_log(enum okp_log_level level, const char *msg);
/* An invariant of the core is broken: the glue WARNs once and the caller must fail safe. */
void okp_seam_invariant_failed(const char *what, const char *file, int line);

/* --- The register frame the core reads on a hit, mirrored from struct pt_regs. --- */

#if defined(__x86_64__)
struct okp_regs {
	unsigned long r15, r14, r13, r12, bp, bx;
	unsigned long r11, r10, r9, r8, ax, cx, dx, si, di;
	unsigned long orig_ax;
	unsigned long ip, cs, flags, sp, ss;
};
#elif defined(__aarch64__)
struct okp_regs {
	unsigned long regs[31];
	unsigned long sp, pc, pstate;
};
#elif defined(__riscv) && __riscv_xlen == 64
struct okp_regs {
	unsigned long epc, ra, sp, gp, tp, t0, t1, t2, s0, s1;
	unsigned long a0, a1, a2, a3, a4, a5, a6, a7;
	unsigned long s2, s3, s4, s5, s6, s7, s8, s9, s10, s11;
	unsigned long t3, t4, t5, t6, status, badaddr, cause, orig_a0;
};
#else
#error "okprobes: unsupported architecture"
#endif

/* --- Provided by the core, called by the glue. Return 0 or a negative errno. --- */

int okp_core_init(void);
void okp_core_exit(void);
/* Parses a 0/1 switch as written to debugfs/sysctl ("0", "1", optional newline). */
int okp_core_parse_switch(const char *buf, unsigned long len, int *value);
int okp_core_armed(void);
int okp_core_set_armed(int armed);
int okp_core_optimization(void);
int okp_core_set_optimization(int enabled);
/* Self-check of the arch decoder at load; 0 or -errno with a log line saying why. */
int okp_arch_decoder_selfcheck(void);

#ifdef __cplusplus
}
#endif

#endif /* OKP_SEAM_H */
