// SPDX-License-Identifier: GPL-2.0
/* okp_target_twin's namesake (see target_clones.c), only ever called with one constant. */
#include <linux/compiler.h>

#include "target_clones.h"

static noinline unsigned long okp_target_twin(unsigned long x, unsigned long step)
{
	return x * step + (x >> 4);
}

unsigned long okp_target_twin_other(unsigned long x)
{
	return okp_target_twin(x, 9) + okp_target_twin(x + 5, 9);
}
