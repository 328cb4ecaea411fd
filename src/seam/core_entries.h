/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam, kernel -> core: the entry points okprobes' C++ core gives the kernel glue (the
 * API, debugfs and sysctl, module events, the trap, ftrace and return-stub paths). Each
 * returns 0 or a negative errno unless it says otherwise. Plain C types only (seam/types.h).
 * The jump optimizer's entries are in seam/jump_services.h.
 */
#ifndef OKP_SEAM_CORE_ENTRIES_H
#define OKP_SEAM_CORE_ENTRIES_H

#include "seam/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Registration and switches (core/registry.cpp, core/settings.cpp, core/runtime.cpp). --- */

struct okp_kprobe;
int okp_core_register_kprobe(struct okp_kprobe *kp);
void okp_core_unregister_kprobe(struct okp_kprobe *kp);
/* num probes, one RCU grace period for the batch. */
void okp_core_unregister_kprobes(struct okp_kprobe **kps, int num);
int okp_core_set_kprobe_disabled(struct okp_kprobe *kp, int disabled);
void okp_core_refused_show(void (*emit)(void *ctx, const char *line), void *ctx);
/*
 * debugfs explain: what registering a probe at symbol ("[mod:]name", or NULL for addr) +
 * offset would do, without registering: one line into out ("accepted ...: how it would run",
 * or "refused ... (errno): the registration's reason"); returns 0 or that errno.
 */
int okp_core_explain(const char *symbol, okp_addr_t addr, unsigned int offset, char *out,
		     unsigned long out_len);

int okp_core_init(void);
void okp_core_exit(void);
/* The slot-collection worker's body (process context, takes the registry lock itself). */
void okp_core_collect_slots(void);
/* Parses a 0/1 switch as written to debugfs/sysctl ("0", "1", optional newline). */
int okp_core_parse_switch(const char *buf, unsigned long len, int *value);
int okp_core_armed(void);
int okp_core_set_armed(int armed);
int okp_core_optimization(void);
int okp_core_set_optimization(int enabled);

/* --- The hit path (core/hit.cpp): interrupts or preemption off. --- */

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
/* The ftrace path: a function-entry site was reached; regs->ip == site. One entry per ftrace_ops
 * (plain, IPMODIFY), so that the core checks the site against a constant. */
void okp_core_on_ftrace(okp_addr_t site, struct okp_regs *regs, struct okp_cpu_state *cpu);
void okp_core_on_ftrace_ipmodify(okp_addr_t site, struct okp_regs *regs,
				 struct okp_cpu_state *cpu);

/* --- Return probes (core/return_probe.cpp, core/stub_life.cpp). --- */

struct okp_kretprobe;
struct okp_kretprobe_instance;
int okp_core_register_kretprobe(struct okp_kretprobe *rp);
void okp_core_unregister_kretprobe(struct okp_kretprobe *rp);
/* num return probes, one RCU grace period for the batch. */
void okp_core_unregister_kretprobes(struct okp_kretprobe **rps, int num);
int okp_core_set_kretprobe_disabled(struct okp_kretprobe *rp, int disabled);
unsigned long okp_core_kretprobe_find_ret_addr(void *task, unsigned long addr);
int okp_core_is_return_stub(unsigned long addr);
unsigned long okp_core_return_stubs_in_use(void);
/* Nonzero while a frame may still return through a detached stub (no lock). */
int okp_core_detached_stubs_live(void);
/* A task is being freed (RCU read side held): reclaim the instances its frames still hold. */
void okp_core_on_task_free(void *task);
/* A frame hooked through the kernel's rethook returned and src/kernel/rethook.c did not run
 * its handler (preemption off): a nested hit (depth > 0) or a disabled probe. */
void okp_core_rethook_return_missed(struct okp_kretprobe *rp, unsigned int depth);
/* okp_seam_rethook_entry's rare cases (preemption off): a return missed for cause; the node
 * taken had been recycled by the kernel without a return (its task was freed inside the
 * function); in_use went above the probe's peak. */
void okp_core_rethook_missed(struct okp_kretprobe *rp, int cause);
void okp_core_rethook_reclaimed(struct okp_kretprobe *rp);
void okp_core_rethook_peak(struct okp_kretprobe *rp, unsigned int in_use);
/* The return trampoline's callback (interrupts off): answers the real return address. */
unsigned long okp_core_on_return(struct okp_regs *regs, unsigned long index,
				 struct okp_cpu_state *cpu);

/* --- Blacklist, trap path, debugfs, module events (core/registry*.cpp, core/trap_path*.cpp). --- */

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

#endif /* OKP_SEAM_CORE_ENTRIES_H */
