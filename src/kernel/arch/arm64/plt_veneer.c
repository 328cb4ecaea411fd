// SPDX-License-Identifier: GPL-2.0
/*
 * Where a module's call through a PLT veneer goes. A module too far from the kernel for bl's
 * +-128 MiB (CONFIG_RANDOMIZE_MODULE_REGION_FULL: Debian's stock kernel) calls kernel functions
 * through veneers the module loader appends to its text (arch/arm64/kernel/module-plts.c):
 *	adrp x16, <target page>
 *	add  x16, x16, #<target & 0xfff>
 *	br   x16
 * kallsyms has no name for them: an address there reads as the module's last function plus an
 * offset. The trap-path walk (function_extent.c's okp_seam_function_at) asks here first, so a
 * call to copy_from_kernel_nofault() through a veneer reaches copy_from_kernel_nofault, not the
 * function okprobes happens to link last.
 */
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include "../../okp_glue.h"

#define OKP_ADRP_X16_MASK 0x9f00001fU	/* op=1, 10000, Rd; immlo/immhi free */
#define OKP_ADRP_X16 0x90000010U
#define OKP_ADD_X16_MASK 0xffc003ffU	/* 64-bit add (immediate), sh=0, Rn and Rd */
#define OKP_ADD_X16 (0x91000000U | 16 << 5 | 16)
#define OKP_BR_X16 0xd61f0200U

okp_addr_t okp_arch_veneer_target(okp_addr_t addr)
{
	__le32 words[3];
	u32 adrp, add;
	s64 page_delta;

	if ((addr & 3) || copy_from_kernel_nofault(words, (void *)addr, sizeof(words)))
		return 0;
	adrp = le32_to_cpu(words[0]);
	add = le32_to_cpu(words[1]);
	if ((adrp & OKP_ADRP_X16_MASK) != OKP_ADRP_X16 || (add & OKP_ADD_X16_MASK) != OKP_ADD_X16 ||
	    le32_to_cpu(words[2]) != OKP_BR_X16)
		return 0;
	/* adrp's 21-bit signed page offset: immhi (bits 23..5) above immlo (bits 30..29). */
	page_delta = sign_extend64(((adrp >> 5) & 0x7ffff) << 2 | ((adrp >> 29) & 3), 20);
	return (addr & ~0xfffUL) + page_delta * SZ_4K + ((add >> 10) & 0xfff);
}
