/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return probes on the kernel's rethook (src/kernel/rethook.c): not on this arch, so its return
 * probes use okprobes' own stubs (debugfs return_probes gives OKP_ARCH_RETHOOK_WHY_NOT).
 * Why: the kernel has no rethook on arm64 (through 6.12 arm64 does not select HAVE_RETHOOK; its
 * kretprobes keep their own trampoline, which its unwinder recovers through kretprobe state a
 * module cannot add to), so a stack trace through a return-probed frame stops at the stub.
 * An arch that plugs in defines OKP_ARCH_RETHOOK_FRAME 1 and okp_arch_rethook_frame(),
 * okp_arch_rethook_return_address() and okp_arch_rethook_divert() (see x86's).
 */
#ifndef OKP_RETHOOK_FRAME_H
#define OKP_RETHOOK_FRAME_H

#define OKP_ARCH_RETHOOK_FRAME 0
#define OKP_ARCH_RETHOOK_WHY_NOT "the kernel has no rethook on arm64"

#endif /* OKP_RETHOOK_FRAME_H */
