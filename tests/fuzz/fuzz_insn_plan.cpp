// SPDX-License-Identifier: GPL-2.0
// Fuzz target: one x86-64 instruction through decode() -> plan_insn() -> build_slot() (slot
// copies) or emulate() (emulated instructions), at fuzzed probe and slot addresses.
//
// Input: a mode byte, then (mode bit 0) the probe address and the slot address (8 bytes
// each, else a kernel-like pair), then the instruction bytes: exactly as many as the fuzzer
// gave (avail), so a read past them is an ASan report. The bytes are never executed here
// (fuzz_emulate_diff.cpp does that).
//
// Checked, besides no crash/out-of-bounds/undefined behaviour:
//  - decode() and plan_insn() agree on validity and length; length <= avail, <= 15;
//  - a refusal has a reason and a known errno;
//  - a slot copy: the original bytes (disp32 re-aimed so the operand names the same address
//    from the slot), then an int3 (stepped) or a jmp rel32 back to addr+length (boosted),
//    int3 padding; it decodes to the same instruction length;
//  - emulation: relative branch targets are addr+length+displacement as decode() reads it;
//    non-branch emulations resume at addr+length; emulate() and the inline
//    emulate_register_move() do the same to the frame; a fault (-EFAULT) leaves it untouched.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <Zydis/Decoder.h>
#include <Zydis/Utils.h>

#include "arch/x86/decoder.h"
#include "arch/x86/insn_emulate.h"
#include "arch/x86/insn_plan.h"
#include "fuzz_seam.h"

using namespace okp;
using namespace okp::x86;

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "fuzz_insn_plan: check failed: %s (line %d)\n", #cond, __LINE__); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

namespace {

u32 le32(const u8* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<u32>(p[3]) << 24; }

bool known_errno(Errno e) {
  return e == Errno::kIlSeq || e == Errno::kBusy || e == Errno::kInval || e == Errno::kRange;
}

void check_slot(const InsnPlan& plan, okp_addr_t addr, const u8* bytes, okp_addr_t slot, bool boost) {
  u8 img[kSlotSize];
  build_slot(plan, addr, bytes, slot, boost, img);
  const u8 n = plan.length;
  for (u8 i = 0; i < n; ++i) {
    if (plan.rip_relative && i >= plan.disp_offset && i < plan.disp_offset + 4) continue;
    CHECK(img[i] == bytes[i]);
  }
  if (plan.rip_relative) {
    CHECK(plan.disp_offset + 4u <= n);
    const i32 old_disp = static_cast<i32>(le32(bytes + plan.disp_offset));
    const i32 new_disp = static_cast<i32>(le32(img + plan.disp_offset));
    CHECK(addr + n + static_cast<u64>(static_cast<i64>(old_disp)) ==
          slot + n + static_cast<u64>(static_cast<i64>(new_disp)));
  }
  usize end = n;
  if (boost) {
    CHECK(img[n] == 0xe9);
    const i32 rel = static_cast<i32>(le32(img + n + 1));
    CHECK(slot + n + 5 + static_cast<u64>(static_cast<i64>(rel)) == addr + n);
    end = n + 5;
  } else {
    CHECK(img[n] == kInt3);
    end = n + 1;
  }
  for (usize i = end; i < kSlotSize; ++i) CHECK(img[i] == kInt3);
  // The copy is still the same instruction (length and rip-relative form), and every memory
  // operand it names from the slot is the one the original names from addr (Zydis' own
  // reading of both, not plan.disp_offset's).
  auto again = decode(img, n);
  CHECK(!again.is_error());
  CHECK(again.value().length == n);
  CHECK(again.value().rip_relative == plan.rip_relative);
  ZydisDecoder zd;
  ZydisDecoderInit(&zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecodedInstruction zo, zc;
  ZydisDecodedOperand oo[ZYDIS_MAX_OPERAND_COUNT], oc[ZYDIS_MAX_OPERAND_COUNT];
  CHECK(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zd, bytes, n, &zo, oo)));
  CHECK(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zd, img, n, &zc, oc)));
  CHECK(zo.mnemonic == zc.mnemonic && zo.operand_count == zc.operand_count);
  for (u8 i = 0; i < zo.operand_count_visible; ++i) {
    if (oo[i].type != ZYDIS_OPERAND_TYPE_MEMORY || oo[i].mem.base != ZYDIS_REGISTER_RIP) continue;
    ZyanU64 a = 0, b = 0;
    CHECK(ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zo, &oo[i], addr, &a)));
    CHECK(ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zc, &oc[i], slot, &b)));
    CHECK(a == b);
  }
  for (u8 i = 0; i < zo.operand_count; ++i)  // immediates untouched by the re-aiming
    if (oo[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) CHECK(oo[i].imm.value.u == oc[i].imm.value.u);
}

