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
 * Include it first (-include does): the kernel's <linux/kprobes.h>, or a header including
 * it, included before would already have declared the kernel's struct kprobe.
 */
#ifndef OKPROBES_KPROBES_COMPAT_H
#define OKPROBES_KPROBES_COMPAT_H

#ifdef _LINUX_KPROBES_H
#error "<linux/kprobes.h> was included before okprobes/kprobes_compat.h: include the latter first (-include)"
#endif

/*
 * What <linux/kprobes.h> includes, so that a module relying on it for them still builds. Its
 * <asm/kprobes.h> also defines the kernel's annotation macros (asm-generic/kprobes.h), which
 * are redefined below; the kernel's kprobe_opcode_t comes from there on a kernel with kprobes.
 */
#include <linux/compiler.h>
#include <linux/linkage.h>
#include <linux/list.h>
#include <linux/notifier.h>
#include <linux/smp.h>
#include <linux/bug.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/rcupdate.h>
#include <linux/mutex.h>
#include <linux/ftrace.h>
#include <linux/refcount.h>
#include <linux/ptrace.h>
#include <asm/kprobes.h>

#include <okprobes/okprobes.h>

/* From here on, #include <linux/kprobes.h> is this header. */
#define _LINUX_KPROBES_H

#ifndef CONFIG_KPROBES
/* The kernel declares it in <asm/kprobes.h> only with kprobes; okprobes needs none. */
typedef okp_kprobe_opcode_t kprobe_opcode_t;
#endif

/* Types. */
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
#undef __kprobes
#define __kprobes __okp_kprobes
#undef NOKPROBE_SYMBOL
#define NOKPROBE_SYMBOL(fname) OKP_NOKPROBE_SYMBOL(fname)
#undef nokprobe_inline
#define nokprobe_inline okp_nokprobe_inline

#endif /* OKPROBES_KPROBES_COMPAT_H */
