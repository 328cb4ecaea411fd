// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel internals only arm64's glue uses (okp_arm64.h), found with the rest in
 * /proc/kallsyms (src/kernel/kernel_internals.c), and arm64's part of proving that a symbol
 * read from there may be called: where the CPU enforces BTI on kernel text, an indirect call
 * must land on a landing pad (bti c / bti jc, or paciasp / pacibsp, which act as one).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kernel.h>
#include <linux/printk.h>
#include <linux/uaccess.h>
#include <asm/cpufeature.h>

#include "kernel/okp_glue.h"
#include "okp_arm64.h"

struct okp_arm64_ksyms okp_arm64_ksyms;

#define WANT_ARM64_FN(n) OKP_WANT_FN(okp_arm64_ksyms, n)
#define WANT_ARM64_DATA(n) OKP_WANT_DATA(okp_arm64_ksyms, n)

static const struct okp_ksym_want okp_arm64_wanted[] = {
#ifdef OKP_ARM64_BREAK_HOOKS /* trap.c: absent after the debug-exception rework */
	WANT_ARM64_FN(register_kernel_break_hook),
	WANT_ARM64_FN(unregister_kernel_break_hook),
#endif
	WANT_ARM64_FN(aarch64_insn_patch_text),
	WANT_ARM64_FN(aarch64_insn_patch_text_nosync),
	WANT_ARM64_FN(get_kprobe),
	WANT_ARM64_DATA(__idmap_text_start),
	WANT_ARM64_DATA(__idmap_text_end),
	WANT_ARM64_DATA(__hyp_idmap_text_start),
	WANT_ARM64_DATA(__hyp_idmap_text_end),
	WANT_ARM64_DATA(__hyp_text_start),
	WANT_ARM64_DATA(__hyp_text_end),
};

const struct okp_ksym_want *okp_arch_wanted_symbols(size_t *n)
{
	*n = ARRAY_SIZE(okp_arm64_wanted);
	return okp_arm64_wanted;
}

#ifdef CONFIG_ARM64_BTI_KERNEL
static bool okp_is_landing_pad(u32 insn)
{
	return insn == 0xd503245f /* bti c */ || insn == 0xd50324df /* bti jc */ ||
	       insn == 0xd503233f /* paciasp */ || insn == 0xd503237f /* pacibsp */;
}
#endif

bool okp_arch_callable(const char *name, unsigned long fn)
{
#ifdef CONFIG_ARM64_BTI_KERNEL
	if (system_supports_bti()) {
		u32 insn;

		if (copy_from_kernel_nofault(&insn, (void *)fn, sizeof(insn)) ||
		    !okp_is_landing_pad(le32_to_cpu(insn))) {
			pr_err("%s does not start with a BTI landing pad and this CPU enforces BTI: not calling it\n",
			       name);
			return false;
		}
	}
#endif
	return true;
}

/* Every breakpoint okprobes writes and every hit it takes needs these (trap.c, text_patch.c). */
int okp_arch_symbols_check(void)
{
#ifdef OKP_ARM64_BREAK_HOOKS
	if (!okp_arm64_ksyms.register_kernel_break_hook ||
	    !okp_arm64_ksyms.unregister_kernel_break_hook) {
		pr_err("the kernel's break-hook list (register_kernel_break_hook) is not usable\n");
		return -ENOENT;
	}
#endif
	if (!okp_arm64_ksyms.aarch64_insn_patch_text ||
	    !okp_arm64_ksyms.aarch64_insn_patch_text_nosync) {
		pr_err("the kernel's text patching (aarch64_insn_patch_text) is not usable\n");
		return -ENOENT;
	}
	/* text_patch.c: probe sites are then checked and written inside stop_machine. */
	if (!okp_ksyms.text_mutex)
		pr_info("text_mutex not in /proc/kallsyms (no CONFIG_KALLSYMS_ALL): probe sites are checked and written with the machine stopped\n");
	return 0;
}
