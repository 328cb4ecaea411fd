/* SPDX-License-Identifier: GPL-2.0 */
/* riscv64's text patching primitive, found in /proc/kallsyms by symbols.c (0: not usable). */
#ifndef OKP_RISCV_TEXT_PATCH_H
#define OKP_RISCV_TEXT_PATCH_H

/* int patch_text_nosync(void *addr, const void *insns, size_t len) */
extern unsigned long okp_riscv_patch_text_nosync;

#endif /* OKP_RISCV_TEXT_PATCH_H */
