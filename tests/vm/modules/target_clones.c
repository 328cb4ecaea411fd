// SPDX-License-Identifier: GPL-2.0
/*
 * Functions of okp_target that GCC copies under suffixed names (kallsyms lists the copies,
 * not the names in the source): okp_target_scaled is only ever called with one constant
 * factor (IPA-CP: okp_target_scaled.constprop.0), okp_target_first reads one field of the
 * struct it is passed (IPA-SRA: okp_target_first.isra.0), and okp_target_twin has a namesake
 * in target_clones_twin.c, each cloned: two candidates for one name. probes.sh registers by
 * the source names.
 */
#include <linux/compiler.h>
#include <linux/module.h>

#include "target_clones.h"

/* noinline keeps a function of its own to clone; noipa would forbid the clone itself. */
static noinline unsigned long okp_target_scaled(unsigned long x, unsigned long factor)
{
	return x * factor + (x >> 3);
}

static noinline unsigned long okp_target_first(const struct okp_target_pair *pair)
{
	return pair->first * 7 + (pair->first >> 2);
}

static noinline unsigned long okp_target_twin(const struct okp_target_pair *pair)
{
	return pair->first * 5 + (pair->first >> 1);
}

unsigned long okp_target_clones_run(unsigned long x)
{
	struct okp_target_pair pair = { .first = x, .second = x + 1 };

	barrier_data(&pair);
	return okp_target_scaled(x, 3) + okp_target_scaled(x + 2, 3) + okp_target_first(&pair) +
	       okp_target_twin(&pair) + okp_target_twin_other(x);
}
