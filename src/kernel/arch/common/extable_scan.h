/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exception-table entries of [first, first + num) that touch [start, end) (their faulting
 * instruction or their fixup inside it), for okp_seam_extable_in(): appended to out from index
 * n on, at most max stored, the count of all returned (a caller sees that more matched than fit).
 * For the arches whose entries are 32-bit offsets from their own fields
 * (ARCH_HAS_RELATIVE_EXTABLE: x86-64, riscv64).
 */
#ifndef OKP_EXTABLE_SCAN_H
#define OKP_EXTABLE_SCAN_H

#include <asm/extable.h>
#include "seam/jump_services.h"

static inline unsigned int okp_extable_scan(const struct exception_table_entry *first,
					    unsigned int num, okp_addr_t start, okp_addr_t end,
					    struct okp_extable_entry *out, unsigned int max,
					    unsigned int n)
{
	unsigned int i;

	for (i = 0; i < num; i++) {
		unsigned long insn = (unsigned long)&first[i].insn + first[i].insn;
		unsigned long fixup = (unsigned long)&first[i].fixup + first[i].fixup;

		if ((insn < start || insn >= end) && (fixup < start || fixup >= end))
			continue;
		if (n < max)
			out[n] = (struct okp_extable_entry){ insn, fixup };
		n++;
	}
	return n;
}

#endif /* OKP_EXTABLE_SCAN_H */
