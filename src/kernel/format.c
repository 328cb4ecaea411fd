// SPDX-License-Identifier: GPL-2.0
/* Formatting for the core (reasons, debugfs lines): the kernel's vsnprintf, defined once. */
#include <linux/kernel.h>

#include "okp_glue.h"

void okp_seam_format(char *buf, unsigned long len, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(buf, len, fmt, args);
	va_end(args);
}

void okp_seam_vformat(char *buf, unsigned long len, const char *fmt, va_list args)
{
	vsnprintf(buf, len, fmt, args);
}
