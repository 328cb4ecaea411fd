// SPDX-License-Identifier: GPL-2.0
#include "probe_arch.h"

#include "arch/common/no_breakpoint_trap.h"

namespace okp::arch {

namespace {

// The ISA guarantees an LR/SC loop forward progress only within 16 instructions; compilers
// and the kernel's atomics keep every sequence within it. An LR this close before the probe,
// with no SC after it, has the probe inside its reservation.
constexpr usize kMaxReservationInsns = 16;

}  // namespace

ErrorOr<Plan> check_and_plan(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                             okp_addr_t, RecoverFn recover) {
#ifndef OKP_JUMP_PROBES
  if (const char* why = no_breakpoint_trap()) return Error(Errno::kOpNotSupp, why);
#endif
  if (addr & 1)
    return Error::formatted(Errno::kIlSeq, "+%#lx is odd: riscv instructions are 2-byte aligned",
                            addr - func_start);
  // Walk instruction by instruction from the function's start, a window of bytes at a time,
  // with okprobes' own breakpoints recovered (other tools' c.ebreak/ebreak keep the length).
  constexpr usize kWindow = 64;
  u8 window[kWindow];
  okp_addr_t pos = func_start, previous = func_start;
  okp_addr_t func_end = func_size ? func_start + func_size : addr + riscv::kMaxInsnLength;
  okp_addr_t open_lr = 0;   // the last lr with no sc after it (0: none)
  usize since_lr = 0;       // instructions since open_lr
  const char* open_lr_name = "";
  while (pos < addr) {
    usize avail = func_end - pos < kWindow ? func_end - pos : kWindow;
    if (okp_seam_read_nofault(window, pos, avail))
      return Error::formatted(Errno::kFault, "cannot read the text at %#lx", pos);
    recover(pos, window, avail);
    usize off = 0;
    while (pos + off < addr && off + 4 <= avail) {
      auto d = riscv::decode(window + off, avail - off, pos + off);
      if (d.is_error())
        return Error::formatted(Errno::kIlSeq,
                                "cannot decode the function from its start: %s at +%#lx",
                                d.error().reason(), pos + off - func_start);
      previous = pos + off;
      if (d.value().lr) {
        open_lr = previous;
        open_lr_name = d.value().mnemonic;
        since_lr = 0;
      } else if (d.value().sc) {
        open_lr = 0;
      } else if (open_lr && ++since_lr >= kMaxReservationInsns) {
        open_lr = 0;
      }
      off += d.value().length;
    }
    if (off == 0) {  // fewer than 4 bytes left before the end: one last parcel
      auto d = riscv::decode(window, avail, pos);
      if (d.is_error())
        return Error::formatted(Errno::kIlSeq,
                                "cannot decode the function from its start: %s at +%#lx",
                                d.error().reason(), pos - func_start);
      previous = pos;
      off = d.value().length;
    }
    pos += off;
  }
  if (pos != addr)
    return Error::formatted(Errno::kIlSeq,
                            "+%#lx is not an instruction boundary: the nearest are +%#lx and +%#lx",
                            addr - func_start, previous - func_start, pos - func_start);
  u8 bytes[riscv::kMaxInsnLength] = {};
  usize avail = func_end - addr < sizeof(bytes) ? func_end - addr : sizeof(bytes);
  if (okp_seam_read_nofault(bytes, addr, avail))
    return Error::formatted(Errno::kFault, "cannot read the text at %#lx", addr);
  recover(addr, bytes, avail);
  auto plan = riscv::plan_insn(addr, bytes, avail);
  if (plan.is_error()) {
    auto d = riscv::decode(bytes, avail, addr);
    return Error::formatted(plan.error().code(), "%s (instruction '%s')", plan.error().reason(),
                            d.is_error() ? "?" : d.value().mnemonic);
  }
  if (open_lr)
    return Error::formatted(Errno::kInval,
                            "'%s' at +%#lx is inside the LR/SC sequence opened by '%s' at +%#lx: "
                            "a trap there breaks the reservation, so the sc could never succeed",
                            plan.value().mnemonic, addr - func_start, open_lr_name,
                            open_lr - func_start);
  return plan;
}

ErrorOr<BranchStep> direct_branch(const u8* bytes, usize avail, okp_addr_t addr) {
  auto d = OKP_TRY(riscv::decode(bytes, avail, addr));
  okp_addr_t target = d.direct_target;
  // auipc rX, hi; jalr rd, lo(rX): the far call (or tail) the assembler emits for `call`.
  if (d.length == 4 && avail >= 8 && (bytes[0] & 0x7f) == 0x17) {
    const u32 auipc = bytes[0] | bytes[1] << 8 | bytes[2] << 16 | static_cast<u32>(bytes[3]) << 24;
    const u32 jalr = bytes[4] | bytes[5] << 8 | bytes[6] << 16 | static_cast<u32>(bytes[7]) << 24;
    const u32 rx = (auipc >> 7) & 31;
    if ((jalr & 0x707f) == 0x67 && ((jalr >> 15) & 31) == rx && rx != 0) {
      const i64 hi = static_cast<i32>(auipc & 0xfffff000u);
      const i64 lo = static_cast<i32>(jalr) >> 20;
      target = addr + hi + lo;
    }
  }
  return BranchStep{d.length, target};
}

}  // namespace okp::arch
