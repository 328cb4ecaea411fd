// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel internals only x86's glue uses (okp_x86.h), found with the rest in /proc/kallsyms
 * (src/kernel/kernel_internals.c), and x86's part of proving that a symbol read from there may
 * be called: on a CPU enforcing IBT the target must start with a live ENDBR64 (a sealed one
 * would #CP).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/uaccess.h>
#include <asm/cpufeature.h>
#include <asm/ibt.h>

#include "kernel/okp_glue.h"
#include "okp_x86.h"

/*
 * Sealed ENDBRs. At boot, a kernel with CONFIG_X86_KERNEL_IBT on a CPU that enforces IBT
 * replaces the ENDBR64 of every function whose address nothing takes by a 4-byte NOP
 * (gen_endbr_poison()): an indirect call there would #CP. Debian's 6.12 seals 11 of the 12
 * internals okprobes calls (all but text_poke). Such a function is called through a stub
 * (ibt_stubs.S: "endbr64; jmp rel32 <function>"), written at load through text_poke, which
 * must itself be live. ibt_stubs=1 uses the stubs for every called internal, as if all were
 * sealed: how the path is tested under an emulator without CET.
 */
#ifndef OKP_FORCE_IBT_STUBS
#define OKP_FORCE_IBT_STUBS 0
#endif
static bool okp_force_ibt_stubs = OKP_FORCE_IBT_STUBS;
module_param_named(ibt_stubs, okp_force_ibt_stubs, bool, 0444);
MODULE_PARM_DESC(ibt_stubs, "call every kernel internal through an IBT stub (testing)");

#define OKP_SEALED_ENDBR 0x001f0f66u	/* gen_endbr_poison(): osp nopl (%rax) */
/* ENDBR64 as a u32. With IBT the kernel's gen_endbr() builds it so that its bytes never sit in
 * the text as an immediate (that would be a landing pad); without IBT that does not matter. */
#ifdef CONFIG_X86_KERNEL_IBT
#define OKP_ENDBR64 gen_endbr()
#else
#define OKP_ENDBR64 0xfa1e0ff3u	/* f3 0f 1e fa */
#endif
#define OKP_IBT_STUB_SIZE 16
extern const u8 okp_ibt_stub_area[], okp_ibt_stub_area_end[];
static unsigned long okp_ibt_pending[32];
static unsigned int okp_ibt_npending;

struct okp_x86_ksyms okp_x86_ksyms;

#define WANT_X86_FN(n) OKP_WANT_FN(okp_x86_ksyms, n)
#define WANT_X86_DATA(n) OKP_WANT_DATA(okp_x86_ksyms, n)

static const struct okp_ksym_want okp_x86_wanted[] = {
	WANT_X86_FN(text_poke),
	WANT_X86_FN(text_poke_sync),
	WANT_X86_FN(alternatives_text_reserved),
	/* Optional (task_snapshot.c): without them the optimizer waits for tasks-RCU. */
	WANT_X86_FN(stack_trace_save_tsk_reliable),
	WANT_X86_FN(idle_task),
	WANT_X86_DATA(tasks_rcu_exit_srcu),
	/* Retpolines: a jump to one is an indirect jump (detour.c, the region check). */
	WANT_X86_DATA(__x86_indirect_thunk_array),
	WANT_X86_DATA(__x86_indirect_jump_thunk_array),
	WANT_X86_DATA(__x86_indirect_its_thunk_array),
	/* The exception table a detour's region is checked against (detour.c). */
	WANT_X86_DATA(__start___ex_table),
	WANT_X86_DATA(__stop___ex_table),
};

const struct okp_ksym_want *okp_arch_wanted_symbols(size_t *n)
{
	*n = ARRAY_SIZE(okp_x86_wanted);
	return okp_x86_wanted;
}

bool okp_arch_callable(const char *name, unsigned long fn)
{
	bool ibt = okp_force_ibt_stubs;
	u32 insn;

#ifdef CONFIG_X86_KERNEL_IBT
	ibt = ibt || cpu_feature_enabled(X86_FEATURE_IBT);
#endif
	if (!ibt)
		return true;
	if (copy_from_kernel_nofault(&insn, (void *)fn, sizeof(insn)))
		return false;
	if (insn == OKP_ENDBR64 && !okp_force_ibt_stubs)
		return true;
	if (insn != OKP_ENDBR64 && insn != OKP_SEALED_ENDBR) {
		pr_err("%s starts with neither a live nor a sealed ENDBR64 and this CPU enforces IBT: not calling it\n",
		       name);
		return false;
	}
	if (okp_ibt_npending >= ARRAY_SIZE(okp_ibt_pending) ||
	    okp_ibt_npending * OKP_IBT_STUB_SIZE + OKP_IBT_STUB_SIZE >
		    (unsigned long)(okp_ibt_stub_area_end - okp_ibt_stub_area)) {
		pr_err("%s: its ENDBR64 is sealed and no IBT stub is left: not calling it\n", name);
		return false;
	}
	okp_ibt_pending[okp_ibt_npending++] = fn; /* okp_arch_symbols_check() makes its stub */
	return true;
}

/* The kernel functions okprobes calls through a pointer (each WANT_FN of the glue). */
static void ***okp_called_pointers(size_t *n)
{
	static void **const ptrs[] = {
		(void **)&okp_ksyms.kallsyms_on_each_symbol,
		(void **)&okp_ksyms.module_kallsyms_on_each_symbol,
		(void **)&okp_ksyms.__module_text_address,
		(void **)&okp_ksyms.jump_label_text_reserved,
		(void **)&okp_ksyms.static_call_text_reserved,
		(void **)&okp_ksyms.find_bug,
		(void **)&okp_ksyms.search_exception_tables,
		(void **)&okp_ksyms.ftrace_location,
		(void **)&okp_ksyms.ftrace_location_range,
		(void **)&okp_x86_ksyms.text_poke,
		(void **)&okp_x86_ksyms.text_poke_sync,
		(void **)&okp_x86_ksyms.alternatives_text_reserved,
		(void **)&okp_x86_ksyms.stack_trace_save_tsk_reliable,
		(void **)&okp_x86_ksyms.idle_task,
		&okp_ksyms.rethook_alloc,
		&okp_ksyms.rethook_free,
		&okp_ksyms.rethook_try_get,
		&okp_ksyms.rethook_hook,
		&okp_ksyms.rethook_recycle,
		&okp_ksyms.rethook_add_node,
	};

	*n = ARRAY_SIZE(ptrs);
	return (void ***)ptrs;
}

/*
 * Writes a stub for each sealed function okp_arch_callable() let through and points okp_ksyms
 * (or okp_x86_ksyms) at it. text_poke must be callable directly (live ENDBR); the stubs are new text no CPU has
 * run, so text_poke_sync (itself possibly behind a stub) follows once, after all are written.
 */
static int okp_ibt_make_stubs(void)
{
	void *(*poke)(void *, const void *, size_t) = okp_x86_ksyms.text_poke;
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	size_t nptrs;
	void ***ptrs = okp_called_pointers(&nptrs);
	/* Opaque, so the only relocation is to the (ANNOTATE_NOENDBR) label itself. */
	unsigned long area = (unsigned long)okp_ibt_stub_area;
	unsigned int i, j;

	if (!okp_ibt_npending)
		return 0;
	for (i = 0; i < okp_ibt_npending; i++) {
		if (okp_ibt_pending[i] == (unsigned long)poke) {
			if (!okp_force_ibt_stubs) {
				pr_err("text_poke's ENDBR64 is sealed: cannot write IBT stubs\n");
				return -EOPNOTSUPP;
			}
		}
	}
	if (!poke || !text_mutex)
		return -EOPNOTSUPP;
	OPTIMIZER_HIDE_VAR(area);
	mutex_lock(text_mutex);
	for (i = 0; i < okp_ibt_npending; i++) {
		unsigned long stub = area + i * OKP_IBT_STUB_SIZE;
		long rel = (long)okp_ibt_pending[i] - (long)(stub + 4 + 5);
		u8 code[OKP_IBT_STUB_SIZE];
		u32 endbr = OKP_ENDBR64;
		s32 rel32 = (s32)rel;

		if (rel != rel32) {
			mutex_unlock(text_mutex);
			pr_err("IBT stub out of jmp rel32 reach of %pS\n", (void *)okp_ibt_pending[i]);
			return -ERANGE;
		}
		memset(code, 0xcc, sizeof(code));
		memcpy(code, &endbr, 4);
		code[4] = 0xe9;
		memcpy(code + 5, &rel32, 4);
		poke((void *)stub, code, sizeof(code));
	}
	mutex_unlock(text_mutex);
	for (i = 0; i < okp_ibt_npending; i++) {
		unsigned long stub = area + i * OKP_IBT_STUB_SIZE;

		for (j = 0; j < nptrs; j++) {
			if (*ptrs[j] == (void *)okp_ibt_pending[i])
				*ptrs[j] = (void *)stub;
		}
	}
	if (okp_x86_ksyms.text_poke_sync)
		okp_x86_ksyms.text_poke_sync();
	pr_info("%u kernel function(s) with a sealed ENDBR64 called through IBT stubs%s\n",
		okp_ibt_npending, okp_force_ibt_stubs ? " (ibt_stubs=1: all of them)" : "");
	return 0;
}

/* Every breakpoint okprobes writes goes through text_poke (arch/x86/text_patch.c). */
int okp_arch_symbols_check(void)
{
	int ret = okp_ibt_make_stubs();

	if (ret)
		return ret;
	if (!okp_x86_ksyms.text_poke || !okp_x86_ksyms.text_poke_sync || !okp_ksyms.text_mutex) {
		pr_err("the kernel's text patching (text_poke, text_mutex) is not usable\n");
		return -ENOENT;
	}
	return 0;
}
