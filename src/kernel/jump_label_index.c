// SPDX-License-Identifier: GPL-2.0
/*
 * Is text at [addr, addr + len) a jump label's? Answered from an index of vmlinux's jump table
 * built once at load, instead of the kernel's jump_label_text_reserved().
 *
 * Why: jump_label_text_reserved() walks all of vmlinux's jump table on every call, before it
 * looks at a module's, and on x86 decodes each entry's instruction to learn its size (2 or 5
 * bytes). okprobes asks at every registration and again for every detour region, so that
 * walk would be most of what registering many jump-optimized probes costs (docs/reliability.md
 * has the figures). vmlinux's table does not change after boot (entries
 * in init text, freed by then, are left out, as the kernel leaves them out once it runs), and
 * an entry's size never changes (a 2-byte nop becomes a 2-byte jmp): okprobes reads each once,
 * sorts them by address and answers by binary search. A module's table is short; it is walked
 * as the kernel would, with the module held by preempt_disable().
 *
 * Where vmlinux's table cannot be found, or the address is neither vmlinux text nor a module's,
 * the kernel's own function answers, as before.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/jump_label.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include "okp_glue.h"

#ifdef CONFIG_JUMP_LABEL

/* The longest jump label of any arch (x86's 5-byte jmp/nop). */
#define OKP_JUMP_LABEL_MAX 8

struct okp_jump_label {
	u32 offset;	/* from _stext */
	u32 size;
};

/* Written once at load, before any probe can be registered; read-only afterwards. */
static struct okp_jump_label *okp_jump_labels;
static size_t okp_njump_labels;

static unsigned int okp_jump_entry_size(unsigned long code)
{
#ifdef JUMP_LABEL_NOP_SIZE
	return JUMP_LABEL_NOP_SIZE;
#else
	return okp_arch_jump_entry_size(code);
#endif
}

static int okp_jump_label_cmp(const void *a, const void *b)
{
	const struct okp_jump_label *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static bool okp_vmlinux_jump_label_in(unsigned long addr, unsigned long len);

/*
 * The index stands in for the kernel's answer only if it gives it: every 128th entry's first
 * and last byte and the byte after it, asked both ways (the kernel's walk is the cost being
 * saved, so a sample). A kernel whose jump table okprobes misreads keeps the kernel's answers.
 */
static bool okp_jump_label_index_agrees(void)
{
	size_t i;

	if (!okp_ksyms.jump_label_text_reserved)
		return true; /* nothing to compare with; the table itself was read */
	for (i = 0; i < okp_njump_labels; i += 128) {
		unsigned long code = okp_ksyms._stext + okp_jump_labels[i].offset;
		unsigned long probe[] = { code, code + okp_jump_labels[i].size - 1,
					  code + okp_jump_labels[i].size };
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(probe); k++) {
			bool ours = okp_vmlinux_jump_label_in(probe[k], 1);
			bool theirs = okp_ksyms.jump_label_text_reserved((void *)probe[k],
									 (void *)probe[k]);

			if (ours != theirs) {
				pr_warn("jump label at %pS: index says %d, the kernel %d\n",
					(void *)probe[k], ours, theirs);
				return false;
			}
		}
	}
	return true;
}

void okp_jump_label_index_init(void)
{
	const struct jump_entry *first = (const struct jump_entry *)okp_ksyms.__start___jump_table;
	const struct jump_entry *stop = (const struct jump_entry *)okp_ksyms.__stop___jump_table;
	unsigned long stext = okp_ksyms._stext, etext = okp_ksyms._etext;
	const struct jump_entry *e;
	size_t n = 0;

	if (!first || stop <= first || !stext || etext <= stext || etext - stext > U32_MAX) {
		pr_info("vmlinux's jump table not found: jump labels are checked by the kernel\n");
		return;
	}
	okp_jump_labels = kvmalloc_array(stop - first, sizeof(*okp_jump_labels), GFP_KERNEL);
	if (!okp_jump_labels) {
		pr_info("no memory to index vmlinux's jump table: jump labels are checked by the kernel\n");
		return;
	}
	for (e = first; e < stop; e++) {
		unsigned long code = jump_entry_code(e);

		if (code < stext || code >= etext)
			continue; /* init text, gone once the kernel runs */
		okp_jump_labels[n].offset = code - stext;
		okp_jump_labels[n].size = okp_jump_entry_size(code);
		n++;
	}
	sort(okp_jump_labels, n, sizeof(*okp_jump_labels), okp_jump_label_cmp, NULL);
	okp_njump_labels = n;
	if (!okp_jump_label_index_agrees()) {
		pr_warn("vmlinux's jump-table index disagrees with jump_label_text_reserved(): not used\n");
		okp_jump_label_index_exit();
	}
}

void okp_jump_label_index_exit(void)
{
	kvfree(okp_jump_labels);
	okp_jump_labels = NULL;
	okp_njump_labels = 0;
}

static bool okp_overlaps(unsigned long code, unsigned int size, unsigned long addr,
			 unsigned long len)
{
	return code < addr + len && code + size > addr;
}

/* vmlinux: the first entry that could reach addr, then on while entries start before the end. */
static bool okp_vmlinux_jump_label_in(unsigned long addr, unsigned long len)
{
	unsigned long stext = okp_ksyms._stext;
	unsigned long from = addr - stext > OKP_JUMP_LABEL_MAX ? addr - stext - OKP_JUMP_LABEL_MAX : 0;
	size_t lo = 0, hi = okp_njump_labels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (okp_jump_labels[mid].offset < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < okp_njump_labels && stext + okp_jump_labels[lo].offset < addr + len; lo++) {
		if (okp_overlaps(stext + okp_jump_labels[lo].offset, okp_jump_labels[lo].size, addr, len))
			return true;
	}
	return false;
}

/* A module's own entries, the ones in its init text left out once that is gone. */
static bool okp_module_jump_label_in(struct module *mod, unsigned long addr, unsigned long len)
{
	unsigned int i;

	for (i = 0; i < mod->num_jump_entries; i++) {
		unsigned long code = jump_entry_code(&mod->jump_entries[i]);

		if (within_module_init(code, mod))
			continue;
		if (okp_overlaps(code, okp_jump_entry_size(code), addr, len))
			return true;
	}
	return false;
}

bool okp_jump_label_in(unsigned long addr, unsigned long len)
{
	struct module *mod;
	int owner = -1;

	if (okp_jump_labels && addr >= okp_ksyms._stext && addr + len <= okp_ksyms._etext)
		return okp_vmlinux_jump_label_in(addr, len);
	if (okp_ksyms.__module_text_address) {
		preempt_disable();
		mod = okp_ksyms.__module_text_address(addr);
		if (mod && within_module_core(addr + len - 1, mod))
			owner = okp_module_jump_label_in(mod, addr, len);
		preempt_enable();
		if (owner >= 0)
			return owner;
	}
	return okp_ksyms.jump_label_text_reserved &&
	       okp_ksyms.jump_label_text_reserved((void *)addr, (void *)(addr + len - 1));
}

#else /* !CONFIG_JUMP_LABEL: no jump labels to hit */

void okp_jump_label_index_init(void)
{
}

void okp_jump_label_index_exit(void)
{
}

bool okp_jump_label_in(unsigned long addr, unsigned long len)
{
	return false;
}

#endif
