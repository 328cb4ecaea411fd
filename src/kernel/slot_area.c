// SPDX-License-Identifier: GPL-2.0
/*
 * Where the slot area is: okprobes' own text (arch/<arch>/slots.S), read-only and executable,
 * within reach of rip-relative targets in the kernel and modules.
 */
#include "okp_glue.h"

okp_addr_t okp_seam_slot_area(unsigned long *size)
{
	*size = okp_slot_area_end - okp_slot_area_start;
	return (okp_addr_t)okp_slot_area_start;
}
