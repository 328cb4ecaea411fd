/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The out-of-line execution slots (arch/common/text_area.h). Filled with zero halfwords
 * (0x0000 is defined to be an illegal instruction, compressed or not), so a stray jump into an
 * unused slot faults instead of running garbage, and does not look like a breakpoint (ebreak)
 * okprobes might own.
 */
#include "../common/text_area.h"

	okp_text_area okp_slot_area_start, okp_slot_area_end, 4096, 512*1024, 2, 0x0000
