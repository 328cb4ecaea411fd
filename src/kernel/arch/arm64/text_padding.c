// SPDX-License-Identifier: GPL-2.0
/*
 * Executable memory near the kernel's text, for detours (seam/jump_services.h): a `b` reaches
 * +-128 MiB, and where the module region is randomized over 2 GiB (Debian's kernels set
 * RANDOMIZE_MODULE_REGION_FULL, and from 6.5 on then have no 128 MiB window near the kernel at
 * all) okprobes' own slot area is mostly out of that reach of the kernel's text.
 *
 * arm64's vmlinux.lds pads the text segment to SEGMENT_ALIGN before _etext, and the whole
 * segment, padding included, is mapped as read-only executable kernel text: a few KiB to
 * 64 KiB of zero words after the last code, which nothing runs or reads. That padding is
 * taken only as far as it is provably unused: the run of zero words ending at _etext, less a
 * guard after the last non-zero word, and from the last symbol kallsyms puts inside it (a
 * section's end marker, __hyp_text_end on kernels with KVM) on.
 * Every probe in the kernel's text (at most a few tens of MiB long) is within a b's reach of
 * it. It is written like okprobes' own slots, through aarch64_insn_patch_text_nosync(), which
 * maps the image's page through the fixmap (text_patch.c).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kallsyms.h>
#include <linux/printk.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>

#include "kernel/okp_glue.h"
#include "okp_arm64.h"

/* After the last non-zero word: room for a literal pool or a table the scan takes for padding. */
#define OKP_PADDING_GUARD 64
/* SEGMENT_ALIGN (64 KiB): no padding is longer. */
#define OKP_PADDING_MAX SZ_64K

static okp_addr_t okp_padding_start, okp_padding_end;

okp_addr_t okp_seam_near_text_area(unsigned long *size)
{
	unsigned long end = okp_ksyms._etext, start, sym_start, sym_size;
	char name[KSYM_NAME_LEN];
	u32 word;

	*size = 0;
	if (!end || (end & 15))
		return 0;
	if (!okp_padding_start) {
		start = end;
		while (end - start < OKP_PADDING_MAX &&
		       !copy_from_kernel_nofault(&word, (void *)(start - 4), sizeof(word)) && !word)
			start -= 4;
		start = ALIGN(start + OKP_PADDING_GUARD, 16);
		/*
		 * Symbols inside the zero run are section-end markers (__hyp_text_end: the text
		 * before it is KVM's, mapped at EL2 too); the padding starts at the last of them.
		 */
		if (start < end && okp_symbol_extent(end - 4, name, sizeof(name), &sym_start, &sym_size) &&
		    sym_start > start - OKP_PADDING_GUARD)
			start = ALIGN(sym_start > start ? sym_start : start, 16);
		okp_padding_start = start;
		okp_padding_end = end;
		if (start < end)
			pr_info("detours near the kernel's text: %lu bytes of padding before _etext at %px\n",
				end - start, (void *)start);
		else
			pr_info("no padding before _etext to put detours in: probes out of a b's reach of okprobes' slots are not optimized\n");
	}
	if (okp_padding_start >= okp_padding_end)
		return 0;
	*size = okp_padding_end - okp_padding_start;
	return okp_padding_start;
}

/* text_patch.c writes it as okprobes' own slots are written. */
bool okp_in_text_padding(okp_addr_t addr, unsigned long len)
{
	return okp_padding_start < okp_padding_end && addr >= okp_padding_start &&
	       addr + len <= okp_padding_end;
}
