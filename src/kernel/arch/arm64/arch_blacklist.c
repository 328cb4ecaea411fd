// SPDX-License-Identifier: GPL-2.0
/*
 * arm64's own part of okprobes' built-in blacklist, as the kernel's kprobes have theirs
 * (arch_populate_kprobe_blacklist(), arch_within_kprobe_blacklist()): the way from a
 * kernel-mode BRK to the break hooks, and the text that runs where no BRK reaches okprobes.
 */
#include <linux/kernel.h>

#include "kernel/okp_glue.h"
#include "okp_arm64.h"

/*
 * The two functions the derived trap path passes through but does not walk
 * (arch/arm64/probe_arch.h: their other callees run only for a BRK nobody handled). The
 * kernel marks both NOKPROBE_SYMBOL(), which compiles to nothing without CONFIG_KPROBES: a
 * probe on either would then trap inside its own trap, so they are listed here for every
 * kernel. (blacklist.c matches them with its own names, suffixed copies included.)
 */
static const char *const okp_arm64_blacklist[] = {
	"do_debug_exception", "brk_handler",
};

const char *const *okp_arch_blacklist_names(size_t *n)
{
	*n = ARRAY_SIZE(okp_arm64_blacklist);
	return okp_arm64_blacklist;
}

/*
 * Text that runs with the MMU off (CPU bring-up and resume: __cpu_setup, secondary_startup)
 * or at EL2, where no BRK reaches okprobes' EL1 break hook. The kernel's kprobes blacklist
 * these ranges in arch_populate_kprobe_blacklist(), which no kallsyms name records and a
 * kernel without CONFIG_KPROBES does not have: okprobes takes them from the linker's bounds
 * (symbols.c reads them).
 */
void okp_arch_blacklist_ranges(void)
{
	const struct okp_arm64_ksyms *k = &okp_arm64_ksyms;

	okp_blacklist_range(k->__idmap_text_start, k->__idmap_text_end, ".idmap.text",
			    ".idmap.text", NULL);
	okp_blacklist_range(k->__hyp_idmap_text_start, k->__hyp_idmap_text_end,
			    ".hyp.idmap.text", ".hyp.idmap.text", NULL);
	okp_blacklist_range(k->__hyp_text_start, k->__hyp_text_end, ".hyp.text", ".hyp.text",
			    NULL);
}
