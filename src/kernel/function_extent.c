// SPDX-License-Identifier: GPL-2.0
/*
 * From an address to its function: the symbol kallsyms names there, its start and size, with
 * the assembler's local labels and mapping symbols a module's kallsyms lists folded into the
 * function they belong to; and the function a call reaches (through a veneer, where the arch
 * has them), for the core's trap-path walk.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/string.h>

#include "okp_glue.h"

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

/* No call veneers, unless the arch's folder reads them. */
okp_addr_t __weak okp_arch_veneer_target(okp_addr_t addr)
{
	return 0;
}

int okp_seam_function_at(okp_addr_t addr, okp_addr_t *start, unsigned long *size, char *name,
			 unsigned long name_len)
{
	okp_addr_t veneer_target = okp_arch_veneer_target(addr);

	/* A call into a veneer goes on to the veneer's target: that is the function it reaches. */
	if (veneer_target)
		addr = veneer_target;
	if (!okp_is_text(addr) || (addr >= okp_ksyms._sinittext && addr < okp_ksyms._einittext))
		return -ENOENT;
	if (!okp_symbol_extent(addr, name, name_len, start, size) || !*size)
		return -ENOENT;
	return 0;
}
