// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's x86 instruction decoder, compiled into okp_sweep: 6.1 does not export
 * insn_decode() to modules. The Kbuild puts the kernel source's arch/x86/lib on the include
 * path, so this is that tree's insn.c, unchanged.
 */
#include "insn.c"
