/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What okp_sweep's two reason tables (sweep_reasons.c: refusals by class; sweep_coverage_tally.c:
 * coverage's reasons) share: a reason with its numbers masked, so that reasons differing only in
 * an address, an offset or a count group into one class.
 */
#ifndef OKP_SWEEP_REASON_MASK_H
#define OKP_SWEEP_REASON_MASK_H

#include <linux/ctype.h>
#include <linux/types.h>

/*
 * Copies reason r into out (room bytes, room > 0) with every hex number (0x...) written X and
 * every decimal number N; digits inside a word (int3, ud2) stay. Stops at room - 1 characters
 * and NUL-terminates: a caller that edits the result further keeps its own headroom by passing
 * less than its buffer.
 */
static inline void sweep_mask_numbers(const char *r, char *out, size_t room)
{
	char *o = out, *end = out + room - 1;
	const char *p = r;

	while (*p && o < end) {
		if (p[0] == '0' && p[1] == 'x' && isxdigit(p[2])) {
			for (p += 2; isxdigit(*p); p++)
				;
			*o++ = 'X';
		} else if (isdigit(*p) && (p == r || !isalpha(p[-1]))) {
			while (isdigit(*p))
				p++;
			*o++ = 'N';
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
}

#endif /* OKP_SWEEP_REASON_MASK_H */
