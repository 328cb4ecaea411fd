// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol resolution without the kernel's kprobes.
 *
 * 6.1 exports neither kallsyms_lookup_name nor kallsyms_on_each_symbol, and the usual trick
 * (a kprobe on kallsyms_lookup_name) would make okprobes depend on the kprobes it sits beside.
 * Instead, at load, okprobes reads /proc/kallsyms as root would (the opener's CAP_SYSLOG makes
 * the addresses visible) and picks the few internal symbols it needs. An address read from a
 * file is data from outside the kernel: before okprobes calls one, sprint_symbol() (exported)
 * must name exactly that function at offset 0, and on a CPU enforcing IBT the target must start
 * with a live ENDBR64 (a sealed one would #CP). Symbols that fail are left NULL and the
 * feature that needs them is refused with a reason, never guessed.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/mman.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "okp_glue.h"

struct okp_ksyms okp_ksyms;

/* The symbols every arch wants; okp_arch_wanted_symbols() adds the arch's own. */
static const struct okp_ksym_want okp_wanted[] = {
	WANT_FN(kallsyms_on_each_symbol),
	WANT_FN(module_kallsyms_on_each_symbol),
	WANT_FN(__module_text_address),
	WANT_FN(jump_label_text_reserved),
	WANT_FN(static_call_text_reserved),
	WANT_FN(find_bug),
	WANT_FN(search_exception_tables),
	WANT_FN(ftrace_location),
	WANT_FN(ftrace_location_range),
	WANT_FN(within_kprobe_blacklist),
	WANT_DATA(text_mutex),
	WANT_DATA(kprobe_table),
	WANT_DATA(kprobe_blacklist),
	WANT_DATA(kprobe_mutex),
	WANT_DATA(register_kprobe),
	WANT_DATA(_stext),
	WANT_DATA(_etext),
	WANT_DATA(_sinittext),
	WANT_DATA(_einittext),
	WANT_DATA(__start___ex_table),
	WANT_DATA(__stop___ex_table),
	WANT_DATA(__start___jump_table),
	WANT_DATA(__stop___jump_table),
	WANT_DATA(__kprobes_text_start),
	WANT_DATA(__kprobes_text_end),
	WANT_DATA(__entry_text_start),
	WANT_DATA(__entry_text_end),
	WANT_DATA(__irqentry_text_start),
	WANT_DATA(__irqentry_text_end),
	WANT_DATA(__softirqentry_text_start),
	WANT_DATA(__softirqentry_text_end),
	WANT_DATA(__noinstr_text_start),
	WANT_DATA(__noinstr_text_end),
	WANT_DATA(__idmap_text_start),
	WANT_DATA(__idmap_text_end),
	WANT_DATA(__hyp_idmap_text_start),
	WANT_DATA(__hyp_idmap_text_end),
	WANT_DATA(__hyp_text_start),
	WANT_DATA(__hyp_text_end),
};

/* Is fn safe to call indirectly? It must be the named function, at its first byte. */
static bool okp_callable(const char *name, unsigned long fn)
{
	char buf[KSYM_SYMBOL_LEN];
	size_t n = strlen(name);

	sprint_symbol(buf, fn);
	if (strncmp(buf, name, n) || strncmp(buf + n, "+0x0/", 5)) {
		pr_err("/proc/kallsyms says %s is at %px but the kernel names that %s: not using it\n",
		       name, (void *)fn, buf);
		return false;
	}
	return okp_arch_callable(name, fn); /* e.g. x86's IBT: a live ENDBR64 */
}

/* Stores addr in the entry of want[0..n) named name, unless an earlier line set it. */
static void okp_take_wanted(const struct okp_ksym_want *want, size_t n, const char *name,
			    unsigned long addr)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!*want[i].where && !strcmp(want[i].name, name))
			*want[i].where = addr;
	}
}

