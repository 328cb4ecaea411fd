// SPDX-License-Identifier: GPL-2.0
// Fuzz target: the jump optimizer's region check (check_detour_region, and the neighbour
// checks foreign_branch_into, runs_on_past_end, outside_jump_targets), the relocator
// (relocate_region) and the detour image (plan_detour) on fuzzed function text.
//
// Input: a mode byte; the probe's offset in the function (2 bytes); the function's start
// (mode bit 0: 8 fuzzed bytes, else a kernel text address); the detour buffer (mode bit 1:
// 8 fuzzed bytes, else near the function); up to 3 exception-table entries (mode bits 2-3,
// 4 bytes each: insn and fixup offsets); (mode bit 7) a retpoline thunk range; then the
// function's bytes, exactly as many as the fuzzer gave (so a read past the function is an
// ASan report).
//
// Checked, besides no crash/out-of-bounds/undefined behaviour:
//  - an accepted region: 1..5 whole instructions, contiguous from the probe address, at least
//    5 bytes, inside the function, no exception-table entry in it and no fixup into it, and
//    each instruction's length is what Zydis decodes there;
//  - the relocated code re-decodes instruction by instruction, and does what the region did:
//    identical bytes for ordinary instructions, [rip+disp32] operands naming the same address,
//    relative jmp/jcc to the same target under the same condition, a call as push $return +
//    jmp to the same target (or the same operand), then a jmp back to the region's end;
//  - plan_detour's image fits the buffer, holds the probe address, calls the entry, and its
//    jump lands on the call; with a post entry, the same with the post call and its data.
#include <Zydis/Decoder.h>
#include <Zydis/Utils.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "arch/x86/detour.h"
#include "arch/x86/detour_region.h"
#include "arch/x86/detour_relocate.h"
#include "fuzz_seam.h"

using namespace okp;
using namespace okp::x86;

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "fuzz_detour: check failed: %s (line %d)\n", #cond, __LINE__); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

namespace {

struct Z {
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];  // DecodeFull fills them all
};

bool zdecode(const u8* b, usize n, Z& z) {
  ZydisDecoder d;
  ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d, b, n, &z.insn, z.ops));
}

// The absolute address of a rip-relative memory operand or a relative branch target.
bool absolute(const Z& z, okp_addr_t at, u64* out) {
  for (u8 i = 0; i < z.insn.operand_count_visible; ++i) {
    const ZydisDecodedOperand& op = z.ops[i];
    if ((op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.base == ZYDIS_REGISTER_RIP) ||
        (op.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op.imm.is_relative)) {
      ZyanU64 a;
      CHECK(ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&z.insn, &op, at, &a)));
      *out = a;
      return true;
    }
  }
  return false;
}

u32 le32(const u8* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<u32>(p[3]) << 24; }
u64 le64(const u8* p) { return le32(p) | static_cast<u64>(le32(p + 4)) << 32; }

