/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okprobes public C API for client modules.
 *
 * It mirrors <linux/kprobes.h> name for name with an okp_ prefix, so a kprobes module ports
 * by renaming: struct kprobe -> struct okp_kprobe, register_kprobe() -> okp_register_kprobe(),
 * KPROBE_FLAG_DISABLED -> OKP_KPROBE_FLAG_DISABLED; or unmodified, with
 * -include okprobes/kprobes_compat.h, which maps the names. Semantics are those of
 * Documentation/trace/kprobes.rst; what okprobes adds (hit counts, misses by cause, the
 * reason of a refusal or downgrade, argument accessors) is marked below. See docs/api.md for
 * the differences that remain and the errno table.
 *
 * This header includes no kernel header: okprobes' freestanding core reads it too.
 */
#ifndef OKPROBES_OKPROBES_H
#define OKPROBES_OKPROBES_H

/* Bumped on any incompatible change of this header. */
#define OKP_API_VERSION 4

struct pt_regs;
struct okp_kprobe;

/* The arch's kprobe_opcode_t (u8 on x86-64, u32 on arm64 and riscv64), so that p->addr has
 * the type a kprobes module expects. */
#if defined(__x86_64__)
typedef unsigned char okp_kprobe_opcode_t;
#else
typedef unsigned int okp_kprobe_opcode_t;
#endif

/* Returns non-zero when it changed regs->ip: the probed instruction is then not executed. */
typedef int (*okp_kprobe_pre_handler_t)(struct okp_kprobe *, struct pt_regs *);
/* Runs after the probed instruction; flags is always 0 (as in kprobes). */
typedef void (*okp_kprobe_post_handler_t)(struct okp_kprobe *, struct pt_regs *,
					  unsigned long flags);

/*
 * flags: every kernel flag keeps its <linux/kprobes.h> value (src/kernel/layout_checks.c
 * checks them at build time); okprobes' own flags take bits from 16 up, which the kernel
 * does not use. GONE, OPTIMIZED, FTRACE and ON_FUNC_ENTRY are set by okprobes.
 */
#define OKP_KPROBE_FLAG_GONE 1      /* the probed module went away; the probe is inert */
#define OKP_KPROBE_FLAG_DISABLED 2  /* set before registering to register disabled */
#define OKP_KPROBE_FLAG_OPTIMIZED 4 /* x86-64, arm64: served by a jump to a detour, no trap */
#define OKP_KPROBE_FLAG_FTRACE 8    /* function entry served through ftrace */
#define OKP_KPROBE_FLAG_ON_FUNC_ENTRY 16 /* at a function's entry (after its landing pad) */
/*
 * okprobes addition: on a function-entry (ftrace) probe, take ftrace's exclusive IPMODIFY
 * right for the function (which livepatch also needs): registration then fails with -EBUSY
 * while another tool holds it, and no other tool gets it while the probe is registered. A
 * pre_handler's redirect (non-zero return) is obeyed with or without it, as the kernel's
 * kprobes obey it; the flag only makes the redirect exclusive (docs/api.md).
 */
#define OKP_KPROBE_FLAG_IPMODIFY 0x10000

/* The kernel's helpers on the flags, by the same rules. */
#ifdef __cplusplus
#define OKP_BOOL bool
#else
#define OKP_BOOL _Bool
#endif
/* okprobes' counterpart of nokprobe_inline: always inlined, so never a probe target apart
 * from the (annotated) function it is inlined into. */
#define okp_nokprobe_inline inline __attribute__((__always_inline__))

/* okprobes addition: why a handler did not run. */
enum okp_miss_cause {
	OKP_MISS_REENTRY = 0,	/* hit inside a handler or while stepping another probe */
	OKP_MISS_DISABLED = 1,	/* the probe is disabled but shares its address with others */
	OKP_MISS_FAULT = 2,	/* the instruction could not be emulated (unreadable memory) */
	OKP_MISS_NR
};

#define OKP_REASON_MAX 160

struct okp_kprobe {
	/* --- as struct kprobe --- */
	unsigned long nmissed;		/* all misses, whatever the cause */
	okp_kprobe_opcode_t *addr;	/* probe address; set by okprobes from symbol_name */
	const char *symbol_name;	/* or a symbol ("module:name" picks a module) ... */
	unsigned int offset;		/* ... and an offset into it */
	okp_kprobe_pre_handler_t pre_handler;
	okp_kprobe_post_handler_t post_handler;
	unsigned int flags;

	/* --- okprobes additions, read-only for the user --- */
	unsigned long nhit;			/* hits whose handlers ran */
	unsigned long nmissed_by[OKP_MISS_NR];	/* nmissed split by cause */

