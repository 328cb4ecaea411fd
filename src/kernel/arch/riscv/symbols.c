// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel internals only riscv64's glue uses (its text patching), found with the rest in
 * /proc/kallsyms (src/kernel/kernel_internals.c), which proves each is the function it names
 * before it is kept. riscv has no landing pads: nothing more to check before calling one.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kernel.h>
#include <linux/printk.h>

#include "kernel/okp_glue.h"
#include "text_patch.h"

unsigned long okp_riscv_patch_text_nosync;
struct okp_riscv_ksyms okp_riscv_ksyms;

#define WANT_RISCV_DATA(n) OKP_WANT_DATA(okp_riscv_ksyms, n)

static const struct okp_ksym_want okp_riscv_wanted[] = {
	{ "patch_text_nosync", &okp_riscv_patch_text_nosync, true },
	/* The tables a jump probe's region is checked against (detour.c). */
	WANT_RISCV_DATA(__start___ex_table),
	WANT_RISCV_DATA(__stop___ex_table),
	WANT_RISCV_DATA(__start___bug_table),
	WANT_RISCV_DATA(__stop___bug_table),
	WANT_RISCV_DATA(riscv_patch_in_stop_machine),
	OKP_WANT_FN(okp_riscv_ksyms, flush_module_init_free_work),
	WANT_RISCV_DATA(init_free_wq),
	/* The task look of a preemptible kernel's jump switch (task_look.c): code labels it
	 * compares return addresses with (never called), and what it calls in the stop. */
	WANT_RISCV_DATA(handle_exception),
	WANT_RISCV_DATA(ret_from_exception),
	WANT_RISCV_DATA(ret_from_exception_end),
	WANT_RISCV_DATA(ret_from_fork),
	WANT_RISCV_DATA(ret_from_kernel_thread),
	WANT_RISCV_DATA(ret_from_fork_kernel_asm),
	WANT_RISCV_DATA(ret_from_fork_user_asm),
	OKP_WANT_FN(okp_riscv_ksyms, kernel_text_address),
	OKP_WANT_FN(okp_riscv_ksyms, nr_running),
};

const struct okp_ksym_want *okp_arch_wanted_symbols(size_t *n)
{
	*n = ARRAY_SIZE(okp_riscv_wanted);
	return okp_riscv_wanted;
}

bool okp_arch_callable(const char *name, unsigned long fn)
{
	return true;
}

/*
 * Every breakpoint okprobes writes goes through patch_text_nosync under text_mutex; without
 * them okprobes still loads (function-entry probes use ftrace) and refuses every mid-function
 * probe with this reason.
 */
int okp_arch_symbols_check(void)
{
	static const char reason[] =
		"no breakpoint probes: the kernel's text patching (patch_text_nosync, text_mutex) "
		"is not usable here (function entries use ftrace)";

	if (!okp_riscv_patch_text_nosync || !okp_ksyms.text_mutex) {
		okp_set_no_breakpoint_trap(reason);
		pr_warn("%s\n", reason);
	}
	return 0;
}
