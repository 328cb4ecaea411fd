/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The out-of-line execution slots (arch/common/text_area.h). Filled with zero words, `udf #0`
 * (permanently undefined), so a stray jump into an unused slot faults instead of running
 * garbage, and does not look like a breakpoint (BRK) okprobes might own.
 */
#include "../common/text_area.h"

	okp_text_area okp_slot_area_start, okp_slot_area_end, 4096, 256*1024, 4, 0x00000000
