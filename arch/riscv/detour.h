// SPDX-License-Identifier: GPL-2.0
// The riscv64 detour: what a jump-optimized probe's `auipc R, hi; jalr x0, lo(R)` leads to,
// R being the register dead at the region (arch/riscv/detour_region.h, dead_register.h).
// The region is the 2 to 4 instructions under those 8 bytes. Where the detour is within a
// jal's reach of the probe (+-1 MiB), the jump is `jal x0, buffer+24` (4 bytes, no register)
// and the region the 1 or 2 instructions under it.
//
//   buffer+0   the probe address (8 bytes of data)
//   buffer+8   the core's site (8-aligned), or'ed with kDetourHasPost when the copy calls the
//              post entry (8 bytes)
//   buffer+16  R's place in a pt_regs, 8 x R's number (8 bytes), which the pre entry zeroes
//              without a multiply; 0 under a jal with no dead register (nothing to hide from
//              handlers: the jal wrote no register; 0 is epc's place, which the core writes)
//   buffer+24  addi sp, sp, -320          <- the jump lands here; the entry's whole frame
//                                         (kDetourEntryFrame: a pt_regs, then the entry's
//                                         own words) on the probed code's stack (no red zone
//                                         in the kernel)
//   buffer+28  sd   ra, 8(sp)             ra in the frame's pt_regs (its ra): the call below
//                                         needs a link register, and only R is free, which
//                                         the entry cannot name
//   buffer+32  auipc ra, hi(entry)
//   buffer+36  jalr ra, lo(entry)(ra)     okp_detour_entry: saves the rest of the pt_regs
//                                         (sp + 320 as sp; the core writes the probe address
//                                         as epc), runs the pre handlers, restores every
//                                         register but ra and sp from it and returns here
//                                         (ra = buffer+40 names the detour); or, when a
//                                         handler changed epc, restores everything and goes
//                                         there by sret (sepc, SPP = S, SPIE as at the
//                                         probe): the one way to an arbitrary address with no
//                                         register changed
//   buffer+40  ld   ra, 8(sp)             pt_regs' ra: a handler's change takes effect
//   buffer+44  addi sp, sp, 320
//   buffer+48  the copy: the region relocated, every way out of it `jal x0` where one
//              reaches, else `auipc R, hi; jalr x0, lo(R)`, to where the original goes on
//              (with neither, refused); a breakpoint hit on a site
//              whose detour is published resumes here too, with the probed code's registers.
//   then       literals the copy loads (8-aligned)
//
// What handlers see in R: 0. R is dead at the probe, so no instruction of the probed code
// reads the value it had before the jump, and nothing can say what it was (the pair
// overwrote it with an address near the detour, which a handler must not take for probed
// state). The pre entry writes 0 into pt_regs' R before the handlers run (it reads R's
// place from buffer+16) and restores R from the frame like any register, so R is 0 when the
// copy starts; a handler's write to R changes nothing the probed code reads. The post entry
// must not touch R: after the first instruction R may be live (the region may write it and
// read it again: `addi t0, a2, -10; addi a1, t0, 12`), and post handlers see it as it is
// (the first instruction's result, or the pre entry's 0).
//
// With post handlers each way on from the first instruction goes through a post call first,
// with the ip post handlers see as data after it:
//              [c.nop / nop until the data is 8-aligned]
//              addi sp, sp, -320; sd ra, 8(sp); auipc ra, hi(post); jalr ra, lo(post)(ra)
//   ret:       .dword <the ip post handlers see: where the first instruction went>
//              ld ra, 8(sp); addi sp, sp, 320
// The post entry returns to ret + 8 (detour_post_resume). Interrupts stay masked from the pre
// handlers to the post handlers (the pre entry's begin_step), as during a step.
//
// Relocation (every instruction that reads the pc is rewritten; none needs a trap):
//   auipc rd                       auipc rd, 0; ld rd, <literal: the original's value>
//   jal x0, c.j, far `tail`        auipc R; jalr x0 to the target
//   beq..bgeu, c.beqz, c.bnez      the inverted branch over `auipc R; jalr x0` to the target
//                                  (c.beqz/c.bnez become beq/bne rs1', x0)
//   jal ra, far `call`             auipc ra, 0; ld ra, <next>; then to the target through R:
//                                  the callee returns to the original code after the region,
//                                  never into the detour (freed while a callee may sleep)
//   jalr ra / c.jalr (through rs)  addi R, rs, imm (the target, before ra changes); ra as
//                                  above; jalr x0, 0(R)
//   ret, c.jr ra                   copied as it is (the region's flow ends there)
//   anything else                  copied as it is (2 or 4 bytes); the last one is followed
//                                  by the way back, `auipc R; jalr x0` to the region's end
// A call is only the region's last instruction; an instruction after one that ends the flow
// is never reached (nothing branches inside the region) and is not copied. Every auipc/jalr
// pair reaches +-2 GiB: a target out of reach of the detour is refused with a reason.
//
// Freestanding and independent of the build's arch: the host tests relocate on x86-64.
#pragma once

#include "arch/common/arch_types.h"
#include "arch/riscv/detour_region.h"
#include "core/error_or.h"

namespace okp::riscv {

constexpr usize kDetourSiteOffset = 8;
constexpr u64 kDetourHasPost = 1;
constexpr usize kDetourDeadRegOffset = 16;
// What the header holds at kDetourDeadRegOffset for R: its place in a pt_regs (epc, x1..x31).
constexpr u64 detour_dead_slot(u8 reg) { return u64{reg} * 8; }
constexpr usize kDetourCallOffset = 24;  // the jump's target
constexpr usize kDetourCopyOffset = 48;
// The stack the call into an entry takes (the pre entry's and each post call's): the entry's
// whole frame, a pt_regs (epc, x1..x31, status and three more words) then the entry's own
// words (src/kernel/arch/riscv/detour_layout.h), 16-aligned; ra goes to the pt_regs' ra. So
// the entry neither moves sp nor copies ra, and the ra the detour reloads is the handlers'.
constexpr i32 kDetourEntryFrame = 320;
constexpr i32 kDetourEntryRaSlot = 8;
// Bytes of slot cells the longest detour takes (a branch with post handlers first, then
// three compressed branches; a literal); the host tests check every region shape fits.
constexpr usize kMaxDetourSize = 192;
static_assert(kMaxDetourSize <= arch::kDetourCapacity, "DetourPlan has no room for a detour");
static_assert(kJumpSize <= arch::kJumpCapacity, "DetourPlan has no room for the jump");

// What plan_detour needs of the kernel around it.
struct DetourEnv {
  okp_addr_t entry;       // okp_detour_entry
  okp_addr_t post_entry;  // okp_detour_post_entry, or 0: no post handlers
};

// The detour for a checked region (check_detour_region), to be written at buffer: with a jal
// at the probe where one reaches buffer (then the region may have been checked for kJalSize
// and have no dead register: a way out beyond a jal's reach is refused), else with the pair
// (the region checked for kJumpSize, R found). An error's reason starts "not optimized: ".
ErrorOr<arch::DetourPlan> plan_detour(const DetourRegion& region, okp_addr_t buffer,
                                      const DetourEnv& env);

// Whether `auipc; jalr` reaches from `from` to `to` (+-2 GiB, less the low part's sign).
bool pair_reaches(okp_addr_t from, okp_addr_t to);
// The jump at addr reaches a detour at buffer, and every way back from it reaches addr's
// neighbourhood.
inline bool detour_reaches(okp_addr_t addr, okp_addr_t buffer) {
  return pair_reaches(addr, buffer + kDetourCallOffset) &&
         pair_reaches(buffer + kMaxDetourSize, addr) && pair_reaches(buffer, addr + 0x10000);
}

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
// [hit] From the post entry's return address: the ip post handlers see is the data word
// there; the copy goes on after it.
inline okp_addr_t detour_post_next_ip(okp_addr_t ret) {
  return *reinterpret_cast<const u64*>(ret);
}
inline okp_addr_t detour_post_resume(okp_addr_t ret) { return ret + 8; }

// The instruction words the detour is made of (also for the tests' decoding).
u32 encode_auipc(u8 rd, i32 hi20);
u32 encode_jalr(u8 rd, u8 rs1, i32 imm12);
// jal rd from `from` to `to`; 0 when out of reach (+-1 MiB; no jal encodes as 0).
u32 encode_jal(u8 rd, okp_addr_t from, okp_addr_t to);
// The pair's parts for delta = to - from: hi for the auipc, lo for the jalr/addi/ld.
void split_pair(i64 delta, i32* hi, i32* lo);

}  // namespace okp::riscv
