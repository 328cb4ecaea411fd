// SPDX-License-Identifier: GPL-2.0
// The arm64 detour: what a jump-optimized probe's `b` leads to. One instruction is the region
// (every A64 instruction is one aligned word), so a region has no inside and the optimizer
// never waits for tasks before patching.
//
//   buffer+0   the probe address (8 bytes of data)
//   buffer+8   the core's site (8-aligned), or'ed with kDetourHasPost when the copy calls the
//              post entry (8 bytes)
//   buffer+16  stp  x0, x30, [sp, #-16]!   the two registers the call below needs, on the
//                                          probed code's stack (no red zone on arm64)
//   buffer+20  nop                         (ldr x30, =okp_detour_entry where the entry is out
//   buffer+24  bl   okp_detour_entry        of a bl's reach: blr x30; a detour near the
//                                          kernel's text, text_padding.c)
//                                          saves a pt_regs, runs the pre handlers, restores
//                                          every other register and NZCV/DAIF from it, writes
//                                          x0 and x30 from it into the pair, and returns here;
//                                          or, when a handler changed pc, restores everything
//                                          and erets there (src/kernel/arch/arm64/detour_entry.S)
//   buffer+28  ldp  x0, x30, [sp], #16
//   buffer+32  the copy: the instruction relocated, every way out of it a `b` (its target, or
//              the next instruction); a breakpoint hit on a site whose detour is published
//              resumes here too, with the probed code's registers.
//   then       literals the copy loads (8-aligned)
//
// With post handlers every way out of the copy goes first through a post call:
//              stp x0, x30, [sp, #-16]!; nop; bl okp_detour_post_entry; ldp x0, x30, [sp], #16
//              (or ldr x30, =okp_detour_post_entry; blr x30 for the nop and the bl)
//              b <where execution goes on>
// The post entry returns to the ldp (its return address); the ip post handlers see is the
// target of the `b` after it. Interrupts stay masked from the pre handlers to the post
// handlers (the pre entry's begin_step masks DAIF in the frame it restores), as during a step.
//
// Relocation (every instruction that reads the PC is rewritten, so none needs the trap):
//   b, b.cond, cbz/cbnz, tbz/tbnz  their target re-encoded from the copy (a conditional one
//                                  over a `b` to the next instruction)
//   bl                             ldr x30, =<next>; b <target>  (x30 is the original's)
//   adr, adrp                      ldr xd, =<value>
//   ldr wt|xt, ldrsw xt (literal)  ldr xt, =<literal's address>; ldr wt|xt / ldrsw xt, [xt]
//   prfm (literal)                 nothing (a hint)
//   blr xn                         ldr x30, =<next>; br xn  (not with BTI enforced: br's
//                                  branch type does not match a callee's `bti c`)
//   br, ret, anything else         copied as it is
// A branch target the copy cannot reach (±128 MiB, ±1 MiB, ±32 KiB for the forms above from
// the copy) is refused with a reason; so is, where the kernel enforces BTI, a landing pad (an
// indirect branch would land on the `b`, which is none). paciasp runs in the copy as at the
// probe: it signs x30 with sp, and both are the probed code's there.
//
// Freestanding and independent of the build's arch: the host tests relocate on x86-64.
#pragma once

#include "arch/arm64/insn_plan.h"
#include "arch/common/arch_types.h"
#include "core/error_or.h"

namespace okp::arm64 {

constexpr usize kDetourSiteOffset = 8;
constexpr u64 kDetourHasPost = 1;
constexpr usize kDetourCallOffset = 16;  // stp; nop or ldr; bl or blr; ldp
constexpr usize kDetourCopyOffset = 32;
// Bytes of slot cells a detour takes: the longest copy (b.cond with post: 11 words) and three
// literals (the entries', one the copy loads).
constexpr usize kMaxDetourSize = 104;
static_assert(kMaxDetourSize <= arch::kDetourCapacity, "DetourPlan has no room for a detour");

// What plan_detour needs of the kernel around it.
struct DetourEnv {
  okp_addr_t entry;       // okp_detour_entry
  okp_addr_t post_entry;  // okp_detour_post_entry, or 0: no post handlers
  bool bti;               // the kernel enforces BTI on its text
};

// The detour for the probe at addr, whose original word is insn, to be written at buffer.
// An error's reason starts "not optimized: ".
ErrorOr<arch::DetourPlan> plan_detour(okp_addr_t addr, u32 insn, okp_addr_t buffer,
                                      const DetourEnv& env);

// The core's site in a planned detour's image / [hit] from the copy's address.
void set_detour_site(arch::DetourPlan* plan, okp_addr_t site);
inline okp_addr_t detour_site(okp_addr_t copy) {
  return *reinterpret_cast<const u64*>(copy - kDetourCopyOffset + kDetourSiteOffset) &
         ~kDetourHasPost;
}
inline bool detour_has_post(okp_addr_t copy) {
  return *reinterpret_cast<const u64*>(copy - kDetourCopyOffset + kDetourSiteOffset) &
         kDetourHasPost;
}
// [hit] From the post entry's return address (the ldp after its bl): the ip post handlers see
// is the target of the `b` that follows the ldp; the copy goes on at the ldp.
inline okp_addr_t detour_post_next_ip(okp_addr_t ret) {
  const u32 b = *reinterpret_cast<const u32*>(ret + kInsnSize);
  const i64 delta = static_cast<i64>(static_cast<u64>(b & 0x3ffffff) << 38) >> 36;
  return ret + kInsnSize + delta;
}
inline okp_addr_t detour_post_resume(okp_addr_t ret) { return ret; }

// `b` from at to target, if in reach (0 otherwise: no `b` encodes as 0).
u32 encode_b(okp_addr_t at, okp_addr_t target);
// bti c / j / jc, paciasp / pacibsp (which an indirect call may land on as well).
bool is_landing_pad(u32 insn);

}  // namespace okp::arm64
