/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the glue's files. */
#ifndef OKP_GLUE_H
#define OKP_GLUE_H

#include <linux/percpu.h>
#include <linux/types.h>
#include <linux/version.h>

#include "seam/okp_seam.h"

/* Each CPU's hit state (seam.c), handed to the core on every hit by trap.c and ftrace.c. */
DECLARE_PER_CPU(struct okp_cpu_state, okp_cpu_state);

struct module;
struct task_struct;
struct dentry;
struct bug_entry;
struct exception_table_entry;

/*
 * The kallsyms walkers' callbacks: 6.2 dropped their struct module * argument and gave
 * module_kallsyms_on_each_symbol() the name of the one module to walk (NULL: every module).
 * OKP_KSYM_VISITOR(fn) defines a callback of this kernel's type; okp_module_kallsyms_walk()
 * walks one module's symbols (or every module's) either way.
 */
#define OKP_KSYM_NO_MODULE_ARG (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0))
#if OKP_KSYM_NO_MODULE_ARG
typedef int (*okp_ksym_fn)(void *, const char *, unsigned long);
#define OKP_KSYM_VISITOR(fn) int fn(void *data, const char *name, unsigned long addr)
#else
typedef int (*okp_ksym_fn)(void *, const char *, struct module *, unsigned long);
#define OKP_KSYM_VISITOR(fn) \
	int fn(void *data, const char *name, struct module *mod, unsigned long addr)
#endif

/*
 * Kernel internals okprobes uses on every arch, found in /proc/kallsyms at load
 * (kernel_internals.c; an arch's own are in its folder). Each function was verified to be what
 * its name says before it is stored; NULL means "not usable here".
 */
struct okp_ksyms {
	int (*kallsyms_on_each_symbol)(okp_ksym_fn fn, void *data);
#if OKP_KSYM_NO_MODULE_ARG
	int (*module_kallsyms_on_each_symbol)(const char *modname, okp_ksym_fn fn, void *data);
#else
	int (*module_kallsyms_on_each_symbol)(okp_ksym_fn fn, void *data);
#endif
	struct module *(*__module_text_address)(unsigned long addr);
	int (*jump_label_text_reserved)(void *start, void *end);
	int (*static_call_text_reserved)(void *start, void *end);
	struct bug_entry *(*find_bug)(unsigned long bugaddr);
	const struct exception_table_entry *(*search_exception_tables)(unsigned long addr);
	unsigned long (*ftrace_location)(unsigned long ip);
	unsigned long (*ftrace_location_range)(unsigned long start, unsigned long end);
	bool (*within_kprobe_blacklist)(unsigned long addr);	/* CONFIG_KPROBES kernels */
	unsigned long text_mutex;
	unsigned long kprobe_table;	/* the kernel's kprobes' hash, read-only */
	unsigned long kprobe_blacklist, kprobe_mutex;	/* kprobe_fence.c adds to that list */
	unsigned long register_kprobe;	/* only looked up: nonzero iff the kernel has kprobes */
	unsigned long _stext, _etext, _sinittext, _einittext;
	unsigned long __start___jump_table, __stop___jump_table;
	unsigned long __kprobes_text_start, __kprobes_text_end;
	unsigned long __entry_text_start, __entry_text_end;
	unsigned long __irqentry_text_start, __irqentry_text_end;
	unsigned long __softirqentry_text_start, __softirqentry_text_end;
	unsigned long __noinstr_text_start, __noinstr_text_end;
	/* The kernel's rethook (CONFIG_RETHOOK): return probes whose frames its unwinders
	 * recover (rethook.c). Not exported; typed there, where <linux/rethook.h> is. */
	void *rethook_alloc, *rethook_free, *rethook_try_get, *rethook_hook, *rethook_recycle;
	void *rethook_add_node;	/* before 6.7 (objpool): nodes are added one by one */
	unsigned long arch_rethook_trampoline;
	/* The kernel's kretprobe trampoline, where okprobes' return probes use it (no rethook,
	 * CONFIG_KRETPROBES: kretprobe_route.c), and (6.7+) the release of a kretprobe's
	 * objpool, which the kernel calls after okprobes may be gone. */
	unsigned long __kretprobe_trampoline;
	void *kretprobe_fini_pool;
};
extern struct okp_ksyms okp_ksyms;

/* One kernel symbol to pick from /proc/kallsyms into okp_ksyms. */
struct okp_ksym_want {
	const char *name;
	unsigned long *where;
	bool called;	/* okprobes calls it: verify it is that function and callable */
};

