/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam, core -> kernel: the services okprobes' freestanding C++ core asks of the kernel,
 * implemented by the C glue with kernel primitives (each group names its files). The core
 * includes this and nothing of the kernel's. Plain C types only (seam/types.h).
 * The jump optimizer's own services are in seam/jump_services.h.
 */
#ifndef OKP_SEAM_KERNEL_SERVICES_H
#define OKP_SEAM_KERNEL_SERVICES_H

#include "seam/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Memory, logging, formatting (src/kernel/seam.c, src/kernel/text.c). --- */

/* Returns NULL on failure. Memory is zeroed. */
void *okp_seam_alloc(unsigned long size, enum okp_gfp gfp);
void okp_seam_free(void *ptr);
/* A large block (it may be virtually contiguous only): zeroed, may sleep; NULL on failure.
 * Freed by okp_seam_free_large() in process context. */
void *okp_seam_alloc_large(unsigned long size);
void okp_seam_free_large(void *ptr);
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

/* --- Registration support: process context, may sleep (src/kernel/text.c). --- */

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
/* Retired boosted slots wait for okp_core_collect_slots(), run by a worker the glue owns
 * (src/kernel/seam.c): defer schedules it (any process context, lock held or not); flush
 * schedules it and waits for it to finish (registry lock NOT held). */
void okp_seam_defer_slot_collection(void);
void okp_seam_flush_slot_collection(void);

/* --- Where a probe may go, and who else owns the text (src/kernel/text.c, symbols.c,
 * blacklist.c, kprobe_fence.c). --- */

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

/* --- Text patching (src/kernel/arch/<arch>/text_patch.c) and the slot area (text.c). --- */

/* Writes len bytes of kernel text at addr through the kernel's text patching (text_mutex held,
 * cores synchronised after). expect: the bytes that must be there now (NULL: don't check).
 * -EBUSY when the text changed under us. */
int okp_seam_patch_text(okp_addr_t addr, const void *bytes, const void *expect,
			unsigned long len);

/* The executable region slots live in (okprobes' own RX text, near the kernel). */
okp_addr_t okp_seam_slot_area(unsigned long *size);

/* --- Function entries through ftrace (src/kernel/ftrace.c). --- */

/* Function entry through ftrace: the ftrace call site covering addr (0 if none). */
okp_addr_t okp_seam_ftrace_site(okp_addr_t addr);
/* The first ftrace call site with a byte in [addr, addr + len), or 0: one lookup, where
 * okp_seam_ftrace_site() per byte would cost a symbol lookup for each byte that is not one. */
okp_addr_t okp_seam_ftrace_site_in(okp_addr_t addr, unsigned long len);
int okp_seam_ftrace_arm(okp_addr_t site, int ipmodify);
void okp_seam_ftrace_disarm(okp_addr_t site, int ipmodify);

/* --- Return probes (src/kernel/return.c). --- */

/* The running task (struct task_struct *), for return-probe instances. */
void *okp_seam_current_task(void);
/* num_possible_cpus(). */
unsigned int okp_seam_possible_cpus(void);

/*
 * Return probes on the kernel's rethook (src/kernel/rethook.c). unusable: NULL when return
 * probes registered now go through it, else why not (a static string). create: a pool of num
 * instances of instance_size bytes (okp_kretprobe_instance and its data) whose returns run
 * the probe's handler (okp_core_rethook_return_missed when it may not); NULL when out of memory. free: no handler runs after the next
 * grace period; the kernel frees the pool and nodes still out.
 *
 * entry: the pre handler of a return probe whose pool is a rethook's (the core registers it
 * as the entry probe's). The glue's, not the core's: every step of it (the kernel's pool, the
 * arch's prepare, current's list) is the kernel's inline code, and a call into the glue for
 * each was most of what the entry cost over the kernel's own kretprobe. It reads the
 * probe's pool through its head (below), takes a node, fills the instance, runs the entry
 * handler, hooks the frame and counts it in head.in_use; what is rare it leaves to the core
 * (okp_core_rethook_*).
 */
struct okp_return_pool_head {
	void *rethook;		/* the kernel's route (its struct rethook, or the arm64 kretprobe
				 * route's kretprobe), or NULL: okprobes' own stubs */
	unsigned int in_use;	/* atomic: instances in use now */
};
/* Unregister detached armed stubs of okprobes' own (registry lock held): their frames will
 * still return into okprobes' text, so the module must not go before they have (return.c). */
void okp_seam_return_stubs_detached(void);

struct okp_kretprobe_instance;
struct okp_kprobe;
struct pt_regs;
const char *okp_seam_rethook_unusable(void);
void *okp_seam_rethook_create(void *data, unsigned int num, unsigned long instance_size);
void okp_seam_rethook_free(void *rethook);
/* A grace period after okp_seam_rethook_free() (or a failed registration's): frees what the
 * kernel did not take over (the arm64 kretprobe route's pool; nothing for rethook). */
void okp_seam_rethook_release(void *rethook);
/* The name debugfs gives the kernel's route: "rethook", or "kretprobe" (arm64). */
const char *okp_seam_kernel_return_route(void);
int okp_seam_rethook_entry(struct okp_kprobe *kp, struct pt_regs *regs);

/* --- The trap (src/kernel/seam.c; arm64: src/kernel/arch/arm64/trap.c). --- */

/*
 * Provided by the glue of an arch whose trap hook tail-calls the core (a weak default answers
 * 1, "refused", elsewhere): a breakpoint at regs that no site of okprobes' explains. Returns
 * the hook's answer (arm64: handled if okprobes' breakpoint is gone from there, else an error
 * the kernel reports). Hit path.
 */
int okp_seam_break_not_ours(struct okp_regs *regs);

#ifdef __cplusplus
}
#endif

#endif /* OKP_SEAM_KERNEL_SERVICES_H */
