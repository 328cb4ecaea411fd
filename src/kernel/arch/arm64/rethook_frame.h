/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return probes on the kernel's rethook (src/kernel/rethook.c): not on this arch yet, so its
 * return probes use okprobes' own stubs (debugfs return_probes says why). An arch that plugs
 * in defines OKP_ARCH_RETHOOK_FRAME 1 and okp_arch_rethook_prepare() (see x86's).
 */
#ifndef OKP_RETHOOK_FRAME_H
#define OKP_RETHOOK_FRAME_H

#define OKP_ARCH_RETHOOK_FRAME 0

#endif /* OKP_RETHOOK_FRAME_H */