/* A function or a data symbol, by the name of its field n in ksyms (okp_ksyms or an arch's). */
#define OKP_WANT_FN(ksyms, n) { #n, (unsigned long *)&(ksyms).n, true }
#define OKP_WANT_DATA(ksyms, n) { #n, &(ksyms).n, false }
#define WANT_FN(n) OKP_WANT_FN(okp_ksyms, n)
#define WANT_DATA(n) OKP_WANT_DATA(okp_ksyms, n)

/* kernel_internals.c: reads okp_ksyms (and the arch's own) at load. */
int okp_symbols_init(void);
/* function_extent.c: the function around addr, its name, start and size. */
bool okp_symbol_extent(unsigned long addr, char *name, size_t name_len, unsigned long *start,
		       unsigned long *size);
/* symbol_lookup.c: a user's "name" or "module:name" to its one address; is addr text? */
int okp_resolve_symbol(const char *symbol, unsigned long *addr, char *reason, size_t reason_len);
bool okp_is_text(unsigned long addr);
/* explain.c: debugfs explain, a registration's verdict without registering. */
void okp_explain_debugfs(struct dentry *dir);
/*
 * symbol_names.c: the length of name without its compiler clone suffixes (".isra.N",
 * ".constprop.N", ".part.N", ".cold", ".llvm.N", chained), strlen(name) if it has none; *cold
 * when one of them is ".cold". The edit distance of a and b if at most max, else max + 1
 * (names longer than OKP_NEAR_MISS_MAX_LEN are never near).
 */
#define OKP_NEAR_MISS_MAX_LEN 96
size_t okp_clone_stem_length(const char *name, bool *cold);
unsigned int okp_edit_distance_within(const char *a, size_t alen, const char *b, size_t blen,
				      unsigned int max);

/* Slots live in okprobes' own text (arch/<arch>/slots.S): read-only and executable. */
extern const char okp_slot_area_start[], okp_slot_area_end[];

/*
 * Is the text at addr still expect (len <= OKP_TEXT_EXPECT_MAX; NULL: anything is)? 0, or
 * -EBUSY with a log line (expected_text.c). The arch's text patching asks before it writes,
 * text_mutex held or the machine stopped.
 */
#define OKP_TEXT_EXPECT_MAX 32
int okp_text_is(okp_addr_t addr, const void *expect, unsigned long len);

/* Between two probes of a batch: callers waiting for the registry lock go first (registry_lock.c). */
void okp_registry_let_waiters_in(void);

/* Is any byte of [addr, addr + len) a jump label's (jump_label_index.c)? */
void okp_jump_label_index_init(void);
void okp_jump_label_index_exit(void);
bool okp_jump_label_in(unsigned long addr, unsigned long len);
/* The size of the jump label at code, where the arch has no fixed JUMP_LABEL_NOP_SIZE. */
unsigned int okp_arch_jump_entry_size(unsigned long code);

int okp_blacklist_init(void);
/* Adds [start, end) to the blacklist (nothing when empty), with its name and source. */
void okp_blacklist_range(unsigned long start, unsigned long end, const char *name,
			 const char *source, const void *owner);
/* Has the running kernel kprobes of its own (CONFIG_KPROBES)? Known once symbols are read
 * (kernel_kprobes.c). */
bool okp_kernel_has_kprobes(void);
/* okprobes' own entry points from a breakpoint trap, ftrace and the return stubs (0: none):
 * roots of the trap path the blacklist derives (core/trap_path.h). */
okp_addr_t okp_trap_entry_point(void);
okp_addr_t okp_ftrace_entry_point(void);
okp_addr_t okp_ftrace_ipmodify_entry_point(void);
/*
 * Where ftrace hands its callbacks ftrace_regs and no pt_regs (DYNAMIC_FTRACE_WITH_ARGS without
 * WITH_REGS), ftrace.c fills a pt_regs from them for the handlers (what ftrace saved; every
 * other field zero) and the arch glue puts back what its ftrace restores on the way out. Hit
 * path: notrace, no locks.
 */
struct ftrace_regs;
struct pt_regs;
void okp_arch_ftrace_regs_out(const struct pt_regs *regs, struct ftrace_regs *fregs);
okp_addr_t okp_return_entry_point(void);
okp_addr_t okp_rethook_pre_handler_entry_point(void);
/* Before a change of kernel text that stops every CPU (stop_machine, here or in ftrace), in
 * process context with no text lock held: what the arch wants finished first (riscv64: the
 * queued frees of modules' init memory, src/kernel/arch/riscv/text_patch.c); a weak no-op
 * elsewhere. */
