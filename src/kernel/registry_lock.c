// SPDX-License-Identifier: GPL-2.0
/*
 * The registry lock: a mutex, since registration sleeps (allocation, text patching, symbol
 * walks). The core holds it through RegistryGuard and asserts it where it needs it; lockdep
 * checks both.
 */
#include <linux/lockdep.h>
#include <linux/mutex.h>

#include "okp_glue.h"

static DEFINE_MUTEX(okp_registry_mutex);

void okp_seam_registry_lock(void)
{
	mutex_lock(&okp_registry_mutex);
}

void okp_seam_registry_unlock(void)
{
	mutex_unlock(&okp_registry_mutex);
}

void okp_seam_assert_registry_locked(void)
{
	lockdep_assert_held(&okp_registry_mutex);
}
