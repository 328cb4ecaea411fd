/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return probes on the kernel's rethook (src/kernel/rethook.c): not on this arch, so its return
 * probes use okprobes' own stubs (debugfs return_probes gives OKP_ARCH_RETHOOK_WHY_NOT).
 * Why: riscv64 has a rethook (6.12), but its unwinder recovers only the function graph tracer's
 * return addresses, not rethook's: a stack trace through the kernel's own kretprobes stops at
 * the trampoline too. Rethook would cost its trampoline and give nothing the stubs lack.
 * An arch that plugs in defines OKP_ARCH_RETHOOK_FRAME 1 and okp_arch_rethook_frame(),
 * okp_arch_rethook_return_address() and okp_arch_rethook_divert() (see x86's).
 */
#ifndef OKP_RETHOOK_FRAME_H
#define OKP_RETHOOK_FRAME_H

/* Return probes through the kernel's kretprobe trampoline (kretprobe_route.c): not here. */
#define OKP_KRETPROBE_ROUTE 0
#define OKP_ARCH_RETHOOK_FRAME 0
#define OKP_ARCH_RETHOOK_WHY_NOT "riscv64's unwinder recovers no rethook frames, so rethook gains nothing over the stubs"

#endif /* OKP_RETHOOK_FRAME_H */
