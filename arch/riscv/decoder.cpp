// SPDX-License-Identifier: GPL-2.0
// The riscv decoder's self-check at load: instructions every riscv64 kernel function is made
// of, decoded and planned as they must be. If one is wrong the build is broken and no probe
// may trust it.
#include "arch/riscv/insn_plan.h"
#include "core/error_or.h"
#include "seam/kernel_services.h"
#include "seam/core_entries.h"

namespace {

using okp::riscv::Kind;

struct KnownInsn {
  okp::u8 bytes[4];
  okp::u8 length;
  Kind kind;
  long imm;  // the plan's immediate (targets relative to address 0x1000)
};

constexpr okp_addr_t kAt = 0x1000;

constexpr KnownInsn kKnown[] = {
    {{0x01, 0x00}, 2, Kind::kAddImm, 0},                     // c.nop
    {{0x41, 0x11}, 2, Kind::kAddImm, -16},                   // c.addi sp, -16 (addi sp,sp,-16)
    {{0x06, 0xe4}, 2, Kind::kSlot, 0},                       // c.sdsp ra, 8(sp)
    {{0x82, 0x80}, 2, Kind::kJalr, 0},                       // c.jr ra (ret)
    {{0x01, 0xa0}, 2, Kind::kJal, 0x1000},                   // c.j . (to itself)
    {{0x13, 0x00, 0x00, 0x00}, 4, Kind::kAddImm, 0},         // nop (addi x0, x0, 0)
    {{0xef, 0x00, 0x80, 0x00}, 4, Kind::kJal, 0x1008},       // jal ra, .+8
    {{0xe3, 0x0e, 0xb5, 0xfe}, 4, Kind::kBranch, 0x0ffc},    // beq a0, a1, .-4
    {{0x97, 0x12, 0x00, 0x00}, 4, Kind::kAuipc, 0x2000},     // auipc t0, 1
    {{0x03, 0x35, 0x85, 0x00}, 4, Kind::kSlot, 0},           // ld a0, 8(a0)
};

}  // namespace

extern "C" int okp_arch_decoder_selfcheck(void) {
  for (const KnownInsn& k : kKnown) {
    auto r = okp::riscv::plan_insn(kAt, k.bytes, k.length);
    if (r.is_error() || r.value().length != k.length || r.value().kind != k.kind ||
        r.value().imm != k.imm) {
      okp_seam_log(OKP_LOG_ERR, "riscv decoder self-check failed: the decoder build is unusable");
      return okp::to_kernel_errno(okp::Errno::kInval);
    }
  }
  return 0;
}
