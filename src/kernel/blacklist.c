// SPDX-License-Identifier: GPL-2.0
/*
 * Feeds the core's blacklist from every source the kernel itself uses, plus what okprobes'
 * own trap path depends on, so okprobes stays safe on a kernel whose NOKPROBE annotations
 * are missing. Each entry records its source; debugfs `blacklist` shows them.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/bsearch.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <okprobes/okprobes.h>

#include "okp_glue.h"

/* okprobes' own core text: 6.4 split struct module's core_layout into mem[MOD_*]. */
static unsigned long okp_own_text_start(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return (unsigned long)THIS_MODULE->mem[MOD_TEXT].base;
#else
	return (unsigned long)THIS_MODULE->core_layout.base;
#endif
}

static unsigned long okp_own_text_end(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return okp_own_text_start() + THIS_MODULE->mem[MOD_TEXT].size;
#else
	return okp_own_text_start() + THIS_MODULE->core_layout.text_size;
#endif
}

/*
 * Functions on okprobes' trap path or that it calls from there, on every arch: the notifier
 * chain, NMI-entry bookkeeping, the nofault copy emulation uses, the ftrace entry, and what
 * any of them may call (preemption and lockdep accounting, sanitizers, the NMI backtrace).
 * Each arch adds its own (okp_arch_blacklist_names()). Suffixed copies (foo.isra.0,
 * foo.constprop.0, foo.cold) match too.
 */
static const char *const okp_builtin_blacklist[] = {
	"notify_die", "atomic_notifier_call_chain", "notifier_call_chain",
	"irqentry_nmi_enter", "irqentry_nmi_exit", "irqentry_enter", "irqentry_exit",
	"ct_nmi_enter", "ct_nmi_exit", "rcu_nmi_enter", "rcu_nmi_exit",
	"copy_from_kernel_nofault", "copy_from_kernel_nofault_allowed",
	"ftrace_ops_list_func", "ftrace_regs_caller", "ftrace_caller", "ftrace_stub",
	"arch_ftrace_ops_list_func", "ftrace_ops_assist_func",
	"preempt_count_add", "preempt_count_sub", "debug_smp_processor_id",
	"__this_cpu_preempt_check", "check_preemption_disabled",
	"lock_acquire", "lock_release", "lock_is_held_type", "trace_hardirqs_on",
	"trace_hardirqs_off", "lockdep_hardirqs_on", "lockdep_hardirqs_off",
	"__kasan_check_read", "__kasan_check_write", "kasan_check_range",
	"__asan_load8", "__asan_store8", "__asan_load4", "__asan_store4",
	"__asan_load1", "__asan_store1", "__asan_loadN", "__asan_storeN",
	"__sanitizer_cov_trace_pc",
	"nmi_cpu_backtrace",
};

/* No names of the arch's own, unless its folder lists some. */
const char *const *__weak okp_arch_blacklist_names(size_t *n)
{
	*n = 0;
	return NULL;
}

static bool okp_name_in(const char *const *names, size_t n, const char *name, size_t base)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strlen(names[i]) == base && !strncmp(name, names[i], base))
			return true;
	}
	return false;
}

static bool okp_builtin_match(const char *name)
{
	size_t base = strcspn(name, "."), n;
	const char *const *arch = okp_arch_blacklist_names(&n);

	return okp_name_in(okp_builtin_blacklist, ARRAY_SIZE(okp_builtin_blacklist), name, base) ||
	       okp_name_in(arch, n, name, base);
}

/* Adds the whole symbol at addr (its size from kallsyms). */
static void okp_blacklist_symbol(unsigned long addr, const char *source, const void *owner)
{
	char name[KSYM_NAME_LEN];
	unsigned long start, size;

	if (okp_symbol_extent(addr, name, sizeof(name), &start, &size) && size)
		okp_core_blacklist_add(start, start + size, name, source, owner);
}

void okp_blacklist_range(unsigned long start, unsigned long end, const char *name,
			 const char *source, const void *owner)
{
	if (start && end > start)
		okp_core_blacklist_add(start, end, name, source, owner);
}

static OKP_KSYM_VISITOR(okp_builtin_visit)
{
	if (okp_builtin_match(name))
		okp_blacklist_symbol(addr, "built-in", NULL);
	return 0;
}

/*
 * vmlinux's _kprobe_blacklist section is init data, freed after boot (the kernel's kprobes
 * copy it first). Its entries are gone but their names are not: NOKPROBE_SYMBOL(foo) emits
 * the variable _kbl_addr_foo, still listed by kallsyms. Collect those names, then blacklist
 * every text symbol carrying one (suffixed clones included).
 */
#define OKP_KBL_PREFIX "_kbl_addr_"
#define OKP_KBL_MAX 4096

struct okp_kbl {
	char **names;
	unsigned int count;
	unsigned int added;
};

