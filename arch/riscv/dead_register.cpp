// SPDX-License-Identifier: GPL-2.0
// The register dead at a riscv64 jump probe's region (dead_register.h says why each
// place counts).
#include "arch/riscv/dead_register.h"

namespace okp::riscv {

RegSet dead_in_region(const FunctionFlow& flow, u32 first, u32 n) {
  // Dead after the jump pair writes R at the region's start: no path from there reads R
  // before writing it (this covers the region's own instructions, which the detour runs in
  // their order, touching R nowhere between them).
  RegSet live = flow.live_in(first);
  const u32 end = first + n;  // the index after the region (may be count(): off the code)
  const RegSet after = end < flow.count() ? flow.live_in(end) : kAllRegs;
  // Every place the detour writes R again: each way out, where R must still be dead.
  for (u32 i = first; i < end; ++i) {
    const FlowInsn& in = flow.insn(i);
    const bool last = i + 1 == end;
    switch (in.flow) {
      case Flow::kNext:
        if (last) live |= after;
        break;
      case Flow::kBranch:
        live |= flow.live_at_target(in);
        if (last) live |= after;
        break;
      case Flow::kJump:
        live |= flow.live_at_target(in);
        break;
      case Flow::kCall:
        // The detour computes the callee's address into R where the call was (a jalr's base
        // read before ra is set), sets ra to the original next instruction and jumps through
        // R: the callee may read its arguments, and preserves the saved registers for the
        // code after the region (which would get R's value back). A call is only the
        // region's last instruction (detour_region.h).
        live |= flow.live_in(i) | kCallReads | reg_bit(kRa) | kSavedRegs;
        break;
      case Flow::kReturn:
        break;  // copied as it is: no way out of the detour's own
      case Flow::kIndirect:
      case Flow::kUnknown:
        live = kAllRegs;
        break;
    }
  }
  return ~live & ~kNeverDead & kAllRegs;
}

u8 pick_dead_register(RegSet dead) {
  for (u8 r : kDeadCandidates)
    if (dead & reg_bit(r)) return r;
  return 0;
}

const char* register_name(u8 n) {
  static constexpr const char* kNames[32] = {
      "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0",
      "a1",   "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5",
      "s6",   "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};
  return n < 32 ? kNames[n] : "?";
}

}  // namespace okp::riscv