// The relocated code of region.insns[first, last) at code_addr, then (jump_back) the jmp back.
void check_relocation(const DetourRegion& region, const u8* original, const u8* code, usize size,
                      okp_addr_t code_addr, u8 first, u8 last, bool jump_back) {
  usize at = 0;
  for (u8 k = first; k < last; ++k) {
    const RegionInsn& ri = region.insns[k];
    const okp_addr_t from = region.addr + ri.offset;
    Z o, c;
    CHECK(zdecode(original + ri.offset, ri.length, o));
    CHECK(at < size);
    CHECK(zdecode(code + at, size - at, c));
    const okp_addr_t here = code_addr + at;
    u64 want = 0, got = 0;
    if (ri.is_call) {
      // push $return; then jmp rel32 to the target, or jmp through the call's operand.
      CHECK(c.insn.mnemonic == ZYDIS_MNEMONIC_PUSH && c.insn.length == 5 && code[at] == 0x68);
      CHECK(static_cast<u64>(static_cast<i64>(static_cast<i32>(le32(code + at + 1)))) ==
            from + ri.length);
      at += 5;
      CHECK(zdecode(code + at, size - at, c));
      CHECK(c.insn.mnemonic == ZYDIS_MNEMONIC_JMP);
      if (absolute(o, from, &want)) {
        CHECK(absolute(c, code_addr + at, &got));
        CHECK(got == want);
      }
      if (!o.insn.raw.imm[0].is_relative) {
        // ff /2 -> ff /4, every other byte the same (rip-relative disp aside).
        CHECK(c.insn.length == o.insn.length);
        for (u8 i = 0; i < o.insn.length; ++i) {
          if (i == o.insn.raw.modrm.offset) {
            CHECK((code[at + i] & ~0x38) == (original[ri.offset + i] & ~0x38));
            CHECK(((code[at + i] >> 3) & 7) == 4);
          } else if (!(o.insn.raw.disp.size == 32 && i >= o.insn.raw.disp.offset &&
                       i < o.insn.raw.disp.offset + 4 && absolute(o, from, &want))) {
            CHECK(code[at + i] == original[ri.offset + i]);
          }
        }
      }
      at += c.insn.length;
      continue;
    }
    if (ri.relative_branch) {
      CHECK(absolute(o, from, &want));
      CHECK(want == ri.target);
      CHECK(absolute(c, here, &got));
      CHECK(got == want);
      if (c.insn.mnemonic != o.insn.mnemonic) {  // jmp stays jmp, jcc keeps its condition
        std::fprintf(stderr, "fuzz_detour: branch at +0x%x relocated as another:", ri.offset);
        for (u8 i = 0; i < ri.length; ++i) std::fprintf(stderr, " %02x", original[ri.offset + i]);
        std::fprintf(stderr, " ->");
        for (u8 i = 0; i < c.insn.length; ++i) std::fprintf(stderr, " %02x", code[at + i]);
        std::fprintf(stderr, "\n");
        CHECK(c.insn.mnemonic == o.insn.mnemonic);
      }
      at += c.insn.length;
      continue;
    }
    CHECK(c.insn.length == o.insn.length && c.insn.mnemonic == o.insn.mnemonic);
    if (ri.rip_relative) {
      CHECK(absolute(o, from, &want));
      CHECK(absolute(c, here, &got));
      CHECK(got == want);
      for (u8 i = 0; i < o.insn.length; ++i)
        if (i < o.insn.raw.disp.offset || i >= o.insn.raw.disp.offset + 4)
          CHECK(code[at + i] == original[ri.offset + i]);
    } else {
      CHECK(std::memcmp(code + at, original + ri.offset, ri.length) == 0);
    }
    at += ri.length;
  }
  if (jump_back) {
    Z c;
    CHECK(zdecode(code + at, size - at, c));
    CHECK(code[at] == 0xe9);
    u64 got = 0;
    CHECK(absolute(c, code_addr + at, &got));
    CHECK(got == region.addr + region.length);
    at += 5;
  }
  CHECK(at == size);
}

void check_region(const FunctionText& fn, okp_addr_t addr, const DetourRegion& region,
                  const ExtableEntry* ext, usize n_ext) {
  CHECK(region.addr == addr);
  CHECK(region.count >= 1 && region.count <= kMaxRegionInsns);
  CHECK(region.length >= kJumpSize);
  CHECK(addr + region.length <= fn.start + fn.size);
  u32 off = 0;
  for (u8 k = 0; k < region.count; ++k) {
    const RegionInsn& ri = region.insns[k];
    CHECK(ri.offset == off);
    Z z;
    CHECK(zdecode(fn.bytes + (addr - fn.start) + off, fn.size - (addr - fn.start) - off, z));
    CHECK(z.insn.length == ri.length);
    CHECK(!ri.is_call || k == region.count - 1);
    off += ri.length;
    if (k + 1 < region.count) CHECK(off < kJumpSize);  // no instruction more than needed
  }
  CHECK(off == region.length);
  for (usize i = 0; i < n_ext; ++i) {
    CHECK(!(ext[i].insn >= addr && ext[i].insn < addr + region.length));
    CHECK(!(ext[i].fixup > addr && ext[i].fixup < addr + region.length));
  }
}

