// SPDX-License-Identifier: GPL-2.0
/*
 * From a name to an address: a user's symbol ("name" or "module:name"), every candidate
 * collected (the compiler's clones of a function too, when the name itself is not there), an
 * ambiguous one refused with its candidates, an unknown one with the nearest name; and the
 * vmlinux functions the core names (its trap-path rules). Also what counts as text a probe
 * may name: vmlinux's or a module's.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/string.h>

#include "okp_glue.h"

#define OKP_MAX_CANDIDATES 8

/* Addresses of one kind of match, each counted once (aliases of one address are one). */
struct okp_matches {
	unsigned long found[OKP_MAX_CANDIDATES];
	unsigned int count;
};

struct okp_lookup {
	const char *name;
	size_t name_len;
	const char *module;	/* "mod" of "mod:name", or NULL */
	struct okp_matches exact;
	struct okp_matches clones;	/* name.isra.N, name.constprop.N, ...: compiler copies */
	struct okp_matches cold;	/* name.cold, name.part.N.cold: only the unlikely part */
};

/* The closest name to a symbol nothing matched, for the refusal's "did you mean". */
struct okp_near_miss {
	const char *name;
	size_t stem_len;	/* name without a clone suffix the user may have typed */
	const char *module;
	unsigned int best;	/* edit distance of addr's name; above the bound: none yet */
	unsigned long addr;
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

static void okp_matches_add(struct okp_matches *m, unsigned long addr)
{
	unsigned int i;

	if (!okp_is_text(addr))
		return;
	for (i = 0; i < min(m->count, (unsigned int)OKP_MAX_CANDIDATES); i++)
		if (m->found[i] == addr)
			return;
	if (m->count < OKP_MAX_CANDIDATES)
		m->found[m->count] = addr;
	m->count++;
}

static void okp_lookup_consider(struct okp_lookup *l, const char *name, unsigned long addr)
{
	bool cold;

	if (strncmp(name, l->name, l->name_len))
		return;
	if (!name[l->name_len]) {
		okp_matches_add(&l->exact, addr);
		return;
	}
	if (name[l->name_len] != '.' || okp_clone_stem_length(name, &cold) != l->name_len)
		return;
	okp_matches_add(cold ? &l->cold : &l->clones, addr);
}

static OKP_KSYM_VISITOR(okp_lookup_vmlinux)
{
	okp_lookup_consider(data, name, addr);
	return 0;
}

static OKP_KSYM_VISITOR(okp_lookup_module)
{
	struct okp_lookup *l = data;

#if !OKP_KSYM_NO_MODULE_ARG	/* since 6.2 the walk itself keeps to l->module */
	if (l->module && (!mod || strcmp(mod->name, l->module)))
		return 0;
#endif
	okp_lookup_consider(l, name, addr);
	return 0;
}

static void okp_near_miss_consider(struct okp_near_miss *n, const char *name, unsigned long addr)
{
	size_t len = strnlen(name, OKP_NEAR_MISS_MAX_LEN + 1);
	size_t stem_len;
	unsigned int distance;
	bool cold;

	if (n->best == 0 || len > OKP_NEAR_MISS_MAX_LEN)
		return;
	stem_len = okp_clone_stem_length(name, &cold);
	if ((stem_len > n->stem_len ? stem_len - n->stem_len : n->stem_len - stem_len) >= n->best)
		return;	/* cheap: too far by length alone */
	distance = okp_edit_distance_within(n->name, n->stem_len, name, stem_len, n->best - 1);
	if (distance >= n->best || !okp_is_text(addr))
		return;
	n->best = distance;
	n->addr = addr;
}

static OKP_KSYM_VISITOR(okp_near_miss_vmlinux)
{
	okp_near_miss_consider(data, name, addr);
	return 0;
}

static OKP_KSYM_VISITOR(okp_near_miss_module)
{
	struct okp_near_miss *n = data;

#if !OKP_KSYM_NO_MODULE_ARG
	if (n->module && (!mod || strcmp(mod->name, n->module)))
		return 0;
#endif
	okp_near_miss_consider(n, name, addr);
	return 0;
}

/* Walks vmlinux's symbols unless module names another, and the modules' unless it is vmlinux. */
static void okp_walk_symbols(const char *module, okp_ksym_fn in_vmlinux, okp_ksym_fn in_modules,
			     void *data)
{
	if (!module || !strcmp(module, "vmlinux"))
		okp_ksyms.kallsyms_on_each_symbol(in_vmlinux, data);
	if ((!module || strcmp(module, "vmlinux")) && okp_ksyms.module_kallsyms_on_each_symbol)
#if OKP_KSYM_NO_MODULE_ARG
		okp_ksyms.module_kallsyms_on_each_symbol(module, in_modules, data);
#else
		okp_ksyms.module_kallsyms_on_each_symbol(in_modules, data);
#endif
}

/* addr's symbol as a user names it: "name" in vmlinux, "mod:name" in a module. */
static void okp_user_symbol_name(unsigned long addr, char *buf, size_t len)
{
	char raw[KSYM_SYMBOL_LEN];
	char *space, *module;

	sprint_symbol_no_offset(raw, addr);	/* "name", "name [mod]" or "name [mod buildid]" */
	space = strchr(raw, ' ');
	if (!space || space[1] != '[') {
		strscpy(buf, raw, len);
		return;
	}
	*space = '\0';
	module = space + 2;
	module[strcspn(module, " ]")] = '\0';
	snprintf(buf, len, "%s:%s", module, raw);
}

/* Lists m's candidates after reason's first used characters; returns the new length. */
static size_t okp_list_candidates(const struct okp_matches *m, char *reason, size_t reason_len,
				  size_t used)
{
	unsigned int i;

	for (i = 0; i < min(m->count, (unsigned int)OKP_MAX_CANDIDATES); i++) {
		char where[KSYM_SYMBOL_LEN];

		okp_user_symbol_name(m->found[i], where, sizeof(where));
		used += scnprintf(reason + used, reason_len - used, " %s@%px", where,
				  (void *)m->found[i]);
	}
	return used;
}

/* "no text symbol": with the closest name, if one is near enough to be a typo. */
static int okp_refuse_unknown(const char *symbol, const struct okp_lookup *l, char *reason,
			      size_t reason_len)
{
	struct okp_near_miss n = { .name = l->name, .module = l->module };
	bool cold;
	char suggestion[KSYM_SYMBOL_LEN];

	n.stem_len = okp_clone_stem_length(l->name, &cold);
	/* Short names are near too much: only a different clone suffix counts for them. */
	n.best = n.stem_len >= 8 ? 3 : n.stem_len >= 4 ? 2 : 1;
	if (n.stem_len <= OKP_NEAR_MISS_MAX_LEN)
		okp_walk_symbols(l->module, okp_near_miss_vmlinux, okp_near_miss_module, &n);
	if (!n.addr) {
		snprintf(reason, reason_len, "no text symbol '%s'", symbol);
		return -ENOENT;
	}
	okp_user_symbol_name(n.addr, suggestion, sizeof(suggestion));
	snprintf(reason, reason_len, "no text symbol '%s'; did you mean '%s'?", symbol, suggestion);
	return -ENOENT;
}

int okp_resolve_symbol(const char *symbol, unsigned long *addr, char *reason, size_t reason_len)
{
	struct okp_lookup l = { .name = symbol };
	char modname[MODULE_NAME_LEN];
	const char *colon = strchr(symbol, ':');
	const struct okp_matches *pick;
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
	l.name_len = strlen(l.name);
	if (l.name_len >= KSYM_NAME_LEN || !l.name_len) {
		snprintf(reason, reason_len, "symbol name '%s' is empty or too long", symbol);
		return -EINVAL;
	}
	okp_walk_symbols(l.module, okp_lookup_vmlinux, okp_lookup_module, &l);
	/*
	 * The name itself first; else the compiler's copies of that function, where there is one
	 * (its cold part only when nothing else of the function is left).
	 */
	pick = l.exact.count ? &l.exact : l.clones.count ? &l.clones : &l.cold;
	if (pick->count == 0)
		return okp_refuse_unknown(symbol, &l, reason, reason_len);
	if (pick->count > 1) {
		if (pick == &l.exact)
			used = scnprintf(reason, reason_len, "'%s' is ambiguous (%u candidates):",
					 symbol, pick->count);
		else
			used = scnprintf(reason, reason_len,
					 "'%s' is ambiguous (%u compiler clones, name one):",
					 symbol, pick->count);
		okp_list_candidates(pick, reason, reason_len, used);
		return -EADDRNOTAVAIL;
	}
	*addr = pick->found[0];
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