bool is_register_move(Emulation e) {
  return e == Emulation::kMovReg || e == Emulation::kMovImm || e == Emulation::kLea ||
         e == Emulation::kNop;
}

bool is_gpr(u8 index) { return index <= kRegIndexDi || index == kRegIndexSp; }

alignas(16) unsigned long g_stack[512];  // the frame's stack (pushes land here)
alignas(16) unsigned long g_data[64];    // memory operands of indirect branches

void check_emulation(const InsnPlan& plan, okp_addr_t addr, const DecodedInsn& dec, okp_fuzz::Input& in) {
  const okp_addr_t next = addr + plan.length;
  if (dec.relative_branch &&
      (plan.emulation == Emulation::kJmpRel || plan.emulation == Emulation::kJcc ||
       plan.emulation == Emulation::kCallRel || plan.emulation == Emulation::kLoop))
    CHECK(static_cast<okp_addr_t>(plan.rel_target) == next + static_cast<u64>(dec.branch_displacement));
  if (plan.emulation == Emulation::kMovReg) CHECK(is_gpr(plan.reg_dst) && is_gpr(plan.reg_src));
  if (plan.emulation == Emulation::kMovImm || plan.emulation == Emulation::kLea ||
      plan.emulation == Emulation::kPushReg || plan.emulation == Emulation::kPopReg ||
      plan.emulation == Emulation::kAlu)
    CHECK(is_gpr(plan.reg_dst));
  if (plan.emulation == Emulation::kAlu) {
    CHECK(plan.reg_src == kNoReg || is_gpr(plan.reg_src));
    CHECK(plan.result_mask == ~0ul || plan.result_mask == 0xfffffffful);
  }
  if (plan.emulation == Emulation::kLea || plan.emulation == Emulation::kCallIndirect ||
      plan.emulation == Emulation::kJmpIndirect) {
    const IndirectOperand& m = plan.indirect;
    if (!m.is_register && !m.rip_relative) CHECK(m.reg == kNoReg || is_gpr(m.reg));
    if (m.is_register) CHECK(is_gpr(m.reg));
    CHECK(m.index == kNoReg || is_gpr(m.index));
    CHECK(m.scale == 1 || m.scale == 2 || m.scale == 4 || m.scale == 8);
  }

  // A frame of fuzzed registers; sp on a stack the pushes may write, pops and memory
  // operands readable through the seam only inside g_stack and g_data.
  okp_regs regs;
  unsigned long* w = reinterpret_cast<unsigned long*>(&regs);
  for (usize i = 0; i < sizeof(regs) / sizeof(unsigned long); ++i) w[i] = in.u64();
  const u8 pick = in.u8();
  regs.sp = reinterpret_cast<unsigned long>(&g_stack[256 + (pick % 64) - 32]);
  regs.ip = addr + 1;
  // Some inputs aim a register at the data, so indirect branches read memory too.
  if (pick & 0x40) w[pick % 15] = reinterpret_cast<unsigned long>(&g_data[in.u8() % 64]);
  for (auto& v : g_stack) v = in.u64();
  for (auto& v : g_data) v = 0x5a5a5a5a00000000ul | reinterpret_cast<uintptr_t>(&v) >> 3;
  const void* win[] = {g_stack, g_data};
  const size_t len[] = {sizeof(g_stack), sizeof(g_data)};
  okp_fuzz::set_readable(win, len, 2);

  const okp_regs before = regs;
  unsigned long stack_before[512];
  std::memcpy(stack_before, g_stack, sizeof(g_stack));
  auto r = emulate(plan, addr, &regs);
  if (r.is_error()) {
    CHECK(r.error().code() == Errno::kFault);
    CHECK(std::memcmp(&regs, &before, sizeof(regs)) == 0);
    CHECK(std::memcmp(stack_before, g_stack, sizeof(g_stack)) == 0);
  } else {
    switch (plan.emulation) {
      case Emulation::kMovReg: case Emulation::kMovImm: case Emulation::kLea: case Emulation::kNop:
      case Emulation::kPushReg: case Emulation::kPopReg: case Emulation::kPushf:
      case Emulation::kPopf: case Emulation::kCli: case Emulation::kSti:
      case Emulation::kAlu:
        CHECK(regs.ip == next);
        break;
      default:
        break;
    }
    if (plan.emulation == Emulation::kAlu) {
      // The hit calls emulate_alu() straight (probe_arch.h): the same frame as emulate().
      okp_regs direct = before;
      emulate_alu(plan, addr, &direct);
      CHECK(std::memcmp(&direct, &regs, sizeof(regs)) == 0);
      CHECK(regs.sp == before.sp || plan.reg_dst == kRegIndexSp);
      CHECK((regs.flags & ~0x8d5ul) == (before.flags & ~0x8d5ul));
    }
    if (is_register_move(plan.emulation)) {
      okp_regs inline_regs = before;
      CHECK(emulate_register_move(plan, addr, &inline_regs));
      CHECK(std::memcmp(&inline_regs, &regs, sizeof(regs)) == 0);
      CHECK(regs.sp == before.sp || plan.reg_dst == kRegIndexSp);
      CHECK(regs.flags == before.flags);
    } else {
      okp_regs untouched = before;
      CHECK(!emulate_register_move(plan, addr, &untouched));
    }
  }
  okp_fuzz::clear_readable();
}

