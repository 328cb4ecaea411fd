// SPDX-License-Identifier: GPL-2.0
/*
 * The registry lock: a mutex, since registration sleeps (allocation, text patching, symbol
 * walks). The core holds it through RegistryGuard and asserts it where it needs it; lockdep
 * checks both.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>

#include "okp_glue.h"

static DEFINE_MUTEX(okp_registry_mutex);

/* Callers inside okp_seam_registry_lock() that do not hold the lock yet. */
static atomic_t okp_registry_waiters = ATOMIC_INIT(0);

void okp_seam_registry_lock(void)
{
	atomic_inc(&okp_registry_waiters);
	mutex_lock(&okp_registry_mutex);
	atomic_dec(&okp_registry_waiters);
}

/*
 * Between two probes of a batch (no lock held): lets every caller already waiting for the
 * lock take it before the batch takes it again. A mutex is not fair. A waiter that spins
 * optimistically is on no wait list, so no hand-off reaches it, and it sees the lock free
 * only in the instant between one probe's unlock and the next one's lock. On a host that
 * deschedules the waiter's CPU (a loaded hypervisor), it can miss that instant for the whole
 * batch. The waiter here is usually the jump optimizer: a batch of thousands would otherwise
 * hold every jump back until it returns (tests/vm/scripts/batch_qs.sh).
 */
void okp_registry_let_waiters_in(void)
{
	while (atomic_read(&okp_registry_waiters))
		usleep_range(20, 50);
}

void okp_seam_registry_unlock(void)
{
	mutex_unlock(&okp_registry_mutex);
}

void okp_seam_assert_registry_locked(void)
{
	lockdep_assert_held(&okp_registry_mutex);
}
