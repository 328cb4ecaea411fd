// SPDX-License-Identifier: GPL-2.0
/*
 * Who else owns the text a probe would patch: the kernel's kprobes, jump labels, static calls,
 * the arch's own self-patching, BUG/WARN sites and exception-table fixups. Process context,
 * under the registry lock.
 */
#include <linux/preempt.h>

#include "okp_glue.h"

const char *okp_seam_text_owner(okp_addr_t addr, unsigned long len)
{
	void *start = (void *)addr, *end = (void *)(addr + len - 1);
	const char *owner = NULL;

	/* Any byte of the range: a jump-optimized region must not cover one either. */
	if (okp_seam_kernel_kprobe_in(addr, len))
		return "kernel kprobe (possibly optimized into a jump)";
	/* A static call's trampoline (__SCT__*): the core refuses it by its symbol's name. */
	/* Not jump_label_text_reserved(): it walks all of vmlinux's table (jump_label_index.c). */
	if (okp_jump_label_in(addr, len))
		return "jump label";
	if (okp_ksyms.static_call_text_reserved && okp_ksyms.static_call_text_reserved(start, end))
		return "static call";
	owner = okp_arch_text_owner(addr, len); /* e.g. SMP alternatives */
	if (owner)
		return owner;
	if (okp_ksyms.find_bug && okp_ksyms.find_bug(addr))
		return "BUG/WARN site";
	preempt_disable();
	if (okp_ksyms.search_exception_tables && okp_ksyms.search_exception_tables(addr))
		owner = "exception-table fixup (a fault there must be fixed up at this address)";
	preempt_enable();
	return owner;
}
