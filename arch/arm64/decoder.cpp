// SPDX-License-Identifier: GPL-2.0
// The arm64 planner's load-time self-check: a few encodings of each class, planned as the
// kernel's own instructions would be, so a decoding slip refuses to load instead of
// mis-simulating a live instruction.
#include "arch/arm64/insn_plan.h"
#include "seam/kernel_services.h"
#include "seam/core_entries.h"

namespace {

struct Case {
  okp::u32 insn;
  okp::arm64::Sim sim;  // kNone with refused: refused
  bool refused;
  okp_addr_t target;  // at address 0x1000 (0: not checked)
};

using okp::arm64::Sim;
constexpr Case kCases[] = {
    {0x14000004, Sim::kB, false, 0x1010},          // b .+16
    {0x97fffffc, Sim::kBl, false, 0x0ff0},         // bl .-16
    {0x54000040, Sim::kBCond, false, 0x1008},      // b.eq .+8
    {0xb4000060, Sim::kCbz, false, 0x100c},        // cbz x0, .+12
    {0x37080040, Sim::kTbz, false, 0x1008},        // tbnz w0, #1, .+8
    {0x10000020, Sim::kAdr, false, 0x1004},        // adr x0, .+4
    {0x90000000, Sim::kAdr, false, 0x1000},       // adrp x0, . (same page)
    {0x58000040, Sim::kLdrLit, false, 0x1008},     // ldr x0, .+8
    {0xd65f03c0, Sim::kRet, false, 0},             // ret
    {0xd63f0020, Sim::kBlr, false, 0},             // blr x1
    {0xd503201f, Sim::kNop, false, 0},             // nop
    {0xaa0103e0, Sim::kMovReg, false, 0},          // mov x0, x1
    {0x910003fd, Sim::kAddImm, false, 0},          // mov x29, sp
    {0xa9bf7bfd, Sim::kNone, false, 0},            // stp x29, x30, [sp, #-16]!
    {0xd503233f, Sim::kNone, false, 0},            // paciasp
    {0xd50323bf, Sim::kNone, false, 0},            // autiasp
    {0xc85f7c20, Sim::kNone, true, 0},             // ldxr x0, [x1]
    {0xc8027c20, Sim::kNone, true, 0},             // stxr w2, x0, [x1]
    {0xc8dffc20, Sim::kNone, false, 0},            // ldar x0, [x1]
    {0xd69f03e0, Sim::kNone, true, 0},             // eret
    {0xd65f0bff, Sim::kNone, true, 0},             // retaa
    {0xd4000001, Sim::kNone, true, 0},             // svc #0
    {0xd4200080, Sim::kNone, true, 0},             // brk #4
    {0xd53b4220, Sim::kMrsDaif, false, 0},         // mrs x0, daif
    {0xd51b4220, Sim::kMsrDaif, false, 0},         // msr daif, x0
    {0xd50342df, Sim::kMsrDaifSet, false, 0},      // msr daifset, #2
    {0xd5184000, Sim::kNone, true, 0},             // msr spsr_el1, x0
    {0xd5384100, Sim::kNone, false, 0},            // mrs x0, sp_el0
    {0x00000000, Sim::kNone, true, 0},             // udf #0
};

}  // namespace

extern "C" int okp_arch_decoder_selfcheck(void) {
  for (const Case& c : kCases) {
    auto plan = okp::arm64::plan_insn(0x1000, c.insn);
    const bool ok = c.refused ? plan.is_error()
                              : !plan.is_error() && plan.value().sim == c.sim &&
                                    (!c.target || plan.value().target == c.target);
    if (!ok) {
      char msg[96];
      okp_seam_format(msg, sizeof(msg), "arm64 planner self-check failed on %#010x", c.insn);
      okp_seam_log(OKP_LOG_ERR, msg);
      return -22;
    }
  }
  return 0;
}
