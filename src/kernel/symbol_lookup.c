// SPDX-License-Identifier: GPL-2.0
/*
 * From a name to an address: a user's symbol ("name" or "module:name"), every candidate
 * collected and an ambiguous one refused, and the vmlinux functions the core names (its
 * trap-path rules). Also what counts as text a probe may name: vmlinux's or a module's.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/string.h>

#include "okp_glue.h"

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

/* The core's names of vmlinux functions (core/trap_path.h): each address, or 0. */
struct okp_resolve {
	const char *const *names;
	okp_addr_t *addrs;
	unsigned int n;
};

static OKP_KSYM_VISITOR(okp_resolve_visit)
{
	struct okp_resolve *r = data;
	unsigned int i;

	if (addr < okp_ksyms._stext || addr >= okp_ksyms._etext)
		return 0;
	for (i = 0; i < r->n; i++)
		if (!r->addrs[i] && r->names[i][0] && !strcmp(name, r->names[i]))
			r->addrs[i] = addr;
	return 0;
}

void okp_seam_resolve_functions(const char *const *names, okp_addr_t *addrs, unsigned int n)
{
	struct okp_resolve r = { .names = names, .addrs = addrs, .n = n };

	memset(addrs, 0, n * sizeof(*addrs));
	okp_ksyms.kallsyms_on_each_symbol(okp_resolve_visit, &r);
}
