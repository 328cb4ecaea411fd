// SPDX-License-Identifier: GPL-2.0
/*
 * How kallsyms' names differ from the names users write: the suffixes compilers give the
 * copies they make of a function (".isra.0", ".constprop.1", ".part.0", ".cold", ".llvm.N"),
 * and how far one name is from another (for a refusal's "did you mean").
 */
#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "okp_glue.h"

/* One suffix token after a '.': the compiler clone markers, each with or without a number. */
static const char *const okp_clone_markers[] = { "isra", "constprop", "part", "cold", "llvm" };

/* Length of the clone marker (and its ".N") at s, just after a '.'; 0 if none starts there. */
static size_t okp_clone_token(const char *s)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(okp_clone_markers); i++) {
		size_t n = strlen(okp_clone_markers[i]);
		size_t len;

		if (strncmp(s, okp_clone_markers[i], n) || (s[n] && s[n] != '.'))
			continue;
		len = n;
		if (s[len] == '.' && isdigit(s[len + 1])) {
			len++;
			while (isdigit(s[len]))
				len++;
		}
		return len;
	}
	return 0;
}

size_t okp_clone_stem_length(const char *name, bool *cold)
{
	const char *dot = strchr(name, '.');
	const char *p = dot;

	*cold = false;
	if (!dot || dot == name)
		return strlen(name);
	while (*p == '.') {
		size_t token = okp_clone_token(p + 1);

		if (!token)
			return strlen(name);	/* a dot of another kind: a plain name */
		if (!strncmp(p + 1, "cold", 4))
			*cold = true;
		p += 1 + token;
	}
	return *p ? strlen(name) : (size_t)(dot - name);
}

unsigned int okp_edit_distance_within(const char *a, size_t alen, const char *b, size_t blen,
				      unsigned int max)
{
	/* Two rows of the Levenshtein table; names longer than a row are never near misses. */
	unsigned char row[OKP_NEAR_MISS_MAX_LEN + 1], next[OKP_NEAR_MISS_MAX_LEN + 1];
	size_t i, j;

	if (alen > OKP_NEAR_MISS_MAX_LEN || blen > OKP_NEAR_MISS_MAX_LEN)
		return max + 1;
	if ((alen > blen ? alen - blen : blen - alen) > max)
		return max + 1;
	for (j = 0; j <= blen; j++)
		row[j] = min_t(size_t, j, max + 1);
	for (i = 1; i <= alen; i++) {
		unsigned int best;

		next[0] = min_t(size_t, i, max + 1);
		best = next[0];
		for (j = 1; j <= blen; j++) {
			unsigned int cost = row[j - 1] + (a[i - 1] != b[j - 1]);

			cost = min(cost, (unsigned int)row[j] + 1);
			cost = min(cost, (unsigned int)next[j - 1] + 1);
			next[j] = min(cost, max + 1);
			best = min(best, (unsigned int)next[j]);
		}
		if (best > max)
			return max + 1;	/* every path is already too far */
		memcpy(row, next, blen + 1);
	}
	return row[blen];
}