static OKP_KSYM_VISITOR(okp_kbl_collect)
{
	struct okp_kbl *kbl = data;

	if (strncmp(name, OKP_KBL_PREFIX, sizeof(OKP_KBL_PREFIX) - 1) || kbl->count >= OKP_KBL_MAX)
		return 0;
	kbl->names[kbl->count] = kstrdup(name + sizeof(OKP_KBL_PREFIX) - 1, GFP_KERNEL);
	if (kbl->names[kbl->count])
		kbl->count++;
	return 0;
}

static int okp_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static OKP_KSYM_VISITOR(okp_kbl_apply)
{
	struct okp_kbl *kbl = data;
	char base[KSYM_NAME_LEN];
	const char *key = base;

	if (addr < okp_ksyms._stext || addr >= okp_ksyms._etext)
		return 0;
	strscpy(base, name, min_t(size_t, sizeof(base), strcspn(name, ".") + 1));
	if (bsearch(&key, kbl->names, kbl->count, sizeof(char *), okp_cmp_names)) {
		okp_blacklist_symbol(addr, "_kprobe_blacklist", NULL);
		kbl->added++;
	}
	return 0;
}

/*
 * Without CONFIG_KALLSYMS_ALL (Debian's arm64 kernel) kallsyms lists no _kbl_addr_ names: ask
 * the kernel's kprobes instead, whose list kept every NOKPROBE_SYMBOL entry (and their arch's
 * ranges), about each vmlinux function, through their own within_kprobe_blacklist().
 */
static OKP_KSYM_VISITOR(okp_kbl_ask_kernel)
{
	struct okp_kbl *kbl = data;

	if (addr < okp_ksyms._stext || addr >= okp_ksyms._etext)
		return 0;
	if (okp_ksyms.within_kprobe_blacklist(addr)) {
		okp_blacklist_symbol(addr, "_kprobe_blacklist", NULL);
		kbl->added++;
	}
	return 0;
}

static void okp_blacklist_nokprobe_symbols(void)
{
	struct okp_kbl kbl = {};
	unsigned int i;

	kbl.names = kvcalloc(OKP_KBL_MAX, sizeof(char *), GFP_KERNEL);
	if (!kbl.names)
		return;
	okp_ksyms.kallsyms_on_each_symbol(okp_kbl_collect, &kbl);
	sort(kbl.names, kbl.count, sizeof(char *), okp_cmp_names, NULL);
	if (kbl.count)
		okp_ksyms.kallsyms_on_each_symbol(okp_kbl_apply, &kbl);
	else if (okp_ksyms.within_kprobe_blacklist)
		okp_ksyms.kallsyms_on_each_symbol(okp_kbl_ask_kernel, &kbl);
	else
		pr_warn("no NOKPROBE_SYMBOL names in kallsyms (CONFIG_KALLSYMS_ALL off?): relying on the built-in list\n");
	pr_info("blacklist: %u NOKPROBE_SYMBOL functions\n", kbl.added);
	for (i = 0; i < kbl.count; i++)
		kfree(kbl.names[i]);
	kvfree(kbl.names);
}

/*
 * A client's OKP_NOKPROBE_SYMBOL(fn)s (include/okprobes/okprobes.h): each is a pointer to fn
 * named __okp_nokprobe_<fn>, read off the module's symbol table. While a module is COMING its
 * table is the whole ELF symtab (init copy); once live it is the core copy, which keeps data
 * symbols only with CONFIG_KALLSYMS_ALL. The table is read with preemption off (the loader
 * may swap the init copy for the core one and free it after a grace period), the targets
 * collected first and blacklisted after, since adding may sleep.
 */
#define OKP_NOKPROBE_MAX 256

static void okp_blacklist_module_nokprobe(struct module *mod)
{
#ifdef CONFIG_KALLSYMS
	const size_t prefix_len = sizeof(OKP_NOKPROBE_PREFIX) - 1;
	unsigned long *targets = kcalloc(OKP_NOKPROBE_MAX, sizeof(*targets), GFP_KERNEL);
	struct mod_kallsyms *ks;
	unsigned int i, count = 0;

	if (!targets)
		return;
	preempt_disable();
	ks = rcu_dereference_sched(mod->kallsyms);
	for (i = 1; ks && i < ks->num_symtab && count < OKP_NOKPROBE_MAX; i++) {
		const Elf_Sym *sym = &ks->symtab[i];
		unsigned long target;

		if (sym->st_shndx == SHN_UNDEF || !sym->st_value ||
		    strncmp(ks->strtab + sym->st_name, OKP_NOKPROBE_PREFIX, prefix_len))
			continue;
		if (copy_from_kernel_nofault(&target, (void *)(unsigned long)sym->st_value,
					     sizeof(target)) || !target)
			continue;
		targets[count++] = target;
	}
	preempt_enable();
	/* Only the module's own text: a stray symbol of that prefix blacklists nothing else. */
	for (i = 0; i < count; i++)
		if (within_module(targets[i], mod))
			okp_blacklist_symbol(targets[i], "OKP_NOKPROBE_SYMBOL", mod);
	kfree(targets);
#endif
}