/* One parsed line of /proc/kallsyms: "ffffffff81000000 T _stext" or "... t foo\t[mod]". */
static void okp_take_line(char *line)
{
	const struct okp_ksym_want *arch;
	char *name, *end;
	unsigned long addr;
	size_t n;

	end = strchr(line, ' ');
	if (!end || end - line > 16)
		return;
	*end = '\0';
	if (kstrtoul(line, 16, &addr) || !addr)
		return;
	name = end + 3; /* skip " T " */
	if (name[-1] != ' ' || strchr(name, '\t')) /* module symbols are not wanted here */
		return;
	okp_take_wanted(okp_wanted, ARRAY_SIZE(okp_wanted), name, addr);
	arch = okp_arch_wanted_symbols(&n);
	okp_take_wanted(arch, n, name, addr);
}

#define OKP_KALLSYMS_CHUNK (64 * 1024)

/*
 * /proc/kallsyms has only ->read (seq_read), which copies to user memory, so kernel_read()
 * refuses it: read it through a private anonymous mapping of the loading process.
 */
static int okp_read_kallsyms(void)
{
	struct file *file;
	unsigned long ubuf;
	char *buf;
	size_t have = 0;
	loff_t pos = 0;
	int ret = 0;

	if (!current->mm) {
		pr_err("no user address space to read /proc/kallsyms through (loaded from a kernel thread?)\n");
		return -EINVAL;
	}
	buf = kvmalloc(OKP_KALLSYMS_CHUNK + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	file = filp_open("/proc/kallsyms", O_RDONLY, 0);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		pr_err("cannot open /proc/kallsyms: %d\n", ret);
		goto out_free;
	}
	ubuf = vm_mmap(NULL, 0, OKP_KALLSYMS_CHUNK, PROT_READ | PROT_WRITE,
		       MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(ubuf)) {
		ret = (int)ubuf;
		goto out_close;
	}
	for (;;) {
		ssize_t got;
		char *line, *nl;

		got = file->f_op->read(file, (char __user *)ubuf, OKP_KALLSYMS_CHUNK - have, &pos);
		if (got < 0) {
			ret = got;
			break;
		}
		if (got == 0)
			break;
		if (copy_from_user(buf + have, (void __user *)ubuf, got)) {
			ret = -EFAULT;
			break;
		}
		have += got;
		buf[have] = '\0';
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			okp_take_line(line);
			line = nl + 1;
		}
		have = buf + have - line;
		memmove(buf, line, have);
		if (have == OKP_KALLSYMS_CHUNK)
			have = 0; /* a line longer than the buffer: not a symbol line */
		cond_resched();
	}
	vm_munmap(ubuf, OKP_KALLSYMS_CHUNK);
out_close:
	filp_close(file, NULL);
out_free:
	kvfree(buf);
	return ret;
}

/* Reports each of want[0..n) not found, and forgets each called one that is not callable. */
static void okp_verify_wanted(const struct okp_ksym_want *want, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct okp_ksym_want *w = &want[i];

		if (!*w->where) {
			pr_info("kernel symbol %s not found: the checks that need it are off\n", w->name);
			continue;
		}
		if (w->called && !okp_callable(w->name, *w->where))
			*w->where = 0;
	}
}

int okp_symbols_init(void)
{
	const struct okp_ksym_want *arch;
	size_t n;
	int ret = okp_read_kallsyms();

	if (ret)
		return ret;
	if (!okp_ksyms._stext) {
		pr_err("/proc/kallsyms shows no addresses (kptr_restrict?); load okprobes as root\n");
		return -EPERM;
	}
	okp_verify_wanted(okp_wanted, ARRAY_SIZE(okp_wanted));
	arch = okp_arch_wanted_symbols(&n);
	okp_verify_wanted(arch, n);
	ret = okp_arch_symbols_check();
	if (ret)
		return ret;
	if (!okp_ksyms.kallsyms_on_each_symbol) {
		pr_err("kallsyms_on_each_symbol is not usable: cannot resolve symbols\n");
		return -ENOENT;
	}
	return 0;
}

/* --- Resolution of a user's symbol: every candidate is collected, ambiguity is refused. --- */

#define OKP_MAX_CANDIDATES 8

struct okp_lookup {
	const char *name;
	const char *module;	/* "mod" of "mod:name", or NULL */
	unsigned long found[OKP_MAX_CANDIDATES];
	unsigned int count;
};

