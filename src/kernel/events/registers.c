// SPDX-License-Identifier: GPL-2.0
/*
 * %REG of a fetch argument: a register's name (without the %) to its offset in struct
 * pt_regs, from the arch's table (src/kernel/arch/<arch>/event_registers.c).
 *
 * Locking: none; a constant table.
 */
#include <linux/errno.h>
#include <linux/string.h>

#include "events.h"

int okp_event_register_offset(const char *name)
{
	unsigned int i;

	for (i = 0; i < okp_event_register_count; i++)
		if (!strcmp(okp_event_registers[i].name, name))
			return okp_event_registers[i].offset;
	return -EINVAL;
}