	/* --- private to okprobes --- */
	void *okp_core;			/* the core's record while registered */
	char okp_reason[OKP_REASON_MAX];	/* see okp_kprobe_reason() */
};

/* As kprobe_gone() and the rest: the probed module went away; disabled or gone; a jump to a
 * detour serves it; ftrace serves it. */
static okp_nokprobe_inline OKP_BOOL okp_kprobe_gone(const struct okp_kprobe *p)
{
	return p->flags & OKP_KPROBE_FLAG_GONE;
}
static okp_nokprobe_inline OKP_BOOL okp_kprobe_disabled(const struct okp_kprobe *p)
{
	return p->flags & (OKP_KPROBE_FLAG_DISABLED | OKP_KPROBE_FLAG_GONE);
}
static okp_nokprobe_inline OKP_BOOL okp_kprobe_optimized(const struct okp_kprobe *p)
{
	return p->flags & OKP_KPROBE_FLAG_OPTIMIZED;
}
static okp_nokprobe_inline OKP_BOOL okp_kprobe_ftrace(const struct okp_kprobe *p)
{
	return p->flags & OKP_KPROBE_FLAG_FTRACE;
}

int okp_register_kprobe(struct okp_kprobe *p);
void okp_unregister_kprobe(struct okp_kprobe *p);
/* Registers num probes; on an error, unregisters the ones registered before it. */
int okp_register_kprobes(struct okp_kprobe **kps, int num);
void okp_unregister_kprobes(struct okp_kprobe **kps, int num);
int okp_disable_kprobe(struct okp_kprobe *kp);
int okp_enable_kprobe(struct okp_kprobe *kp);

/*
 * okprobes addition: why the last registration of p was refused, or why the registered probe
 * is degraded (e.g. "not boosted: post_handler set", "module unloaded"). "" when there is
 * nothing to say. Valid until p is registered again.
 */
const char *okp_kprobe_reason(const struct okp_kprobe *p);

/*
 * okprobes addition: runs the jump optimizer's pending work now (optimizing the probes
 * registered since its last batch, unoptimizing the ones that must go back to a breakpoint)
 * and returns when it is done. Process context, may sleep. For tests and tools: probes are
 * optimized without it, by a delayed work item that batches registrations.
 */
void okp_wait_for_optimizer(void);

/*
 * okprobes addition, instead of jprobes: argument n (0-based) of the probed function at
 * its entry, by the calling convention (x86-64: rdi rsi rdx rcx r8 r9, then the stack).
 */
unsigned long okp_arg(struct pt_regs *regs, unsigned int n);

/* --- Return probes: as struct kretprobe (kprobes.rst, "Return Probes"). --- */

struct okp_kretprobe;
struct okp_kretprobe_instance;
typedef int (*okp_kretprobe_handler_t)(struct okp_kretprobe_instance *, struct pt_regs *);

/* okprobes addition: why a return handler did not run (okp_kretprobe.nmissed_by). */
enum okp_kretprobe_miss_cause {
	OKP_RP_MISS_POOL_EMPTY = 0,	/* all maxactive instances in use: raise maxactive */
	OKP_RP_MISS_REENTRY = 1,	/* entry hit inside a handler */
	OKP_RP_MISS_DISABLED = 2,	/* the return probe is disabled */
	OKP_RP_MISS_NO_STUB = 3,	/* every return stub held a suspended frame (stubs only) */
	OKP_RP_MISS_NR
};

/* As KRETPROBE_MAX_DATA_SIZE: a larger data_size is refused with -E2BIG. */
#define OKP_KRETPROBE_MAX_DATA_SIZE 4096

struct okp_kretprobe {
	/* --- as struct kretprobe --- */
	struct okp_kprobe kp;		/* set symbol_name or addr; okprobes owns the handlers */
	okp_kretprobe_handler_t handler;	/* at the function's return */
	okp_kretprobe_handler_t entry_handler;	/* at entry; non-zero: skip this instance */
	int maxactive;			/* instances; <= 0: max(10, 2 * possible CPUs) */
	int nmissed;			/* returns missed because all instances were in use */
	unsigned long data_size;	/* bytes of okp_kretprobe_instance.data per instance */

	/* --- okprobes additions, read-only for the user --- */
	unsigned long nmissed_by[OKP_RP_MISS_NR];	/* misses by cause */
	unsigned int peak;		/* most instances in use at once since registration */
	unsigned long nreclaimed;	/* instances of frames that never returned, taken back */

	/* --- private to okprobes --- */
	void *okp_pool;
};

struct okp_kretprobe_instance {
	struct okp_kretprobe *rp;	/* private: use okp_get_kretprobe() */
	unsigned long ret_addr;		/* the real return address */
	unsigned long frame;		/* the stack slot that held it (identifies the frame) */
	void *task;			/* the task that entered */
	char data[];			/* data_size bytes, shared by entry and return handler */
};

