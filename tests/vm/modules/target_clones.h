/* SPDX-License-Identifier: GPL-2.0 */
/* okp_target's cloned functions (target_clones.c, target_clones_twin.c). */
#ifndef OKP_TARGET_CLONES_H
#define OKP_TARGET_CLONES_H

struct okp_target_pair {
	unsigned long first, second;
};

unsigned long okp_target_clones_run(unsigned long x);
unsigned long okp_target_twin_other(unsigned long x);

#endif