/* A module's own annotations: NOKPROBE_SYMBOL()s, __kprobes and noinstr text, and okprobes'
 * counterparts OKP_NOKPROBE_SYMBOL() and __okp_kprobes (which uses .kprobes.text). */
void okp_blacklist_module(struct module *mod)
{
#ifdef CONFIG_KPROBES
	unsigned int i;
#endif

	okp_blacklist_module_nokprobe(mod);

	/* struct module has these fields only with CONFIG_KPROBES: without it there is nothing. */
#ifdef CONFIG_KPROBES
	for (i = 0; i < mod->num_kprobe_blacklist; i++)
		okp_blacklist_symbol(mod->kprobe_blacklist[i], "_kprobe_blacklist", mod);
	okp_blacklist_range((unsigned long)mod->kprobes_text_start,
			    (unsigned long)mod->kprobes_text_start + mod->kprobes_text_size,
			    ".kprobes.text", ".kprobes.text (__kprobes, __okp_kprobes)", mod);
#endif
	okp_blacklist_range((unsigned long)mod->noinstr_text_start,
			    (unsigned long)mod->noinstr_text_start + mod->noinstr_text_size,
			    ".noinstr.text", ".noinstr.text", mod);
}

/*
 * The trap path of this kernel, derived from its live text (core/trap_path.h): a probe on any
 * function it reaches would trap again inside its own handling. Without it okprobes must not
 * arm anything, so a failure here fails the load.
 */
okp_addr_t __weak okp_trap_not_ours_entry_point(void)
{
	return 0;
}

okp_addr_t __weak okp_trap_step_entry_point(void)
{
	return 0;
}

/* An arch whose detours with a post entry call an entry of their own (riscv64). */
okp_addr_t __weak okp_detour_entry_with_post_point(void)
{
	return 0;
}

static int okp_blacklist_trap_path(void)
{
	okp_addr_t own[] = { okp_trap_entry_point(), okp_ftrace_entry_point(),
			     okp_ftrace_ipmodify_entry_point(),
			     okp_return_entry_point(), okp_rethook_entry_point(),
			     okp_rethook_pre_handler_entry_point(),
			     okp_trap_not_ours_entry_point(),
			     okp_trap_step_entry_point(),
#ifdef OKP_JUMP_PROBES
			     okp_detour_entry_point(), okp_detour_post_entry_point(),
			     okp_detour_entry_with_post_point(),
#endif
	};
	int ret = okp_core_derive_trap_path(own, ARRAY_SIZE(own));

	if (ret)
		pr_err("cannot derive the trap path's blacklist (%d): not loading\n", ret);
	return ret;
}

/* No ranges of the arch's own, unless its folder adds some. */
void __weak okp_arch_blacklist_ranges(void)
{
}

int okp_blacklist_init(void)
{
	struct okp_ksyms *k = &okp_ksyms;

	if (okp_kernel_has_kprobes()) {
		okp_blacklist_nokprobe_symbols();
		okp_blacklist_range(k->__kprobes_text_start, k->__kprobes_text_end, ".kprobes.text",
				    ".kprobes.text", NULL);
	} else {
		pr_info("the kernel has no kprobes of its own (CONFIG_KPROBES off: no register_kprobe in kallsyms): okprobes is its only kprobes; its NOKPROBE_SYMBOL()/__kprobes annotations compiled to nothing, so the blacklist rests on the built-in list, the noinstr/entry sections and the derived trap path\n");
	}
	okp_blacklist_range(k->__noinstr_text_start, k->__noinstr_text_end, ".noinstr.text",
			    ".noinstr.text", NULL);
	okp_blacklist_range(k->__entry_text_start, k->__entry_text_end, ".entry.text",
			    ".entry.text", NULL);
	okp_blacklist_range(k->__irqentry_text_start, k->__irqentry_text_end, ".irqentry.text",
			    ".irqentry.text", NULL);
	okp_blacklist_range(k->__softirqentry_text_start, k->__softirqentry_text_end,
			    ".softirqentry.text", ".softirqentry.text", NULL);
	okp_arch_blacklist_ranges(); /* as the kernel's arch_populate_kprobe_blacklist() */
	/* okprobes itself: every function of it may run on the trap path. */
	okp_blacklist_range(okp_own_text_start(), okp_own_text_end(), "okprobes", "okprobes", NULL);
	k->kallsyms_on_each_symbol(okp_builtin_visit, NULL);
	return okp_blacklist_trap_path();
}