bool okp_is_text(unsigned long addr)
{
	bool text;

	if (addr >= okp_ksyms._stext && addr < okp_ksyms._etext)
		return true;
	if (!okp_ksyms.__module_text_address)
		return false;
	preempt_disable();
	text = okp_ksyms.__module_text_address(addr) != NULL;
	preempt_enable();
	return text;
}

static void okp_lookup_add(struct okp_lookup *l, unsigned long addr)
{
	unsigned int i;

	if (!okp_is_text(addr))
		return;
	for (i = 0; i < min(l->count, (unsigned int)OKP_MAX_CANDIDATES); i++)
		if (l->found[i] == addr)
			return; /* aliases of one address are one candidate */
	if (l->count < OKP_MAX_CANDIDATES)
		l->found[l->count] = addr;
	l->count++;
}

static OKP_KSYM_VISITOR(okp_lookup_vmlinux)
{
	struct okp_lookup *l = data;

	if (!strcmp(name, l->name))
		okp_lookup_add(l, addr);
	return 0;
}

static OKP_KSYM_VISITOR(okp_lookup_module)
{
	struct okp_lookup *l = data;

#if !OKP_KSYM_NO_MODULE_ARG	/* since 6.2 the walk itself keeps to l->module */
	if (l->module && (!mod || strcmp(mod->name, l->module)))
		return 0;
#endif
	if (!strcmp(name, l->name))
		okp_lookup_add(l, addr);
	return 0;
}

int okp_resolve_symbol(const char *symbol, unsigned long *addr, char *reason, size_t reason_len)
{
	struct okp_lookup l = { .name = symbol };
	char modname[MODULE_NAME_LEN];
	const char *colon = strchr(symbol, ':');
	unsigned int i;
	size_t used;

	if (colon) {
		size_t n = colon - symbol;

		if (n == 0 || n >= sizeof(modname)) {
			snprintf(reason, reason_len, "bad module prefix in '%s'", symbol);
			return -EINVAL;
		}
		memcpy(modname, symbol, n);
		modname[n] = '\0';
		l.module = modname;
		l.name = colon + 1;
	}
	if (strlen(l.name) >= KSYM_NAME_LEN || !*l.name) {
		snprintf(reason, reason_len, "symbol name '%s' is empty or too long", symbol);
		return -EINVAL;
	}
	if (!l.module || !strcmp(l.module, "vmlinux"))
		okp_ksyms.kallsyms_on_each_symbol(okp_lookup_vmlinux, &l);
	if ((!l.module || strcmp(l.module, "vmlinux")) && okp_ksyms.module_kallsyms_on_each_symbol)
#if OKP_KSYM_NO_MODULE_ARG
		okp_ksyms.module_kallsyms_on_each_symbol(l.module, okp_lookup_module, &l);
#else
		okp_ksyms.module_kallsyms_on_each_symbol(okp_lookup_module, &l);
#endif
	if (l.count == 0) {
		snprintf(reason, reason_len, "no text symbol '%s'", symbol);
		return -ENOENT;
	}
	if (l.count > 1) {
		used = scnprintf(reason, reason_len, "'%s' is ambiguous (%u candidates):", symbol,
				 l.count);
		for (i = 0; i < min(l.count, (unsigned int)OKP_MAX_CANDIDATES); i++) {
			char where[KSYM_SYMBOL_LEN];

			sprint_symbol(where, l.found[i]);
			used += scnprintf(reason + used, reason_len - used, " %px(%s)",
					  (void *)l.found[i], where);
		}
		return -EADDRNOTAVAIL;
	}
	*addr = l.found[0];
	return 0;
}

