// SPDX-License-Identifier: GPL-2.0
// Where the kernel's own kprobes would misread okprobes' bytes (x86-64): see kernel_walk.cpp.
#pragma once

#include "arch/common/arch_types.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp::arch {

// The end of the bytes from addr on that the kernel's kprobes must be kept off while
// okprobes' patch of patch_len bytes (int3: 1, jmp rel32: 5) standing for covered original
// bytes (the instruction, or the jump's region) is at addr: the first real instruction
// boundary at or after addr + covered that the kernel's decoding walk lands on.
okp_addr_t kernel_kprobe_fence_end(okp_addr_t addr, usize patch_len, usize covered,
                                   okp_addr_t func_start, unsigned long func_size,
                                   RecoverFn recover);

// Every range to fence for that patch: [addr, kernel_kprobe_fence_end), then [T - 4, T) for
// each branch target T in the function of a real instruction the kernel cannot see there
// (its can_optimize() would miss a jump into an optprobe's jmp), or the whole function when
// one of them is an indirect jump or there are too many. Returns how many it wrote.
usize kernel_kprobe_fences(okp_addr_t addr, usize patch_len, usize covered, okp_addr_t func_start,
                           unsigned long func_size, RecoverFn recover,
                           KernelFence (&out)[kMaxKernelFences]);

}  // namespace okp::arch