int okp_register_kretprobe(struct okp_kretprobe *rp);
void okp_unregister_kretprobe(struct okp_kretprobe *rp);
/* Registers num return probes; on an error, unregisters the ones registered before it. */
int okp_register_kretprobes(struct okp_kretprobe **rps, int num);
void okp_unregister_kretprobes(struct okp_kretprobe **rps, int num);
int okp_disable_kretprobe(struct okp_kretprobe *rp);
int okp_enable_kretprobe(struct okp_kretprobe *rp);
/* The return probe an instance belongs to (in its handlers). */
struct okp_kretprobe *okp_get_kretprobe(struct okp_kretprobe_instance *ri);
/* As get_kretprobe_retaddr(): the real return address of the instance's frame. */
static okp_nokprobe_inline unsigned long okp_get_kretprobe_retaddr(struct okp_kretprobe_instance *ri)
{
	return ri->ret_addr;
}
/*
 * As is_kretprobe_trampoline(): whether addr, read from a return-address slot or a stack
 * trace, is where okprobes diverted a return (one of its return stubs, each frame's own;
 * the kernel has one trampoline address for all). okp_kretprobe_find_ret_addr() maps it back.
 */
OKP_BOOL okp_is_kretprobe_trampoline(unsigned long addr);
/*
 * okprobes addition: while a return probe is armed on a frame, that frame's return address
 * on the stack is okprobes' return stub. For an address a stack trace shows, returns the
 * real return address if addr is one of okprobes' stubs holding one for a live frame of
 * task (NULL: current), else addr unchanged.
 */
unsigned long okp_kretprobe_find_ret_addr(void *task, unsigned long addr);
/* okprobes addition, for tests: return stubs in use now over all return probes (0 once all
 * are unregistered and every frame returned); frames hooked through the kernel's rethook
 * count too, while their probe is registered. */
unsigned long okp_return_stubs_in_use(void);
/*
 * okprobes addition: NULL when return probes registered now go through the kernel (its
 * rethook: CONFIG_RETHOOK, x86-64; or its kretprobe trampoline: arm64 with CONFIG_KRETPROBES),
 * where stack traces through a probed frame show the real callers, as for the kernel's
 * kretprobes; else why they use okprobes' own return stubs. debugfs return_probes says the same.
 */
const char *okp_return_stubs_reason(void);
/* okprobes addition: how return probes registered now return: "rethook", "kretprobe" (both
 * the kernel's) or "stubs" (okprobes' own), as debugfs list's return= says. */
const char *okp_return_route(void);
/* okprobes addition, for tests (the sysctl debug.okprobes-return-stubs): return probes
 * registered after on=1 use okprobes' stubs. Answers the previous setting. */
int okp_test_force_return_stubs(int on);

/*
 * --- Annotations: NOKPROBE_SYMBOL() and __kprobes, for okprobes' probes. ---
 *
 * A client's handlers run on okprobes' hit path: a probe on one of them would recurse. These
 * keep a function out of okprobes' probes (okp_register_kprobe() refuses it with -EINVAL,
 * "0x... is blacklisted: FN [OKP_NOKPROBE_SYMBOL]", and debugfs `blacklist` lists it), for
 * client modules loaded before or after okprobes; the entries go when the module unloads.
 * They need no <linux/kprobes.h> and work on a kernel without CONFIG_KPROBES.
 *
 * OKP_NOKPROBE_SYMBOL(fn): as NOKPROBE_SYMBOL(fn), after fn's definition. It emits a
 * pointer to fn named __okp_nokprobe_<fn>, which okprobes reads off the module's symbols
 * (for a module loaded before okprobes that takes CONFIG_KALLSYMS_ALL, as the kernel's own
 * NOKPROBE_SYMBOL names do; Debian's kernels have it). Taking fn's address also keeps it
 * out of line, as NOKPROBE_SYMBOL does.
 *
 * __okp_kprobes: as __kprobes, on a function's definition: the function goes into the
 * module's .kprobes.text, which okprobes blacklists whole (and the kernel's kprobes too).
 */
#define OKP_NOKPROBE_PREFIX "__okp_nokprobe_"
#define OKP_NOKPROBE_SYMBOL(fname)						\
	static void *const __okp_nokprobe_##fname				\
	__attribute__((__used__, __section__(".okp_nokprobe"))) = (void *)&fname
#define __okp_kprobes __attribute__((__section__(".kprobes.text")))

/* The API version of the loaded okprobes.ko; a client compares it with OKP_API_VERSION. */
unsigned int okp_api_version(void);

#endif /* OKPROBES_OKPROBES_H */
