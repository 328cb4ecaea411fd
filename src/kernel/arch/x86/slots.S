/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The out-of-line execution slots (arch/common/text_area.h). Filled with int3 so a stray jump
 * into an unused slot traps instead of running garbage. Nothing ever calls or jumps here
 * indirectly (the trap path sets ip), hence no ENDBR.
 */
#include <linux/objtool.h>

#define OKP_TEXT_AREA_LABEL_NOTE ANNOTATE_NOENDBR
#include "../common/text_area.h"

	/* 16,384 cells of 32 bytes: a breakpoint site takes 1-2, a jump-optimized one 4 more. */
	okp_text_area okp_slot_area_start, okp_slot_area_end, 4096, 1024*1024, 1, 0xcc
