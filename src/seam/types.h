/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam's plain data: what the core and the kernel glue pass each other (seam/okp_seam.h
 * says how the seam is split). Any kernel layout the core reads (the register frame) is
 * mirrored here and static-asserted against the kernel's own definition in
 * src/kernel/arch/<arch>/layout_checks.c, so a mismatch fails the build, not a probe.
 */
#ifndef OKP_SEAM_TYPES_H
#define OKP_SEAM_TYPES_H

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

/* Where a probe may go, as the glue found it. */
struct okp_text_info {
	okp_addr_t func_start;		/* start of the containing symbol */
	unsigned long func_size;	/* its size (0 if unknown) */
	void *module;			/* struct module * owning the text, or NULL for vmlinux */
	int module_init_text;		/* addr is in the module's __init text */
	char symbol[128];		/* "name+0xoff" */
	char module_name[56];		/* "" for vmlinux */
};

/* Per-CPU hit state the trap path keeps (see core/hit.cpp); plain storage owned by the glue. */
#define OKP_CPU_STACK_DEPTH 6
struct okp_cpu_frame {
	void *site;
	unsigned long saved_flags;
	unsigned int kind;
};
struct okp_cpu_state {
	unsigned int depth;
	struct okp_cpu_frame frames[OKP_CPU_STACK_DEPTH];
};
/* The glue passes this CPU's state into the hit path (okp_core_on_breakpoint/ftrace). */

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

#ifdef __cplusplus
}
#endif

#endif /* OKP_SEAM_TYPES_H */
