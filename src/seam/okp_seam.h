/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam: the one interface between okprobes' freestanding C++ core and the kernel glue.
 *
 * Plain C types only. The core includes this and nothing from the kernel; the glue includes
 * this and implements the okp_seam_* functions with kernel primitives. Any kernel layout the
 * core reads (the register frame) is mirrored here and static-asserted against the kernel's
 * own definition in src/kernel/arch/<arch>/layout_checks.c, so a mismatch fails the build, not a probe.
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

/* Reads len bytes of kernel memory at src without faulting (copy_from_kernel_nofault):
 * 0 or -EFAULT. Safe on the probe-hit path. */
int okp_seam_read_nofault(void *dst, okp_addr_t src, unsigned long len);

/* printf-style formatting into buf (vsnprintf): for reasons that name addresses. */
void okp_seam_format(char *buf, unsigned long len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void okp_seam_vformat(char *buf, unsigned long len, const char *fmt, __builtin_va_list args)
	__attribute__((format(printf, 3, 0)));

/* --- Probe registration support (process context, may sleep). --- */

/* The one registration lock: serialises every writer of the probe table (see core/registry). */
void okp_seam_registry_lock(void);
void okp_seam_registry_unlock(void);
/* Proof for a member that demands the lock held: lockdep_assert_held() on kernels with lockdep
 * (a splat names the caller), nothing otherwise. */
void okp_seam_assert_registry_locked(void);
/* Waits until no CPU is inside the trap path (RCU) / no task can still be preempted inside
 * a boosted slot (RCU-tasks; called after synchronize_rcu, so a no-op without preemption). */
void okp_seam_synchronize_rcu(void);
void okp_seam_synchronize_tasks(void);
/* A span of text [start, start + length): a jump's region. */
struct okp_text_span {
	okp_addr_t start;
	unsigned long length;
};
/*
 * Jump optimization (x86-64): proves at one instant that no task is stopped strictly inside
 * any of spans[0..n) (sorted here), nor in okprobes' slot area, by reading every task's stack
 * with the reliable unwinder in stop_machine() (arch/x86/task_snapshot.c). The caller has
 * published the regions' copies and waited for an RCU grace period, so no context can enter
 * a region's inside any more. 1: proven, the jumps may be written now; 0: not proven (a task
 * inside, a stack the unwinder cannot read, PREEMPT_RT, no reliable unwinder; said in debugfs
 * optimizer_waits), the caller waits for tasks-RCU. Process context, no lock held.
 */
int okp_seam_tasks_outside(struct okp_text_span *spans, unsigned long n);
/* Retired boosted slots wait for okp_core_collect_slots(), run by a worker the glue owns:
 * defer schedules it (any process context, lock held or not); flush schedules it and waits
 * for it to finish (registry lock NOT held). */
void okp_seam_defer_slot_collection(void);
void okp_seam_flush_slot_collection(void);

/* Where a probe may go, as the glue found it. */
struct okp_text_info {
	okp_addr_t func_start;		/* start of the containing symbol */
	unsigned long func_size;	/* its size (0 if unknown) */
	void *module;			/* struct module * owning the text, or NULL for vmlinux */
	int module_init_text;		/* addr is in the module's __init text */
	char symbol[128];		/* "name+0xoff" */
	char module_name[56];		/* "" for vmlinux */
};

/*
 * Resolves kp->symbol_name + offset or checks kp->addr, and describes the text there. The
 * glue checks everything that needs the kernel: known text, ambiguity, blacklist, other
 * patching users (jump label, static call, alternative, BUG table, exception table). On
 * refusal returns -errno with reason filled.
 */
int okp_seam_locate(const char *symbol_name, okp_addr_t addr, unsigned int offset,
		    okp_addr_t *resolved, struct okp_text_info *info, char *reason,
		    unsigned long reason_len);
/* Who else patches [addr, addr+len): "jump label", "static call", "alternative", "BUG/WARN
 * site", "exception-table fixup"; NULL when nobody. */
const char *okp_seam_text_owner(okp_addr_t addr, unsigned long len);
/* The first byte of [addr, addr + len) holding a kernel kprobe (its int3, or the start of its
 * optimized jump), or 0: a detour region's reason names it. */
okp_addr_t okp_seam_kernel_kprobe_in(okp_addr_t addr, unsigned long len);
/* Keeps the kernel's own kprobes off [start, end) through an entry of their blacklist
 * (register_kprobe() then says -EINVAL): the bytes their decoder would misread after okprobes'
 * patch at start (kprobe_fence.c). handle: the one returned before for this site, whose end
 * grows to end (NULL: a new entry). Returns the handle; NULL when the kernel has no kprobes
 * or none could be added (said in the log). Process context; not under text_mutex. */
void *okp_seam_fence_kernel_kprobes(void *handle, okp_addr_t start, okp_addr_t end);
void okp_seam_unfence_kernel_kprobes(void *handle);
/* The function containing addr in kernel or module text (init text excluded): its start,
 * size and name; for a call veneer (an arm64 module's PLT entry), its target's. 0, or -ENOENT
 * when addr is not in a known function. Process context. */
int okp_seam_function_at(okp_addr_t addr, okp_addr_t *start, unsigned long *size, char *name,
			 unsigned long name_len);
/* Addresses of vmlinux functions by name, in one pass over kallsyms; 0 for a name not found
 * (or ""). Process context. */
void okp_seam_resolve_functions(const char *const *names, okp_addr_t *addrs, unsigned int n);
/* Pins/unpins the module owning probed text while we patch it. */
int okp_seam_module_get(void *module);
void okp_seam_module_put(void *module);

/* Writes len bytes of kernel text at addr through the kernel's text patching (text_mutex held,
 * cores synchronised after). expect: the bytes that must be there now (NULL: don't check).
 * -EBUSY when the text changed under us. */
int okp_seam_patch_text(okp_addr_t addr, const void *bytes, const void *expect,
			unsigned long len);
/*
 * Jump optimization's batched patching (x86-64): the caller takes text_mutex once, writes
 * several sites with okp_seam_poke_text (no sync; expect as for okp_seam_patch_text), then
 * okp_seam_text_sync() makes every CPU see all of them before any further stage.
 */
void okp_seam_text_lock(void);
void okp_seam_text_unlock(void);
int okp_seam_poke_text(okp_addr_t addr, const void *bytes, const void *expect, unsigned long len);
void okp_seam_text_sync(void);
/* okp_detour_entry's and okp_detour_post_entry's addresses (the detours' common entries,
 * x86-64), 0 on other arches. with_post: the entry for a detour whose copy calls the post
 * entry (okp_detour_entry_with_post), which takes no common-hit shortcut. */
okp_addr_t okp_seam_detour_entry(int with_post);
okp_addr_t okp_seam_detour_post_entry(void);
/* An exception-table entry: the instruction that may fault, and its fixup. */
struct okp_extable_entry {
	okp_addr_t insn;
	okp_addr_t fixup;
};
/* The kernel's indirect-branch thunks (x86 retpolines): at most max ranges [start, end) written
 * to out, their number returned (0: none, or not x86). Registry lock held. */
struct okp_addr_range {
	okp_addr_t start;
	okp_addr_t end;
};
unsigned int okp_seam_indirect_thunks(struct okp_addr_range *out, unsigned int max);
/* The entries whose instruction or fixup lies in [start, end) (vmlinux and modules): at most
 * max written to out; returns how many there are (more than max: out is partial), or -ENOENT
 * when this kernel's exception table cannot be found. */
int okp_seam_extable_in(okp_addr_t start, okp_addr_t end, struct okp_extable_entry *out,
			unsigned int max);
/* The jump optimizer's work item (see core/optimizer): defer runs okp_core_run_optimizer()
 * after a short delay that batches registrations; flush runs it now and waits (registry lock
 * NOT held); cancel waits for a running one and drops a pending one (unload). */
void okp_seam_defer_optimizer(void);
void okp_seam_flush_optimizer(void);
void okp_seam_cancel_optimizer(void);

/* The executable region slots live in (okprobes' own RX text, near the kernel). */
okp_addr_t okp_seam_slot_area(unsigned long *size);

/* Function entry through ftrace: the ftrace call site covering addr (0 if none). */
okp_addr_t okp_seam_ftrace_site(okp_addr_t addr);
/* The first ftrace call site with a byte in [addr, addr + len), or 0: one lookup, where
 * okp_seam_ftrace_site() per byte would cost a symbol lookup for each byte that is not one. */
okp_addr_t okp_seam_ftrace_site_in(okp_addr_t addr, unsigned long len);
int okp_seam_ftrace_arm(okp_addr_t site, int ipmodify);
void okp_seam_ftrace_disarm(okp_addr_t site, int ipmodify);

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

/* The running task (struct task_struct *), for return-probe instances. */
void *okp_seam_current_task(void);
/* num_possible_cpus(). */
unsigned int okp_seam_possible_cpus(void);

/* --- Provided by the core, called by the glue. Return 0 or a negative errno. --- */

struct okp_kprobe;
int okp_core_register_kprobe(struct okp_kprobe *kp);
void okp_core_unregister_kprobe(struct okp_kprobe *kp);
/* num probes, one RCU grace period for the batch. */
void okp_core_unregister_kprobes(struct okp_kprobe **kps, int num);
int okp_core_set_kprobe_disabled(struct okp_kprobe *kp, int disabled);
void okp_core_refused_show(void (*emit)(void *ctx, const char *line), void *ctx);

int okp_core_init(void);
void okp_core_exit(void);
/* The jump optimizer's worker body (process context, takes the registry lock itself). */
void okp_core_run_optimizer(void);
/* The slot-collection worker's body (process context, takes the registry lock itself). */
void okp_core_collect_slots(void);
/* Parses a 0/1 switch as written to debugfs/sysctl ("0", "1", optional newline). */
int okp_core_parse_switch(const char *buf, unsigned long len, int *value);
int okp_core_armed(void);
int okp_core_set_armed(int armed);
int okp_core_optimization(void);
int okp_core_set_optimization(int enabled);
/*
 * The trap path: returns 1 when the breakpoint at regs was okprobes' (regs updated). cpu is
 * this CPU's state; the caller runs with interrupts off, so it stays this CPU's.
 */
int okp_core_on_breakpoint(struct okp_regs *regs, struct okp_cpu_state *cpu);
/*
 * The same, for a trap hook that tail-calls it (arm64's break hook), so that the hook adds no
 * frame to a hit: returns 0 when okprobes took the breakpoint, 1 when it is okprobes' but
 * could not be taken (a simulated load faulted: the kernel reports it), and otherwise (no
 * site of okprobes' there) okp_seam_break_not_ours(regs)'s answer, tail-called.
 */
int okp_core_on_break_hook(struct okp_regs *regs, struct okp_cpu_state *cpu);
/*
 * The hook of a trap only a step's end raises (arm64's step BRK immediate): the slot ran, resume
 * after the probed instruction and run the post handlers. Answers as okp_core_on_break_hook.
 */
int okp_core_on_step_break_hook(struct okp_regs *regs, struct okp_cpu_state *cpu);
/*
 * Provided by the glue of an arch whose trap hook tail-calls the core (a weak default answers
 * 1, "refused", elsewhere): a breakpoint at regs that no site of okprobes' explains. Returns
 * the hook's answer (arm64: handled if okprobes' breakpoint is gone from there, else an error
 * the kernel reports). Hit path.
 */
int okp_seam_break_not_ours(struct okp_regs *regs);
/* A jump-optimized probe was reached: okp_detour_entry saved regs and calls this with
 * preemption off (interrupts as at the probe). copy: the detour's relocated copy (the entry's
 * return address). Returns 0 to go on in copy (regs->ip is then not read), non-zero to go on
 * at regs->ip (where a handler sent it, or copy with the flags a post handler's step needs). */
int okp_core_on_detour(okp_addr_t copy, struct okp_regs *regs, struct okp_cpu_state *cpu);
/* The common one of those hits, which okp_detour_entry tells apart itself: this CPU had no
 * frame open (the entry moved its depth from 0 to 1 and moves it back to 0 after the call) and
 * the detour calls no post entry. site: the core's site the detour names (its word before the
 * call, untagged then). Runs the pre handlers only; returns as okp_core_on_detour. */
int okp_core_on_detour_idle(okp_addr_t site, struct okp_regs *regs);
/* A jump-optimized probe with a post_handler ran its first instruction: the post entry saved
 * regs (interrupts still off) and calls this; ret is its return address (the detour's data).
 * On return regs->ip is where the copy goes on. */
void okp_core_on_detour_post(okp_addr_t ret, struct okp_regs *regs, struct okp_cpu_state *cpu);
/* The ftrace path: a function-entry site was reached; regs->ip == site. One entry per ftrace_ops
 * (plain, IPMODIFY), so that the core checks the site against a constant. */
void okp_core_on_ftrace(okp_addr_t site, struct okp_regs *regs, struct okp_cpu_state *cpu);
void okp_core_on_ftrace_ipmodify(okp_addr_t site, struct okp_regs *regs,
				 struct okp_cpu_state *cpu);
/* Return probes (core/return_probe.cpp). */
struct okp_kretprobe;
int okp_core_register_kretprobe(struct okp_kretprobe *rp);
void okp_core_unregister_kretprobe(struct okp_kretprobe *rp);
/* num return probes, one RCU grace period for the batch. */
void okp_core_unregister_kretprobes(struct okp_kretprobe **rps, int num);
int okp_core_set_kretprobe_disabled(struct okp_kretprobe *rp, int disabled);
unsigned long okp_core_kretprobe_find_ret_addr(void *task, unsigned long addr);
int okp_core_is_return_stub(unsigned long addr);
unsigned long okp_core_return_stubs_in_use(void);
/* A task is being freed (RCU read side held): reclaim the instances its frames still hold. */
void okp_core_on_task_free(void *task);
/* The return trampoline's callback (interrupts off): answers the real return address. */
unsigned long okp_core_on_return(struct okp_regs *regs, unsigned long index,
				 struct okp_cpu_state *cpu);
/* Blacklist, fed by the glue at load and on module events. source is a static string. */
int okp_core_blacklist_add(okp_addr_t start, okp_addr_t end, const char *symbol,
			   const char *source, const void *owner);
void okp_core_blacklist_remove_owner(const void *owner);
/* Blacklists every function on the trap path of the running kernel (core/trap_path.h),
 * walking from the arch's trap-entry functions and own_entries (okprobes' own entry points). */
int okp_core_derive_trap_path(const okp_addr_t *own_entries, unsigned int n_own);
/* 0xSTART-0xEND\tSYMBOL\t[SOURCE] lines, streamed to emit (debugfs). */
void okp_core_blacklist_show(void (*emit)(void *ctx, const char *line), void *ctx);
/* One line per probe, as debugfs list shows it. */
void okp_core_list_show(void (*emit)(void *ctx, const char *line), void *ctx);
/* A module is going away: its probes become [GONE] and never touch its text again. */
void okp_core_module_going(const void *module);
/* A module's init finished: probes on its __init text are killed. */
void okp_core_module_live(const void *module);

/* Self-check of the arch decoder at load; 0 or -errno with a log line saying why. */
int okp_arch_decoder_selfcheck(void);

#ifdef __cplusplus
}
#endif

#endif /* OKP_SEAM_H */
