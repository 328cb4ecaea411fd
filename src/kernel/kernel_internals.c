// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel internals okprobes uses (okp_ksyms), found without the kernel's kprobes.
 *
 * 6.1 exports neither kallsyms_lookup_name nor kallsyms_on_each_symbol, and the usual trick
 * (a kprobe on kallsyms_lookup_name) would make okprobes depend on the kprobes it sits beside.
 * Instead, at load, okprobes reads /proc/kallsyms as root would (the opener's CAP_SYSLOG makes
 * the addresses visible) and picks the few internal symbols it needs. An address read from a
 * file is data from outside the kernel: before okprobes calls one, sprint_symbol() (exported)
 * must name exactly that function at offset 0, and the arch may ask more (a landing pad where
 * the CPU enforces indirect-branch tracking: okp_arch_callable()). Symbols that fail are left
 * NULL and the feature that needs them is refused with a reason, never guessed.
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
#include <linux/version.h>

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
#ifdef CONFIG_RETHOOK
	WANT_FN(rethook_alloc),
	WANT_FN(rethook_free),
	WANT_FN(rethook_try_get),
	WANT_FN(rethook_hook),
	WANT_FN(rethook_recycle),
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
	WANT_FN(rethook_add_node),
#endif
	WANT_DATA(arch_rethook_trampoline),
#endif
#if defined(CONFIG_KRETPROBES) && !defined(CONFIG_KRETPROBE_ON_RETHOOK)
	WANT_DATA(__kretprobe_trampoline),
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	WANT_FN(kretprobe_fini_pool),
#endif
#endif
	WANT_DATA(text_mutex),
	WANT_DATA(kprobe_table),
	WANT_DATA(kprobe_blacklist),
	WANT_DATA(kprobe_mutex),
	WANT_DATA(register_kprobe),
	WANT_DATA(_stext),
	WANT_DATA(_etext),
	WANT_DATA(_sinittext),
	WANT_DATA(_einittext),
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
	return okp_arch_callable(name, fn); /* e.g. a live landing pad */
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
