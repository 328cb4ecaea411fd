/* SPDX-License-Identifier: GPL-2.0 */
/* The breakpoint trap through the die notifier chain (die_notifier.c), for the arch's trap.c. */
#ifndef OKP_DIE_NOTIFIER_H
#define OKP_DIE_NOTIFIER_H

int okp_die_notifier_register(void);
/* Nothing when it was not registered. */
void okp_die_notifier_unregister(void);

#endif /* OKP_DIE_NOTIFIER_H */