// What the inputs reached (printed at exit with OKP_FUZZ_STATS=1).
unsigned long g_regions, g_relocated, g_plans, g_post_plans;
void print_stats() {
  std::fprintf(stderr, "fuzz_detour: %lu regions accepted, %lu relocated, %lu detour images "
               "(and %lu with a post call) checked\n", g_regions, g_relocated, g_plans, g_post_plans);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (std::getenv("OKP_FUZZ_STATS")) std::atexit(print_stats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  okp_fuzz::Input in{data, size};
  const u8 mode = in.u8();
  const u16 probe_off = static_cast<u16>(in.u8() | in.u8() << 8);
  okp_addr_t start = 0xffffffff81100000ul + (((mode >> 4) & 7) << 12);
  // Fuzzed, but a function never wraps around the top of the address space.
  if (mode & 1) start = in.u64() & ~0xfffful;
  if (start == 0) start = 0x10000;  // foreign_branch_into's "none" is address 0
  okp_addr_t buffer = start + 0x3f000000ul;
  if (mode & 2) buffer = in.u64();
  ExtableEntry ext[3];
  const usize n_ext = (mode >> 2) & 3 ? ((mode >> 2) & 3) : 0;
  for (usize i = 0; i < n_ext; ++i) {
    const u16 a = static_cast<u16>(in.u8() | in.u8() << 8), b = static_cast<u16>(in.u8() | in.u8() << 8);
    ext[i] = {start + a, start + b};
  }
  // Mode bit 7: a retpoline thunk range near the function (2 bytes: its offset from the
  // start, signed; 1 byte: its size in 32-byte units), so jumps to it need the tail-call proof.
  AddrRange thunk = {};
  if (mode & 0x80) {
    const int16_t off = static_cast<int16_t>(in.u8() | in.u8() << 8);
    thunk.start = start + static_cast<u64>(static_cast<i64>(off));
    thunk.end = thunk.start + 32 * (1 + (in.u8() & 7));
  }
  const usize n = in.left() > 4096 ? 4096 : in.left();
  if (n == 0) return 0;
  u8* text = static_cast<u8*>(std::malloc(n));
  std::memcpy(text, data + in.pos, n);
  FunctionText fn{start, text, n};
  if (mode & 0x80) {
    fn.thunks = &thunk;
    fn.n_thunks = 1;
  }
  const okp_addr_t addr = start + probe_off % n;

  (void)runs_on_past_end(fn);
  okp_addr_t targets[8];
  const usize nt = outside_jump_targets(fn, targets, 8);
  CHECK(nt <= 8);
  for (usize i = 0; i < nt; ++i) CHECK(targets[i] < start || targets[i] >= start + n);
  auto foreign = foreign_branch_into(fn, addr, addr + 5);
  if (!foreign.is_error() && foreign.value())
    CHECK(foreign.value() >= start && foreign.value() < start + n);

  auto region = check_detour_region(fn, addr, ext, n_ext);
  if (region.is_error()) {
    CHECK(region.error().reason()[0] != '\0');
  } else {
    const DetourRegion& r = region.value();
    check_region(fn, addr, r, ext, n_ext);
    ++g_regions;
    const u8* original = text + (addr - start);
    const okp_addr_t code_addr = buffer + kDetourCopyOffset;
    auto code = relocate_region(r, original, code_addr);
    if (!code.is_error()) {
      CHECK(code.value().length <= kMaxDetourCode);
      ++g_relocated;
      check_relocation(r, original, code.value().bytes, code.value().length, code_addr, 0,
                       r.count, true);
    } else {
      const Errno e = code.error().code();
      CHECK(e == Errno::kRange || e == Errno::kInval);
    }
    const okp_addr_t entry = buffer - 0x1000, post = buffer - 0x2000;
    for (okp_addr_t post_entry : {okp_addr_t{0}, post}) {
      auto plan = plan_detour(fn, addr, ext, n_ext, buffer, entry, post_entry);
      if (plan.is_error()) continue;
      const arch::DetourPlan& p = plan.value();
      ++(post_entry ? g_post_plans : g_plans);
      CHECK(p.size <= arch::kDetourCapacity && p.size > kDetourCopyOffset);
      CHECK(le64(p.image) == addr);
      CHECK(le64(p.image + kDetourFlagsOffset) == (post_entry ? kDetourHasPost : 0));
      CHECK(p.image[kDetourCallOffset] == 0xe8);
      CHECK(buffer + kDetourCopyOffset +
                static_cast<u64>(static_cast<i64>(static_cast<i32>(le32(p.image + kDetourCallOffset + 1)))) ==
            entry);
      CHECK(p.region_length == r.length && p.post == (post_entry != 0));
      CHECK(p.jump_size == kJumpSize && p.jump[0] == 0xe9);
      CHECK(addr + kJumpSize + static_cast<u64>(static_cast<i64>(static_cast<i32>(le32(p.jump + 1)))) ==
            buffer + kDetourCallOffset);
      if (!post_entry) {
        check_relocation(r, original, p.image + kDetourCopyOffset, p.size - kDetourCopyOffset,
                         code_addr, 0, r.count, true);
      } else {
        // first instruction, call post, 16 bytes of data, the rest.
        const RegionInsn& first = r.insns[0];
        CHECK(!first.relative_branch && !first.is_call);
        usize at = kDetourCopyOffset;
        Z z;
        CHECK(zdecode(p.image + at, p.size - at, z));
        check_relocation(r, original, p.image + at, z.insn.length, buffer + at, 0, 1, false);
        at += z.insn.length;
        CHECK(p.image[at] == 0xe8);
        CHECK(buffer + at + 5 + static_cast<u64>(static_cast<i64>(static_cast<i32>(le32(p.image + at + 1)))) ==
              post);
        at += kPostCallSize;
        CHECK(le64(p.image + at) == addr && le64(p.image + at + 8) == addr + first.length);
        at += kPostDataSize;
        check_relocation(r, original, p.image + at, p.size - at, buffer + at, 1, r.count, true);
      }
    }
  }
  std::free(text);
  return 0;
}
