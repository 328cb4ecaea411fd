// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only export: the length of the instruction at bytes[0..avail) as okprobes' Zydis
 * decoder sees it (arch/x86/decoder_test_length.cpp), or -EILSEQ. Registering a probe to ask
 * "is this a boundary?" costs milliseconds under TCG; the differential decoding test
 * (tests/vm/modules/sweep_decode.c) asks this for every instruction of vmlinux text. Nothing
 * in okprobes calls it; it reads only the caller's buffer.
 */
#include <linux/export.h>
#include <linux/types.h>

int okp_arch_test_insn_length(const u8 *bytes, unsigned long avail);
int okp_test_insn_length(const void *bytes, unsigned long avail);

int okp_test_insn_length(const void *bytes, unsigned long avail)
{
	return okp_arch_test_insn_length(bytes, avail);
}
EXPORT_SYMBOL_GPL(okp_test_insn_length);