// What the inputs reached (printed at exit with OKP_FUZZ_STATS=1).
unsigned long g_refused, g_slots, g_boosted, g_rip_slots, g_emulated;
void print_stats() {
  std::fprintf(stderr, "fuzz_insn_plan: %lu refused, %lu slots (%lu boosted, %lu rip-relative), "
               "%lu emulated\n", g_refused, g_slots, g_boosted, g_rip_slots, g_emulated);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (std::getenv("OKP_FUZZ_STATS")) std::atexit(print_stats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  okp_fuzz::Input in{data, size};
  const u8 mode = in.u8();
  okp_addr_t addr = 0xffffffff81234560ul, slot = 0xffffffffc0400000ul;
  if (mode & 1) {
    addr = in.u64();
    slot = in.u64();
  } else if (mode & 2) {
    slot = addr - 0x7fff0000ul + (mode >> 2) * 0x1000;  // the edge of rel32 reach
  }
  // The instruction: up to 20 bytes (avail past 15 shows the decoder stops at 15); the rest
  // of the input feeds the emulation's registers.
  const usize avail = in.left() < 20 ? in.left() : 20 - (mode >> 5);
  if (avail == 0) return 0;
  u8* bytes = static_cast<u8*>(std::malloc(avail));  // exactly avail: ASan sees an over-read
  std::memcpy(bytes, data + in.pos, avail);
  in.pos += avail;

  auto dec = decode(bytes, avail);
  auto plan = plan_insn(addr, bytes, avail, slot);
  if (plan.is_error()) {
    CHECK(known_errno(plan.error().code()));
    CHECK(plan.error().reason() != nullptr && plan.error().reason()[0] != '\0');
    if (plan.error().code() == Errno::kIlSeq) CHECK(dec.is_error() || bytes[0] == kInt3);
    // A ud2 is refused as a BUG/WARN site (-EBUSY) even where decode() fails: a Xen/KVM
    // emulate prefix (ud2; "xen") whose emulated instruction is cut short by avail.
    const bool ud2 = avail >= 2 && bytes[0] == 0x0f && bytes[1] == 0x0b;
    if (dec.is_error())
      CHECK(plan.error().code() == Errno::kIlSeq || bytes[0] == kInt3 ||
            (ud2 && plan.error().code() == Errno::kBusy));
    ++g_refused;
  } else {
    const InsnPlan& p = plan.value();
    CHECK(!dec.is_error());
    CHECK(p.length == dec.value().length);
    CHECK(p.length >= 1 && p.length <= kMaxInsnLength && p.length <= avail);
    CHECK(p.mnemonic != nullptr);
    CHECK(bytes[0] != kInt3);
    if (p.emulation == Emulation::kNone) {
      CHECK(p.rip_relative == dec.value().rip_relative);
      CHECK(!dec.value().relative_branch);  // a copy never branches relative to the slot
      check_slot(p, addr, bytes, slot, false);
      if (p.boostable) check_slot(p, addr, bytes, slot, true);
      ++g_slots;
      g_boosted += p.boostable;
      g_rip_slots += p.rip_relative;
    } else {
      CHECK(!p.boostable);
      check_emulation(p, addr, dec.value(), in);
      ++g_emulated;
    }
  }
  std::free(bytes);
  return 0;
}
