// SPDX-License-Identifier: GPL-2.0
/*
 * x86's own entries of okprobes' built-in blacklist (blacklist.c matches them with its own,
 * suffixed copies included): the int3 entry and kgdb's look at it, text patching (the int3
 * handler of text_poke_bp and what writes okprobes' own breakpoints), the return and retpoline
 * thunks every call there passes through, and the NMI handlers.
 */
#include <linux/kernel.h>

#include "kernel/okp_glue.h"

static const char *const okp_x86_blacklist[] = {
	"exc_int3", "do_int3", "do_int3_user", "poke_int3_handler", "kgdb_ll_trap",
	"text_poke", "text_poke_sync", "text_poke_bp", "do_sync_core", "__text_poke",
	"__x86_return_thunk", "__x86_indirect_thunk_array", "zen_untrain_ret",
	/*
	 * The NMI handlers, which the kernel keeps out of its kprobes with NOKPROBE_SYMBOL():
	 * without CONFIG_KPROBES that annotation compiles to nothing, and a kernel without
	 * kprobes must refuse what one with kprobes refuses (tests/vm/modules/recursion.c).
	 */
	"nmi_handle", "pci_serr_error", "io_check_error", "unknown_nmi_error",
	"perf_event_nmi_handler", "perf_ibs_nmi_handler", "nmi_cpu_backtrace_handler",
};

const char *const *okp_arch_blacklist_names(size_t *n)
{
	*n = ARRAY_SIZE(okp_x86_blacklist);
	return okp_x86_blacklist;
}
