/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call stubs for kernel functions whose ENDBR the kernel sealed (src/kernel/arch/x86/symbols.c).
 * On a CPU that enforces IBT, an indirect call must land on an ENDBR64, and at boot the kernel
 * replaces the ENDBR of every vmlinux function whose address objtool saw taken nowhere by a
 * 4-byte NOP (apply_seal_endbr). okprobes calls the internals it reads from /proc/kallsyms
 * through pointers, and on Debian's 6.12 nearly all of them are sealed (kallsyms_on_each_symbol,
 * ftrace_location, text_poke_sync, ...). Each is then called through a stub here, written once
 * at load through text_poke: "endbr64; jmp <function>" (a direct jump is not IBT-checked).
 * Filled with int3 until written (arch/common/text_area.h).
 */
#include <linux/objtool.h>

#define OKP_TEXT_AREA_LABEL_NOTE ANNOTATE_NOENDBR
#include "../common/text_area.h"

	/* 32 stubs of 16 bytes: okprobes resolves 12 functions today. */
	okp_text_area okp_ibt_stub_area, okp_ibt_stub_area_end, 16, 32*16, 1, 0xcc