void okp_arch_before_text_stop(void);
/* Glue the core tail-calls from a breakpoint trap (okp_seam_break_not_ours, see
 * okp_core_on_break_hook), and a second trap entry of the arch's (a step's own break hook):
 * roots of the trap path beside okp_trap_entry_point; 0 (the weak defaults in blacklist.c):
 * none. */
okp_addr_t okp_trap_not_ours_entry_point(void);
okp_addr_t okp_trap_step_entry_point(void);
void okp_blacklist_module(struct module *mod);
int okp_trap_init(void);
void okp_trap_exit(void);
int okp_modules_init(void);
void okp_modules_exit(void);
/* Return probes: reclaim the instances of freed tasks (sched_process_free). */
void okp_return_init(void);
void okp_return_exit(void);
/* sysctl debug.okprobes-return-stubs: return probes registered now use okprobes' stubs. */
extern int okp_force_return_stubs;
/* rethook.c: decides, at load, whether return probes go through the kernel's rethook. */
void okp_rethook_init(void);
/* kretprobe_route.c, where it serves: NULL when return probes can go through the kernel's
 * kretprobe trampoline, else why not. */
const char *okp_kretprobe_route_init(void);
/* NULL, or why the route is switched off now (okprobes.kretprobe_route=0). */
const char *okp_kretprobe_route_off(void);
/* The kernel's trampoline (rethook's, or kretprobes') where okprobes' return probes use it,
 * else 0. */
unsigned long okp_rethook_trampoline(void);
/* The rethook handler: a root of the trap path, as the return stubs' handler is. */
okp_addr_t okp_rethook_entry_point(void);

int okp_debugfs_init(void);
void okp_debugfs_exit(void);
#ifdef OKP_JUMP_PROBES
/*
 * Jump probes' glue (seam/jump_services.h), only on an arch that has them (x86-64:
 * src/kernel/arch/x86/): the detours' entries, roots of the trap path; debugfs
 * optimizer_waits; the test hook of the task look (KUnit okprobes_task_snapshot).
 */
okp_addr_t okp_detour_entry_point(void);
okp_addr_t okp_detour_post_entry_point(void);
/* riscv64's pre entry for detours with a post entry (0 elsewhere: a weak default). */
okp_addr_t okp_detour_entry_with_post_point(void);
void okp_task_snapshot_debugfs(struct dentry *dir);
int okp_test_tasks_snapshot(struct okp_text_span *spans, unsigned long n, char *why,
			    size_t why_len);
#endif
int okp_sysctl_init(void);
void okp_sysctl_exit(void);

/*
 * Per arch, in src/kernel/arch/<arch>/ (Kbuild picks the folder; what two arches share is in
 * src/kernel/arch/common/): the okp_trap_* functions above, okp_seam_patch_text (okp_seam.h),
 * okp_arg (okprobes.h), the slot area (slots.S), and these hooks the neutral files call.
 */
/* For kernel_internals.c: the kernel symbols only this arch uses (*n of them), read with the
 * rest. */
const struct okp_ksym_want *okp_arch_wanted_symbols(size_t *n);
/* For kernel_internals.c: may okprobes call fn (already proven to be the function name)
 * indirectly? */
bool okp_arch_callable(const char *name, unsigned long fn);
/* For kernel_internals.c, after the lookup: 0, or why okprobes cannot work on this kernel. */
int okp_arch_symbols_check(void);
/* For text_owner.c: who else owns text in [addr, addr + len) in an arch-specific way (NULL:
 * none). */
const char *okp_arch_text_owner(okp_addr_t addr, unsigned long len);
/*
 * The arch's own part of the blacklist, as the kernel's arch_populate_kprobe_blacklist() and
 * arch_within_kprobe_blacklist() are its kprobes': for blacklist.c, the names of functions on
 * the arch's way to okprobes' trap (*n of them; suffixed copies match too), and, at load, the
 * ranges only the arch has. Weak defaults (blacklist.c): none.
 */
const char *const *okp_arch_blacklist_names(size_t *n);
void okp_arch_blacklist_ranges(void);
/* For function_extent.c's trap-path walk: the target of the call veneer at addr (a module's
 * PLT entry), or 0 when addr is not one. Weak default: 0, for an arch whose modules call
 * without veneers. */
okp_addr_t okp_arch_veneer_target(okp_addr_t addr);
/*
 * Where the arch's kernel may deliver no breakpoint trap to a module: every breakpoint probe
 * is then refused with reason, a static string (arch/common/no_breakpoint_trap.cpp, the core's
 * side). Set at load, before any registration.
 */
void okp_set_no_breakpoint_trap(const char *reason);

#endif /* OKP_GLUE_H */
