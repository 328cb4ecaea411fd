/* SPDX-License-Identifier: GPL-2.0 */
/* riscv64's kernel internals, found in /proc/kallsyms by symbols.c (0: not found). */
#ifndef OKP_RISCV_TEXT_PATCH_H
#define OKP_RISCV_TEXT_PATCH_H

/* int patch_text_nosync(void *addr, const void *insns, size_t len) */
extern unsigned long okp_riscv_patch_text_nosync;

/* What the jump probes' region check and switch read (detour.c, text_patch.c). */
struct okp_riscv_ksyms {
	unsigned long __start___ex_table, __stop___ex_table;
	unsigned long __start___bug_table, __stop___bug_table;
	/* patch.c's flag that a patch is made inside stop_machine (text_mutex held by the
	 * caller, not the stopper: lockdep's check is skipped as for the kernel's patch_text). */
	unsigned long riscv_patch_in_stop_machine;
	/* void flush_module_init_free_work(void): waits for the queued frees of modules' init
	 * memory (text_patch.c, before a stop_machine). */
	unsigned long flush_module_init_free_work;
	/* The work item that frees them (kernel/module/main.c's static init_free_wq): polled
	 * with work_busy() where found, so a long wait is no hung task (text_patch.c). */
	unsigned long init_free_wq;
	/* The task look on a preemptible kernel (task_look.c): the exception entry's code and
	 * the fork returns (code labels, never called), bool kernel_text_address(unsigned long)
	 * and unsigned int nr_running(void). */
	unsigned long handle_exception, ret_from_exception, ret_from_exception_end;
	unsigned long ret_from_fork, ret_from_kernel_thread, ret_from_fork_kernel_asm,
		      ret_from_fork_user_asm;
	unsigned long kernel_text_address, nr_running;
};
extern struct okp_riscv_ksyms okp_riscv_ksyms;

#endif /* OKP_RISCV_TEXT_PATCH_H */
