/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For lib/test_kprobes.c built against okprobes (tests/compat/Kbuild): a return probe diverts
 * the return address to one of okprobes' return stubs, which the kernel's unwinder does not
 * know (it maps back only its own kretprobe trampoline), so a stack trace through a probed
 * frame stops at the stub. The test's stack-trace cases are left out, as on an arch that
 * does not select ARCH_CORRECT_STACKTRACE_ON_KRETPROBE.
 */
#undef CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE
