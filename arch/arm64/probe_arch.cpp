// SPDX-License-Identifier: GPL-2.0
// arm64's out-of-line pieces of the arch contract: the landing-pad skip, the boundary and
// exclusive-sequence check before planning.
#include "probe_arch.h"

#include "arch/common/no_breakpoint_trap.h"

namespace okp::arch {

namespace {

u32 word_at(const u8* b) {
  return static_cast<u32>(b[0]) | static_cast<u32>(b[1]) << 8 | static_cast<u32>(b[2]) << 16 |
         static_cast<u32>(b[3]) << 24;
}

// bti c / bti jc (hint #34 / #38): an indirect call's landing pad.
bool is_call_landing_pad(u32 insn) { return insn == 0xd503245f || insn == 0xd50324df; }

// How far back from the probe the exclusive-sequence scan looks, at most: a load-exclusive
// and its store-exclusive sit within a few instructions of each other in every kernel
// sequence (the kernel's own kprobes scan back to the symbol's start, however far).
constexpr usize kMaxExclusiveScan = 64 * 1024;

}  // namespace

okp_addr_t skip_landing_pad(okp_addr_t addr, okp_addr_t func_start) {
  if (addr != func_start) return addr;
  u8 bytes[4];
  okp_addr_t entry = addr;
  if (!okp_seam_read_nofault(bytes, addr, sizeof(bytes)) && is_call_landing_pad(word_at(bytes)))
    entry += arm64::kInsnSize;
  // -fpatchable-function-entry=2: `mov x9, x30` (ftrace's, written at boot) then the call
  // site ftrace toggles; ftrace_location() names the latter for the function's start.
  const okp_addr_t site = okp_seam_ftrace_site(entry);
  if (site > entry && site - entry <= 2 * arm64::kInsnSize) return site;
  return entry;
}

ErrorOr<Plan> check_and_plan(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                             okp_addr_t slot, RecoverFn recover) {
  // Without a breakpoint trap the probe is a b to a detour or nothing: the jump optimizer
  // says which when the site is armed (JumpOptimizer::arm_jump).
  if ((addr | func_start) & (arm64::kInsnSize - 1)) {
    const okp_addr_t below = addr & ~okp_addr_t{arm64::kInsnSize - 1};
    return Error::formatted(Errno::kIlSeq,
                            "+%#lx is not an instruction boundary: arm64 instructions are 4-byte "
                            "aligned; the nearest are +%#lx and +%#lx", addr - func_start,
                            below - func_start, below + arm64::kInsnSize - func_start);
  }
  if (addr < func_start || (func_size && addr + arm64::kInsnSize > func_start + func_size))
    return Error::formatted(Errno::kInval, "%#lx is outside its function's %lu bytes", addr,
                            func_size);

  // The extent's last 8 bytes may be the next function's ftrace-ops pointer (CALL_OPS,
  // arm64/insn_plan.h): a BRK there would corrupt the pointer ftrace calls through.
  if (func_size >= 8 && addr + 8 >= func_start + func_size) {
    u8 last8[8];
    if (okp_seam_read_nofault(last8, func_start + func_size - 8, sizeof(last8)) == 0 &&
        arm64::ftrace_ops_literal_bytes(last8))
      return Error::formatted(Errno::kIlSeq,
                              "+%#lx is no instruction: the last 8 bytes before the next "
                              "function hold its ftrace_ops pointer (CALL_OPS)",
                              addr - func_start);
  }

  // Is addr inside a load-exclusive ... store-exclusive sequence? Scan forward from the
  // function's start (recovering okprobes' breakpoints): the last exclusive before addr must
  // not be a load.
  okp_addr_t pos = addr - func_start > kMaxExclusiveScan ? addr - kMaxExclusiveScan : func_start;
  okp_addr_t open = 0;
  u32 open_insn = 0;
  u8 window[256];
  while (pos < addr) {
    const usize n = addr - pos < sizeof(window) ? addr - pos : sizeof(window);
    if (okp_seam_read_nofault(window, pos, n))
      return Error::formatted(Errno::kFault, "cannot read the text at %#lx", pos);
    recover(pos, window, n);
    for (usize i = 0; i < n; i += arm64::kInsnSize) {
      const u32 insn = word_at(window + i);
      if (arm64::is_load_exclusive(insn)) {
        open = pos + i;
        open_insn = insn;
      } else if (arm64::is_store_exclusive(insn)) {
        open = 0;
      }
    }
    pos += n;
  }

  u8 bytes[arm64::kInsnSize];
  if (okp_seam_read_nofault(bytes, addr, sizeof(bytes)))
    return Error::formatted(Errno::kFault, "cannot read the text at %#lx", addr);
  recover(addr, bytes, sizeof(bytes));
  const u32 insn = word_at(bytes);
  u16 imm = 0;
  if (arm64::is_brk(insn, &imm) && imm != arm64::kBrkProbeImm && imm != arm64::kBrkStepImm) {
    // Another tool's breakpoint hides the instruction it replaced; the kernel's own check
    // traps are the instruction, and must raise their exception where they are.
    const char* holder = imm >= 0x004 && imm <= 0x007 ? "the kernel's kprobes (or uprobes)"
                         : imm == 0x400 || imm == 0x401 ? "kgdb" : nullptr;
    if (holder)
      return Error::formatted(Errno::kBusy, "brk #%#x at +%#lx is a breakpoint of %s: the "
                              "instruction under it is unknown", imm, addr - func_start, holder);
    const char* trap = imm == 0x800 ? "a BUG()/WARN()" : imm >= 0x900 && imm <= 0x9ff ? "a KASAN"
                       : imm >= 0x5500 && imm <= 0x55ff ? "a UBSAN" : imm >= 0x8000 ? "a kCFI"
                       : imm == 0x100 ? "a deliberate-fault" : "another tool's or the compiler's";
    return Error::formatted(Errno::kOpNotSupp, "brk #%#x at +%#lx is %s trap: it must raise its "
                            "exception where it is, so it can be neither stepped nor simulated",
                            imm, addr - func_start, trap);
  }
  auto plan = arm64::plan_insn(addr, insn);
  if (plan.is_error()) return plan;
  if (open)
    return Error::formatted(Errno::kOpNotSupp,
                            "'%s' (%#010x) at +%#lx cannot be probed: it is inside the exclusive "
                            "sequence opened at +%#lx (%#010x); a breakpoint's exception return "
                            "clears the exclusive monitor, so the store-exclusive would fail "
                            "forever", plan.value().mnemonic, insn, addr - func_start,
                            open - func_start, open_insn);
  if (plan.value().sim == arm64::Sim::kNone)
    plan.value().boostable = slot && arm64::branch_back_reaches(addr, slot);
  return plan;
}

}  // namespace okp::arch
