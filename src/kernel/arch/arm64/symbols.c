// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 wants no kernel symbol of its own yet (its text patching is a later issue), and has
 * no check beyond src/kernel/symbols.c's before calling one.
 */
#include <linux/stddef.h>

#include "kernel/okp_glue.h"

const struct okp_ksym_want *okp_arch_wanted_symbols(size_t *n)
{
	*n = 0;
	return NULL;
}

bool okp_arch_callable(const char *name, unsigned long fn)
{
	return true;
}

int okp_arch_symbols_check(void)
{
	return 0;
}