/* One kallsyms symbol around addr, as sprint_symbol names it (see okp_symbol_extent). */
static bool okp_one_symbol(unsigned long addr, char *name, size_t name_len, unsigned long *start,
			   unsigned long *size)
{
	char buf[KSYM_SYMBOL_LEN];
	unsigned long off;
	char *plus, *slash, *end;

	sprint_symbol(buf, addr);
	plus = strrchr(buf, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (slash) {
		*plus = '\0';
		*slash = '\0';
		end = strchr(slash + 1, ' ');
		if (end)
			*end = '\0';
	}
	strscpy(name, buf, name_len);
	if (!slash || kstrtoul(plus + 1, 0, &off) || kstrtoul(slash + 1, 0, size)) {
		*start = addr;
		*size = 0;
		return false;
	}
	*start = addr - off;
	return true;
}

/* An assembler-local label (".L..."): riscv64 modules keep those their relocations name as
 * symbols, so kallsyms lists them (vmlinux's drops them), but they are never a function's start. */
static bool okp_local_label(const char *name)
{
	return name[0] == '.' && name[1] == 'L';
}

/*
 * A mapping symbol ("$x", "$d", riscv64's "$x<isa>"): where the assembler's code or data
 * starts, never a function's name. 6.1's module kallsyms filters only arm's forms ("$x",
 * "$x.foo"); binutils 2.40 gives every riscv64 object a "$xrv64i2p1_m2p0_..." at the start of
 * its text, and sprint_symbol then names the function there after it.
 */
static bool okp_mapping_symbol(const char *name)
{
	return name[0] == '$';
}

static bool okp_not_a_function(const char *name)
{
	return okp_local_label(name) || okp_mapping_symbol(name);
}

/*
 * The function symbol at exactly addr in a module, for a mapping symbol kallsyms named there
 * instead (one walk of that module's symbol table, only then). Preemption off is what keeps
 * the module and its kallsyms alive, as for the kernel's own find_kallsyms_symbol().
 */
static bool okp_module_function_at(unsigned long addr, char *name, size_t name_len)
{
	struct module *mod;
	struct mod_kallsyms *ks;
	unsigned int i;
	bool found = false;

	if (!okp_ksyms.__module_text_address)
		return false;
	preempt_disable();
	mod = okp_ksyms.__module_text_address(addr);
	ks = mod ? rcu_dereference_sched(mod->kallsyms) : NULL;
	for (i = 1; ks && i < ks->num_symtab && !found; i++) {
		const Elf_Sym *sym = &ks->symtab[i];
		const char *n = ks->strtab + sym->st_name;

		if (sym->st_shndx != SHN_UNDEF && sym->st_value == addr && *n &&
		    !okp_not_a_function(n)) {
			strscpy(name, n, name_len);
			found = true;
		}
	}
	preempt_enable();
	return found;
}

/* Labels one function may hold, before the walk gives up and takes what it has. */
#define OKP_MAX_LOCAL_LABELS 1024

/*
 * The symbol containing addr, from sprint_symbol's "name+0x10/0x40 [mod]": its name, start
 * and size, with the local labels and mapping symbols inside it (okp_not_a_function) skipped
 * both ways: a function is the named symbol before them, extended over the labels that follow
 * it. False when kallsyms has no symbol there (name then holds what it printed).
 */
bool okp_symbol_extent(unsigned long addr, char *name, size_t name_len, unsigned long *start,
		       unsigned long *size)
{
	char other[KSYM_NAME_LEN];
	unsigned long s, n;
	unsigned int i;

	if (!okp_one_symbol(addr, name, name_len, start, size))
		return false;
	if (addr >= okp_ksyms._stext && addr < okp_ksyms._etext)
		return true; /* vmlinux: scripts/kallsyms drops local labels */
	for (i = 0; i < OKP_MAX_LOCAL_LABELS && okp_not_a_function(name) && *start; i++) {
		if (okp_mapping_symbol(name) && okp_module_function_at(*start, name, name_len))
			break; /* the function the mapping symbol stood for */
		if (!okp_one_symbol(*start - 1, other, sizeof(other), &s, &n) || s + n != *start)
			break; /* nothing right before it: the label is all there is */
		strscpy(name, other, name_len);
		*size += n;
		*start = s;
	}
	for (i = 0; i < OKP_MAX_LOCAL_LABELS && *size; i++) {
		if (!okp_one_symbol(*start + *size, other, sizeof(other), &s, &n) ||
		    s != *start + *size || !okp_not_a_function(other) || !n)
			break;
		if (okp_mapping_symbol(other) && okp_module_function_at(s, other, sizeof(other)))
			break; /* the next function, named by its object's mapping symbol */
		*size += n;
	}
	return true;
}
