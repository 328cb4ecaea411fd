// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel internals only x86's glue uses (its text patching and SMP-alternatives check),
 * found with the rest in /proc/kallsyms (src/kernel/symbols.c), and x86's part of proving
 * that a symbol read from there may be called: on a CPU enforcing IBT the target must start
 * with a live ENDBR64 (a sealed one would #CP).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kernel.h>
#include <linux/printk.h>
#include <linux/uaccess.h>
#include <asm/cpufeature.h>
#include <asm/ibt.h>

#include "kernel/okp_glue.h"

static const struct okp_ksym_want okp_x86_wanted[] = {
	WANT_FN(text_poke),
	WANT_FN(text_poke_sync),
	WANT_FN(alternatives_text_reserved),
	/* Retpolines: a jump to one is an indirect jump (detour.c, the region check). */
	WANT_DATA(__x86_indirect_thunk_array),
	WANT_DATA(__x86_indirect_jump_thunk_array),
};

const struct okp_ksym_want *okp_arch_wanted_symbols(size_t *n)
{
	*n = ARRAY_SIZE(okp_x86_wanted);
	return okp_x86_wanted;
}

bool okp_arch_callable(const char *name, unsigned long fn)
{
#ifdef CONFIG_X86_KERNEL_IBT
	if (cpu_feature_enabled(X86_FEATURE_IBT)) {
		u32 insn;

		if (copy_from_kernel_nofault(&insn, (void *)fn, sizeof(insn)) ||
		    insn != gen_endbr()) {
			pr_err("%s has no live ENDBR64 and this CPU enforces IBT: not calling it\n", name);
			return false;
		}
	}
#endif
	return true;
}

/* Every breakpoint okprobes writes goes through text_poke (arch/x86/text_patch.c). */
int okp_arch_symbols_check(void)
{
	if (!okp_ksyms.text_poke || !okp_ksyms.text_poke_sync || !okp_ksyms.text_mutex) {
		pr_err("the kernel's text patching (text_poke, text_mutex) is not usable\n");
		return -ENOENT;
	}
	return 0;
}
