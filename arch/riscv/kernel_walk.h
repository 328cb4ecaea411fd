// SPDX-License-Identifier: GPL-2.0
// Where the kernel's own kprobes must be kept off okprobes' patch (riscv64): see kernel_walk.cpp.
#pragma once

#include "arch/common/arch_types.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp::arch {

// The end of the bytes from addr on that the kernel's kprobes must be kept off while
// okprobes' patch of patch_len bytes (a breakpoint: the instruction's own size; the jump:
// auipc/jalr 8, jal 4) standing for covered original bytes (the instruction, or the jump's
// region) is at addr: the first real instruction boundary at or after addr + covered that the
// kernel's walk from addr + patch_len lands on (the function's end when none is found within
// reach).
okp_addr_t kernel_kprobe_fence_end(okp_addr_t addr, usize patch_len, usize covered,
                                   okp_addr_t func_start, unsigned long func_size,
                                   RecoverFn recover);

// The one range to fence for that patch: [addr, kernel_kprobe_fence_end). The kernel's riscv
// kprobes have no optprobes, so no branch target needs a fence of its own. Returns 1.
usize kernel_kprobe_fences(okp_addr_t addr, usize patch_len, usize covered, okp_addr_t func_start,
                           unsigned long func_size, RecoverFn recover,
                           KernelFence (&out)[kMaxKernelFences]);

}  // namespace okp::arch
