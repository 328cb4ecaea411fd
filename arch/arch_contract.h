// SPDX-License-Identifier: GPL-2.0
// The arch contract: everything an architecture provides to the core, declared once, here.
//
// Each arch defines these in namespace okp::arch in arch/<arch>/probe_arch.h (the build puts
// that directory on the include path; an arch without a backend yet includes
// arch/common/probe_arch_unsupported.h). The core includes this header, never an arch's own:
// the checks below run for every arch's build, so a missing or mistyped piece fails there,
// at the line that names it, not in some later use. An arch whose probes can become jumps to
// detours adds the pieces of arch/jump_contract.h.
//
// Hit-path functions (marked [hit]) run in the breakpoint trap or a return stub with
// interrupts or preemption off: no lock, no allocation, nothing that can fault unprotected.
#pragma once

#include "arch/common/arch_types.h"
#include "core/error_or.h"
#include "probe_arch.h"
#include "seam/kernel_services.h"

namespace okp::arch {
// Whether this arch replaces breakpoints by jumps to detours: then it also provides the jump
// contract (arch/jump_contract.h) and the core builds its jump optimizer (core/optimizer/).
#ifdef OKP_JUMP_PROBES
inline constexpr bool kJumpProbes = true;
#else
inline constexpr bool kJumpProbes = false;
#endif
}  // namespace okp::arch

