/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel internals only arm64's glue uses, found in /proc/kallsyms by symbols.c (none of
 * them is exported in 6.1): the break-hook list, the instruction patching, the kernel's kprobes'
 * lookup and the bounds of the text no BRK of okprobes' may go in. Each was proven
 * to be the named function before it is stored; NULL means "not usable here".
 */
#ifndef OKP_ARM64_H
#define OKP_ARM64_H

#include <linux/types.h>

struct break_hook;
struct kprobe;

struct okp_arm64_ksyms {
	void (*register_kernel_break_hook)(struct break_hook *hook);
	void (*unregister_kernel_break_hook)(struct break_hook *hook);
	int (*aarch64_insn_patch_text)(void *addrs[], u32 insns[], int cnt);
	int (*aarch64_insn_patch_text_nosync)(void *addr, u32 insn);
	/* The kernel's kprobes' own lookup, where their table (data) is not in kallsyms. */
	struct kprobe *(*get_kprobe)(void *addr);
	/* Text run with the MMU off or at EL2 (arch_blacklist.c). */
	unsigned long __idmap_text_start, __idmap_text_end;
	unsigned long __hyp_idmap_text_start, __hyp_idmap_text_end;
	unsigned long __hyp_text_start, __hyp_text_end;
};
extern struct okp_arm64_ksyms okp_arm64_ksyms;

/* Detours in the padding before _etext (text_padding.c): is [addr, addr + len) in it? */
bool okp_in_text_padding(unsigned long addr, unsigned long len);

#endif /* OKP_ARM64_H */
