// SPDX-License-Identifier: GPL-2.0
// The x86-64 detour relocator (see detour_relocate.h).
#include "arch/x86/detour_relocate.h"

#include <Zydis/Decoder.h>

namespace okp::x86 {

namespace {

bool fits_i32(i64 v) { return v >= -0x80000000ll && v <= 0x7fffffffll; }

void put_le32(u8* at, i32 v) {
  const u32 u = static_cast<u32>(v);
  at[0] = static_cast<u8>(u);
  at[1] = static_cast<u8>(u >> 8);
  at[2] = static_cast<u8>(u >> 16);
  at[3] = static_cast<u8>(u >> 24);
}

// Appends bytes to code; false when the buffer is full (cannot happen within the bounds of
// kMaxDetourCode, checked anyway).
struct Emitter {
  DetourCode& code;
  okp_addr_t base;
  bool put(const u8* b, usize n) {
    if (code.length + n > kMaxDetourCode) return false;
    for (usize i = 0; i < n; ++i) code.bytes[code.length + i] = b[i];
    code.length = static_cast<u8>(code.length + n);
    return true;
  }
  okp_addr_t here() const { return base + code.length; }
  // jmp rel32 (e9) or jcc rel32 (0f 80+cc) to target.
  [[gnu::noinline]] ErrorOr<void> branch(u8 cond, bool conditional, okp_addr_t target) {
    u8 b[6];
    usize n = conditional ? 6 : 5;
    const i64 rel = static_cast<i64>(target - (here() + n));
    if (!fits_i32(rel))
      return Error::formatted(Errno::kRange, "not optimized: the branch target %#lx is out of "
                              "reach of the detour (+-2 GiB)", target);
    if (conditional) {
      b[0] = 0x0f;
      b[1] = static_cast<u8>(0x80 | cond);
    } else {
      b[0] = 0xe9;
    }
    put_le32(b + n - 4, static_cast<i32>(rel));
    if (!put(b, n)) return Error(Errno::kNoSpc, "detour code buffer full");
    return {};
  }
};

}  // namespace

// One instruction of the region, relocated (noinline: its refusals stay in its own frame).
[[gnu::noinline]] static ErrorOr<void> relocate_one(Emitter& out, const DetourRegion& region,
                                             const RegionInsn& ri, const u8* bytes) {
  const okp_addr_t from = region.addr + ri.offset;
  ZydisDecoder decoder;
  if (ZYAN_FAILED(ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
    return Error(Errno::kInval, "decoder initialisation failed");
  ZydisDecodedInstruction zi;
  if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&decoder, nullptr, bytes, ri.length, &zi)) ||
      zi.length != ri.length)
    return Error::formatted(Errno::kIlSeq, "not optimized: the region changed at +0x%x", ri.offset);
  if (ri.relative_branch) {
    // jmp rel8/rel32 (eb/e9) or jcc rel8/rel32 (7x / 0f 8x): the condition is the low nibble.
    // Nothing else is re-encoded: Zydis also decodes VEX-encoded Knights Corner mask branches
    // (c5 48 85 = jknzd k, rel32), which became `jnz` here (found by tests/fuzz/fuzz_detour).
    const bool legacy = zi.encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY;
    const bool jmp = legacy && zi.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
                     (zi.opcode == 0xeb || zi.opcode == 0xe9);
    const bool jcc = legacy && ((zi.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && zi.opcode >= 0x70 &&
                                 zi.opcode <= 0x7f) ||
                                (zi.opcode_map == ZYDIS_OPCODE_MAP_0F && zi.opcode >= 0x80 &&
                                 zi.opcode <= 0x8f));
    if (!jmp && !jcc)
      return Error::formatted(Errno::kInval, "not optimized: cannot relocate the branch at +0x%x",
                              ri.offset);
    const bool conditional = jcc;
    return out.branch(static_cast<u8>(zi.opcode & 0x0f), conditional, ri.target);
  }
  u8 copy[15];
  for (u8 i = 0; i < ri.length; ++i) copy[i] = bytes[i];
  if (ri.is_call) {
    // push $return (68 imm32, sign-extended): the callee returns after the region.
    const okp_addr_t ret = from + ri.length;
    if (!fits_i32(static_cast<i64>(ret)))
      return Error::formatted(Errno::kRange, "not optimized: return address %#lx is not a "
                              "sign-extended imm32", ret);
    u8 push[5] = {0x68};
    put_le32(push + 1, static_cast<i32>(static_cast<i64>(ret)));
    if (!out.put(push, sizeof(push))) return Error(Errno::kNoSpc, "detour code buffer full");
    if (zi.opcode == 0xe8) return out.branch(0, false, ri.target);  // call rel32 -> jmp rel32
    // call r/m (ff /2) becomes jmp r/m (ff /4): the same operand, reg field 2 -> 4. An
    // rsp-based memory operand would be read one push too low: refused.
    if (!(zi.attributes & ZYDIS_ATTRIB_HAS_MODRM) || zi.raw.modrm.reg != 2)
      return Error::formatted(Errno::kInval, "not optimized: cannot relocate the call at +0x%x",
                              ri.offset);
    if (zi.raw.modrm.mod != 3 && zi.raw.modrm.rm == 4 && zi.raw.sib.base == 4)
      return Error::formatted(Errno::kInval, "not optimized: the call at +0x%x reads its target "
                              "from the stack", ri.offset);
    copy[zi.raw.modrm.offset] = static_cast<u8>((copy[zi.raw.modrm.offset] & ~0x38) | (4 << 3));
  }
  if (ri.rip_relative) {
    if (zi.raw.disp.size != 32)
      return Error::formatted(Errno::kInval, "not optimized: rip-relative operand at +0x%x "
                              "without a disp32", ri.offset);
    // addr + len + disp == here + len + new_disp
    const i64 new_disp = static_cast<i64>(zi.raw.disp.value) + static_cast<i64>(from - out.here());
    if (!fits_i32(new_disp))
      return Error::formatted(Errno::kRange, "not optimized: the rip-relative operand at +0x%x "
                              "is out of reach of the detour (+-2 GiB)", ri.offset);
    put_le32(copy + zi.raw.disp.offset, static_cast<i32>(new_disp));
  }
  if (!out.put(copy, ri.length)) return Error(Errno::kNoSpc, "detour code buffer full");
  return {};
}

ErrorOr<DetourCode> relocate_insns(const DetourRegion& region, const u8* original,
                                   okp_addr_t code_addr, u8 first, u8 last, bool jump_back) {
  DetourCode code;
  Emitter out{code, code_addr};
  for (u8 k = first; k < last && k < region.count; ++k)
    OKP_TRY(relocate_one(out, region, region.insns[k], original + region.insns[k].offset));
  if (jump_back) OKP_TRY(out.branch(0, false, region.addr + region.length));  // after the region
  return code;
}

ErrorOr<DetourCode> relocate_region(const DetourRegion& region, const u8* original,
                                    okp_addr_t code_addr) {
  return relocate_insns(region, original, code_addr, 0, region.count, true);
}

}  // namespace okp::x86
