/* SPDX-License-Identifier: GPL-2.0 */
/* What the scale modules (retscale.c, retblock.c, stepscale.c; tests/vm/scripts/scale.sh) share. */
#ifndef OKP_SCALE_COMMON_H
#define OKP_SCALE_COMMON_H

#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/rcupdate.h>
#include <okprobes/okprobes.h>

/* Misses of every cause: the pool, re-entry, disabled, no free stub. */
static inline unsigned long okp_scale_misses_of(const struct okp_kretprobe *rp)
{
	unsigned long sum = rp->nmissed + rp->kp.nmissed;
	unsigned int c;

	for (c = 0; c < OKP_RP_MISS_NR; c++)
		sum += rp->nmissed_by[c];
	return sum;
}

/* Instances of frames still returning (a sleeper's last wake-up): wait for them a while. */
static inline unsigned long okp_scale_wait_stubs_in_use(unsigned long want)
{
	unsigned long in_use = okp_return_stubs_in_use();
	int i;

	for (i = 0; i < 200 && in_use > want; i++) {
		rcu_barrier();
		msleep(10);
		in_use = okp_return_stubs_in_use();
	}
	return in_use;
}

/* A trigger parameter's value: 0 when it is "1" (or another true word), else the errno. */
static inline int okp_scale_trigger(const char *val)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	return on ? 0 : -EINVAL;
}

#endif
