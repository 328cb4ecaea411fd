/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel internals only x86's glue uses, found in /proc/kallsyms by symbols.c: text
 * patching, the SMP-alternatives check, and what the jump optimizer reads (the task look of
 * task_snapshot.c, the retpoline thunks and the exception table of detour.c). Each function was
 * proven to be the named function before it is stored; NULL or 0 means "not usable here".
 */
#ifndef OKP_X86_H
#define OKP_X86_H

#include <linux/types.h>

struct task_struct;

struct okp_x86_ksyms {
	void *(*text_poke)(void *addr, const void *opcode, size_t len);
	void (*text_poke_sync)(void);
	int (*alternatives_text_reserved)(void *start, void *end);
	/* NULL without a reliable unwinder (CONFIG_HAVE_RELIABLE_STACKTRACE) / when not found. */
	int (*stack_trace_save_tsk_reliable)(struct task_struct *tsk, unsigned long *store,
					     unsigned int size);
	struct task_struct *(*idle_task)(int cpu);
	unsigned long tasks_rcu_exit_srcu;	/* 6.1's SRCU over do_exit()'s tail (not 6.12) */
	unsigned long __x86_indirect_thunk_array, __x86_indirect_jump_thunk_array;
	unsigned long __x86_indirect_its_thunk_array;
	unsigned long __start___ex_table, __stop___ex_table;
};
extern struct okp_x86_ksyms okp_x86_ksyms;

#endif /* OKP_X86_H */
