/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Porting header: builds an unmodified kprobes module against okprobes.
 *
 *   ccflags-y += -I$(OKPROBES)/include -include okprobes/kprobes_compat.h
 *
 * It stands in for <linux/kprobes.h> (whose include guard it takes, so the module's own
 * #include <linux/kprobes.h> adds nothing) and maps every name a module uses from it onto
 * okprobes.h's: struct kprobe is struct okp_kprobe, register_kprobe() is
 * okp_register_kprobe(), and so on. The names are macros, so the module's code, its
 * handlers' types and any later declaration all see okprobes' types. The kernel's
 * internals (kprobe_running(), get_kprobe(), the ctlblk, insn slots, kretprobe_find_ret_addr()'s
 * cursor) have no counterpart: a module using them fails to build, and docs/api.md's table
 * of differences says why.
 *
 * It includes no kernel header: -include puts it before the module's first line, where a
 * kernel header would define the default pr_fmt before the module defines its own (the
 * kernel's samples/kprobes/kprobe_example.c does). It takes the include guards of
 * <linux/kprobes.h> and of <asm-generic/kprobes.h> (the kernel's annotation macros) and gives
 * their names okprobes' meaning instead. So a module relying on <linux/kprobes.h> for an
 * unrelated header (<linux/ftrace.h>, <linux/rcupdate.h>, ...) includes that header itself,
 * except for KSYM_NAME_LEN, defined here as <linux/kallsyms.h> does (the samples size their
 * symbol parameter with it); and a kernel header that needs the kernel's kprobes internals
 * (<linux/kgdb.h>'s within_kprobe_blacklist()) does not build beside it.
 *
 * Include it first (-include does): <linux/kprobes.h>, or a header including it, included
 * before would already have declared the kernel's struct kprobe.
 */
#ifndef OKPROBES_KPROBES_COMPAT_H
#define OKPROBES_KPROBES_COMPAT_H

#ifdef _LINUX_KPROBES_H
#error "<linux/kprobes.h> was included before okprobes/kprobes_compat.h: include the latter first (-include)"
#endif

#include <okprobes/okprobes.h>

/* From here on, #include <linux/kprobes.h> is this header, and the annotations are okprobes'. */
#define _LINUX_KPROBES_H
#define _ASM_GENERIC_KPROBES_H

/* Token for token <linux/kallsyms.h>'s (6.1 to 6.12), so that its definition adds nothing;
 * a kernel that changes it fails the module's build with "KSYM_NAME_LEN redefined". */
#define KSYM_NAME_LEN 512

/* Types. kprobe_opcode_t is the kernel's type (layout_checks.c checks it), so where the
 * kernel declares it too the two declarations agree. */
#define kprobe_opcode_t okp_kprobe_opcode_t
#define kprobe okp_kprobe
#define kretprobe okp_kretprobe
#define kretprobe_instance okp_kretprobe_instance
#define kprobe_pre_handler_t okp_kprobe_pre_handler_t
#define kprobe_post_handler_t okp_kprobe_post_handler_t
#define kretprobe_handler_t okp_kretprobe_handler_t

/* Flags: the same values (src/kernel/layout_checks.c checks them against the kernel's). */
#define KPROBE_FLAG_GONE OKP_KPROBE_FLAG_GONE
#define KPROBE_FLAG_DISABLED OKP_KPROBE_FLAG_DISABLED
#define KPROBE_FLAG_OPTIMIZED OKP_KPROBE_FLAG_OPTIMIZED
#define KPROBE_FLAG_FTRACE OKP_KPROBE_FLAG_FTRACE
#define KPROBE_FLAG_ON_FUNC_ENTRY OKP_KPROBE_FLAG_ON_FUNC_ENTRY
#define KRETPROBE_MAX_DATA_SIZE OKP_KRETPROBE_MAX_DATA_SIZE

/* Probes. */
#define register_kprobe okp_register_kprobe
#define unregister_kprobe okp_unregister_kprobe
#define register_kprobes okp_register_kprobes
#define unregister_kprobes okp_unregister_kprobes
#define enable_kprobe okp_enable_kprobe
#define disable_kprobe okp_disable_kprobe
#define kprobe_gone okp_kprobe_gone
#define kprobe_disabled okp_kprobe_disabled
#define kprobe_optimized okp_kprobe_optimized
#define kprobe_ftrace okp_kprobe_ftrace
#define wait_for_kprobe_optimizer okp_wait_for_optimizer

/* Return probes. */
#define register_kretprobe okp_register_kretprobe
#define unregister_kretprobe okp_unregister_kretprobe
#define register_kretprobes okp_register_kretprobes
#define unregister_kretprobes okp_unregister_kretprobes
#define enable_kretprobe okp_enable_kretprobe
#define disable_kretprobe okp_disable_kretprobe
#define get_kretprobe okp_get_kretprobe
#define get_kretprobe_retaddr okp_get_kretprobe_retaddr
#define is_kretprobe_trampoline okp_is_kretprobe_trampoline

/*
 * Annotations. __kprobes is the same section either way; NOKPROBE_SYMBOL becomes okprobes'
 * (read whether or not the kernel has kprobes, where the kernel's would be empty);
 * nokprobe_inline always inlines, as the kernel's does with kprobes.
 */
#define __kprobes __okp_kprobes
#define NOKPROBE_SYMBOL(fname) OKP_NOKPROBE_SYMBOL(fname)
#define nokprobe_inline okp_nokprobe_inline

#endif /* OKPROBES_KPROBES_COMPAT_H */