namespace okp::arch::contract {

template <typename A, typename B> struct Same { static constexpr bool value = false; };
template <typename A> struct Same<A, A> { static constexpr bool value = true; };

// The checks of a contract's pieces (this one, and arch/jump_contract.h's).
#define OKP_ARCH_PROVIDES(piece, ...)                                            \
  static_assert(Same<decltype(&::okp::arch::piece), __VA_ARGS__>::value,         \
                "the arch must provide okp::arch::" #piece " as " #__VA_ARGS__)
#define OKP_ARCH_CONSTANT(piece, ...)                                            \
  static_assert(Same<decltype(::okp::arch::piece), const __VA_ARGS__>::value,    \
                "the arch must provide constexpr okp::arch::" #piece " of type " #__VA_ARGS__)

// --- Types and sizes ---------------------------------------------------------------------
// Plan: how one probed instruction runs under a breakpoint (decoded once, at registration).
static_assert(sizeof(::okp::arch::Plan) > 0, "every arch provides okp::arch::Plan");
OKP_ARCH_CONSTANT(kSlotSize, usize);         // bytes of one out-of-line slot
OKP_ARCH_CONSTANT(kMaxInsnLength, usize);    // longest instruction
OKP_ARCH_CONSTANT(kMaxBreakpointSize, usize);  // longest breakpoint any plan asks for
static_assert(::okp::arch::kMaxBreakpointSize <= kBreakpointCapacity, "Breakpoint has no room");
OKP_ARCH_CONSTANT(kMaxPatchSize, usize);     // longest patch at a site (breakpoint or jump)
static_assert(::okp::arch::kMaxPatchSize >= ::okp::arch::kMaxBreakpointSize, "a site keeps its breakpoint's bytes");
OKP_ARCH_CONSTANT(kReturnStubs, u32);        // return stubs in okprobes' text (0: no return probes)
OKP_ARCH_CONSTANT(kReturnStubSize, usize);

// --- Breakpoint encoding -------------------------------------------------------------------
// The breakpoint a plan's site is armed with: bytes and size come from the plan, per site
// (riscv64 needs a 2-byte c.ebreak on a compressed instruction, a 4-byte ebreak otherwise).
OKP_ARCH_PROVIDES(breakpoint_of, Breakpoint (*)(const Plan&));
// [hit] The probe address a breakpoint trap reports.
OKP_ARCH_PROVIDES(breakpoint_address, okp_addr_t (*)(const okp_regs*));

// --- Decode and plan (registration, process context) ---------------------------------------
// A probe asked at a function's first byte goes past its landing pad (ENDBR64, BTI).
OKP_ARCH_PROVIDES(skip_landing_pad, okp_addr_t (*)(okp_addr_t, okp_addr_t));
// Proves addr is an instruction boundary by decoding from the function start (recovering the
// original bytes under breakpoints through recover), then plans the instruction; an error's
// reason says why not (formatted: offsets, nearest boundaries, the instruction).
OKP_ARCH_PROVIDES(check_and_plan, ErrorOr<Plan> (*)(okp_addr_t addr, okp_addr_t func_start,
                                                    unsigned long func_size, okp_addr_t slot,
                                                    RecoverFn recover));
// The bytes the kernel's own kprobes must be kept off while okprobes' patch is at a site (their
// decoder would misread it; x86-64: arch/x86/kernel_walk.cpp): how many ranges it wrote, 0
// when nothing needs fencing. (addr, patch_len, covered, func_start, func_size, recover, out)
OKP_ARCH_PROVIDES(kernel_kprobe_fences, usize (*)(okp_addr_t, usize, usize, okp_addr_t,
                                                  unsigned long, RecoverFn,
                                                  KernelFence (&)[kMaxKernelFences]));
OKP_ARCH_PROVIDES(needs_slot, bool (*)(const Plan&));
OKP_ARCH_PROVIDES(boostable, bool (*)(const Plan&));
OKP_ARCH_PROVIDES(insn_length, usize (*)(const Plan&));
OKP_ARCH_PROVIDES(mnemonic, const char* (*)(const Plan&));

// --- Slot building (registration) ------------------------------------------------------------
OKP_ARCH_PROVIDES(build_slot, void (*)(const Plan&, okp_addr_t addr, const u8* original,
                                       okp_addr_t slot, bool boost, u8 (&image)[kSlotSize]));

// --- Stepping and emulation [hit] -------------------------------------------------------------
OKP_ARCH_PROVIDES(instruction_pointer, okp_addr_t (*)(const okp_regs*));
OKP_ARCH_PROVIDES(set_instruction_pointer, void (*)(okp_regs*, okp_addr_t));
OKP_ARCH_PROVIDES(begin_step, void (*)(okp_regs*, okp_addr_t slot, unsigned long* saved_flags));
OKP_ARCH_PROVIDES(is_step_exit, bool (*)(const Plan&, okp_addr_t slot, okp_addr_t bp));
OKP_ARCH_PROVIDES(end_step, void (*)(const Plan&, okp_addr_t addr, okp_regs*, unsigned long saved_flags));
OKP_ARCH_PROVIDES(restore_trap_ip, void (*)(okp_regs*, okp_addr_t addr));
OKP_ARCH_PROVIDES(enter_boosted, void (*)(okp_regs*, okp_addr_t slot));
OKP_ARCH_PROVIDES(emulate, ErrorOr<void> (*)(const Plan&, okp_addr_t addr, okp_regs*));
// The kprobes convention for a function-entry probe served by ftrace: the ip handlers see.
OKP_ARCH_PROVIDES(ftrace_pre_ip, okp_addr_t (*)(okp_addr_t site));
OKP_ARCH_PROVIDES(ftrace_post_ip, okp_addr_t (*)(okp_addr_t site));

// --- Return probes [hit] ------------------------------------------------------------------------
OKP_ARCH_PROVIDES(return_stub_address, okp_addr_t (*)(u32 index));
// At a function's entry: the return address (a stack slot on x86-64, x30/ra on arm64/riscv64),
// replacing it, and the frame's identity (a value that differs between live frames of one task,
// e.g. the entry stack pointer), which reclaim compares without reading the stack.
OKP_ARCH_PROVIDES(return_address, okp_addr_t (*)(const okp_regs*));
OKP_ARCH_PROVIDES(set_return_address, void (*)(okp_regs*, okp_addr_t));
OKP_ARCH_PROVIDES(return_frame, okp_addr_t (*)(const okp_regs*));
// The task an entry runs in (the kernel's current), which a frame's instance records.
OKP_ARCH_PROVIDES(current_task, void* (*)());
// Reclaim (process context or the task-free hook): may frame, armed with stub, still return
// through it? false when it provably never will (the stack no longer holds the stub).
OKP_ARCH_PROVIDES(frame_may_return, bool (*)(okp_addr_t frame, u32 index));
// Functions a return probe must refuse on this arch (context switch, ...), with the reason;
// the core adds the arch-neutral ones (do_exit, panic, ...).
static_assert(Same<decltype(::okp::arch::kReturnProbeUnsafe[0]), const UnsafeFunction&>::value,
              "every arch provides okp::arch::kReturnProbeUnsafe (UnsafeFunction[])");

// --- The trap path (core/trap_path.h) ------------------------------------------------------------
// The kernel's own breakpoint-entry functions on the way to okprobes (kernel-mode branch).
static_assert(sizeof(::okp::arch::kTrapEntryFunctions[0]) == sizeof(const char*),
              "every arch provides okp::arch::kTrapEntryFunctions (names)");
OKP_ARCH_PROVIDES(direct_branch, ErrorOr<BranchStep> (*)(const u8*, usize, okp_addr_t));
// Data, not code, at the end of a function's extent (which runs up to the next symbol): given
// its last kTrailingDataWindow bytes, how many of them to leave undecoded (0 where the arch
// has none: kTrailingDataWindow 0, nothing read).
OKP_ARCH_CONSTANT(kTrailingDataWindow, usize);
OKP_ARCH_PROVIDES(trailing_data_bytes, usize (*)(const u8*));

}  // namespace okp::arch::contract
