// SPDX-License-Identifier: GPL-2.0
// The riscv64 detour's image and the relocation of its region (detour.h says the layout and
// what each instruction becomes).
#include "arch/riscv/detour.h"

#include "arch/riscv/register_use.h"

namespace okp::riscv {

namespace {

constexpr u32 kNop = 0x00000013;  // addi x0, x0, 0
constexpr u16 kCNop = 0x0001;

u32 i_type(u32 opcode, u32 f3, u8 rd, u8 rs1, i32 imm) {
  return (static_cast<u32>(imm) & 0xfff) << 20 | static_cast<u32>(rs1) << 15 | f3 << 12 |
         static_cast<u32>(rd) << 7 | opcode;
}
u32 addi(u8 rd, u8 rs1, i32 imm) { return i_type(0x13, 0, rd, rs1, imm); }
u32 ld(u8 rd, u8 rs1, i32 imm) { return i_type(0x03, 3, rd, rs1, imm); }
u32 sd(u8 rs2, u8 rs1, i32 imm) {
  const u32 u = static_cast<u32>(imm) & 0xfff;
  return (u >> 5) << 25 | static_cast<u32>(rs2) << 20 | static_cast<u32>(rs1) << 15 | 3u << 12 |
         (u & 31) << 7 | 0x23;
}
u32 b_type(u32 f3, u8 rs1, u8 rs2, i32 off) {
  const u32 u = static_cast<u32>(off);
  return ((u >> 12) & 1) << 31 | ((u >> 5) & 0x3f) << 25 | static_cast<u32>(rs2) << 20 |
         static_cast<u32>(rs1) << 15 | f3 << 12 | ((u >> 1) & 0xf) << 8 | ((u >> 11) & 1) << 7 |
         0x63;
}

// Writes the detour's code and its literal pool; remembers the first failure.
class DetourWriter {
 public:
  DetourWriter(arch::DetourPlan& plan, okp_addr_t buffer, u8 dead)
      : plan_(plan), buffer_(buffer), dead_(dead) {}

  okp_addr_t here() const { return buffer_ + code_; }
  usize offset() const { return code_; }
  void bytes(const u8* b, usize n) {
    if (code_ + n > kCodeLimit) {
      fail("not optimized: the relocated region does not fit the detour");
      return;
    }
    for (usize i = 0; i < n; ++i) plan_.image[code_ + i] = b[i];
    code_ += n;
  }
  void word(u32 w) {
    const u8 b[4] = {static_cast<u8>(w), static_cast<u8>(w >> 8), static_cast<u8>(w >> 16),
                     static_cast<u8>(w >> 24)};
    bytes(b, 4);
  }
  void half(u16 h) {
    const u8 b[2] = {static_cast<u8>(h), static_cast<u8>(h >> 8)};
    bytes(b, 2);
  }
  void patch_word(usize at, u32 w) {
    for (usize i = 0; i < 4; ++i) plan_.image[at + i] = static_cast<u8>(w >> (8 * i));
  }
  void data(usize at, u64 value) {
    for (usize i = 0; i < 8; ++i) plan_.image[at + i] = static_cast<u8>(value >> (8 * i));
  }
  // rd = value, from the pool after the code (`auipc rd, 0; ld rd, off(rd)`: the pool is
  // within the detour, so the low part alone reaches it; off is filled in by finish()).
  void load_literal(u8 rd, u64 value) {
    usize i = 0;
    while (i < literals_ && literal_[i] != value) ++i;
    if (i == kMaxLiterals || loads_ == kMaxLoads) {
      fail("not optimized: the relocated region does not fit the detour");
      return;
    }
    if (i == literals_) literal_[literals_++] = value;
    load_[loads_++] = {code_, rd, static_cast<u8>(i)};
    word(encode_auipc(rd, 0));
    word(ld(rd, rd, 0));
  }
  // `auipc rd, hi; <second>` from here to target: second is jalr (link rd2) or addi.
  void pair(u8 rd, okp_addr_t target, u8 link) {
    if (!pair_reaches(here(), target)) {
      fail_reach(target);
      return;
    }
    i32 hi, lo;
    split_pair(static_cast<i64>(target - here()), &hi, &lo);
    word(encode_auipc(rd, hi));
    word(encode_jalr(link, rd, lo));
  }
  // The call into an entry, ra kept on the stack around it in the entry's frame, which the
  // call takes whole (detour.h's buffer+24..+47).
  void call_entry(okp_addr_t entry) {
    word(addi(kSp, kSp, -kDetourEntryFrame));
    word(sd(kRa, kSp, kDetourEntryRaSlot));
    pair(kRa, entry, kRa);
  }
  void after_entry() {
    word(ld(kRa, kSp, kDetourEntryRaSlot));
    word(addi(kSp, kSp, kDetourEntryFrame));
  }
  // The post call and the ip post handlers see, as data its return address points at.
  void post_call(okp_addr_t post_entry, okp_addr_t next_ip) {
    while ((code_ + 16) % 8) {
      if (code_ % 4) half(kCNop);  // only after a compressed copy: the kernel has RVC
      else word(kNop);
    }
    call_entry(post_entry);
    if (error_) return;
    data(code_, next_ip);
    code_ += 8;
    after_entry();
  }
  // A way out of the copy to target: a jal where one reaches (no register), else through R.
  void exit_to(okp_addr_t target) {
    if (const u32 jal = encode_jal(0, here(), target)) {
      word(jal);
      return;
    }
    if (!dead_) {
      fail_register(target);
      return;
    }
    pair(dead_, target, 0);
  }
  void fail(const char* why) {
    if (!error_) error_ = why;
  }
  void fail_reach(okp_addr_t target) {
    if (!error_) {
      reach_target_ = target;
      error_ = "";
    }
  }
  // A way out beyond a jal's reach, and no dead register for the pair.
  void fail_register(okp_addr_t target) {
    if (!error_) {
      reach_target_ = target;
      error_ = "";
      no_register_ = true;
    }
  }
  bool failed() const { return error_ != nullptr; }
  ErrorOr<arch::DetourPlan> finish(const DetourRegion& r) {
    if (error_ && *error_) return Error(Errno::kNoSpc, error_);
    if (error_ && no_register_)
      return Error::formatted(Errno::kRange, "not optimized: %#lx is out of a jal's reach "
                              "(+-1 MiB) of the detour at %#lx, and no register is dead for an "
                              "auipc/jalr pair", reach_target_, buffer_);
    if (error_)
      return Error::formatted(Errno::kRange, "not optimized: %#lx is out of an auipc/jalr "
                              "pair's reach (+-2 GiB) of the detour at %#lx", reach_target_,
                              buffer_);
    const usize pool = (code_ + 7) & ~static_cast<usize>(7);
    for (usize i = code_; i < pool; ++i) plan_.image[i] = 0;
    for (usize i = 0; i < literals_; ++i) data(pool + 8 * i, literal_[i]);
    for (usize k = 0; k < loads_; ++k) {
      const i32 off = static_cast<i32>(pool + 8 * load_[k].literal - load_[k].at);
      patch_word(load_[k].at + 4, ld(load_[k].rd, load_[k].rd, off));
    }
    plan_.size = static_cast<u16>(pool + 8 * literals_);
    plan_.buffer = buffer_;
    plan_.copy = buffer_ + kDetourCopyOffset;
    plan_.region_length = r.length;
    plan_.region_insns = r.count;
    // A jal where one reaches the detour (4 bytes, no register), else the pair through R
    // (plan_detour checked that one of them fits the region).
    if (const u32 jal = encode_jal(0, r.addr, buffer_ + kDetourCallOffset)) {
      for (usize i = 0; i < 4; ++i) plan_.jump[i] = static_cast<u8>(jal >> (8 * i));
      plan_.jump_size = static_cast<u8>(kJalSize);
      return plan_;
    }
    i32 hi, lo;
    split_pair(static_cast<i64>(buffer_ + kDetourCallOffset - r.addr), &hi, &lo);
    const u32 jump[2] = {encode_auipc(r.dead, hi), encode_jalr(0, r.dead, lo)};
    for (usize i = 0; i < 8; ++i) plan_.jump[i] = static_cast<u8>(jump[i / 4] >> (8 * (i % 4)));
    plan_.jump_size = static_cast<u8>(kJumpSize);
    return plan_;
  }

  // Code stops where the pool of the longest detour would start, so any detour fits.
  static constexpr usize kMaxLiterals = 2;  // the copy's: an auipc's value, a call's ra
  static constexpr usize kCodeLimit = kMaxDetourSize - 8 * kMaxLiterals;
  static constexpr usize kMaxLoads = 4;

 private:
  arch::DetourPlan& plan_;
  okp_addr_t buffer_;
  u8 dead_;
  usize code_ = kDetourCallOffset;
  usize literals_ = 0;
  u64 literal_[kMaxLiterals] = {};
  struct LiteralLoad {
    usize at;  // the auipc's byte in the image
    u8 rd;
    u8 literal;
  };
  usize loads_ = 0;
  LiteralLoad load_[kMaxLoads] = {};
  const char* error_ = nullptr;
  okp_addr_t reach_target_ = 0;
  bool no_register_ = false;
};
static_assert(DetourWriter::kCodeLimit % 8 == 0, "literals are 8-aligned");

// The condition of a branch as a 4-byte one: funct3, rs1, rs2 (c.beqz/c.bnez: beq/bne rs1', x0).
struct Condition {
  u32 f3;
  u8 rs1, rs2;
};
Condition condition_of(const RegionInsn& in) {
  if (in.length == 2) {
    const u32 h = in.bytes[0] | in.bytes[1] << 8;
    return {(h >> 13) == 6 ? 0u : 1u, static_cast<u8>(((h >> 7) & 7) + 8), 0};
  }
  const u32 w = in.bytes[0] | in.bytes[1] << 8 | in.bytes[2] << 16 |
                static_cast<u32>(in.bytes[3]) << 24;
  return {(w >> 12) & 7, static_cast<u8>((w >> 15) & 31), static_cast<u8>((w >> 20) & 31)};
}

// One relocated instruction of the region; false when the region's flow ends with it.
bool relocate(DetourWriter& w, const DetourRegion& r, usize k, const DetourEnv& env) {
  const RegionInsn& in = r.insns[k];
  const okp_addr_t at = r.addr + in.offset;
  const okp_addr_t next = at + in.length;
  const bool last = k + 1 == r.count;
  const okp_addr_t post = k == 0 ? env.post_entry : 0;
  // Where the flow goes on after the instruction: the next relocated one, or back.
  auto way_on = [&] {
    if (post) w.post_call(post, next);
    if (last) w.exit_to(r.addr + r.length);
  };
  auto exit_to = [&](okp_addr_t target) {
    if (post) w.post_call(post, target);
    w.exit_to(target);
  };
  auto u = register_use(in.bytes, in.length, at);
  if (u.is_error()) {
    w.fail("not optimized: an instruction of the region does not decode");
    return false;
  }
  const RegisterUse& use = u.value();
  switch (in.flow) {
    case Flow::kNext:
      if (use.pc_relative) {  // auipc: its value, computed for the original address
        if (use.rd) w.load_literal(use.rd, static_cast<u64>(use.imm));
      } else {
        w.bytes(in.bytes, in.length);
      }
      way_on();
      return true;
    case Flow::kJump:
      exit_to(in.target);
      return false;
    case Flow::kBranch: {
      const Condition c = condition_of(in);
      const usize branch_at = w.offset();
      w.word(0);  // the inverted branch, patched below
      exit_to(in.target);
      const i64 skip = static_cast<i64>(w.offset() - branch_at);
      if (skip >= 4096) {
        w.fail("not optimized: the relocated branch does not reach its way on");
        return false;
      }
      if (!w.failed()) w.patch_word(branch_at, b_type(c.f3 ^ 1, c.rs1, c.rs2, static_cast<i32>(skip)));
      way_on();
      return true;
    }
    case Flow::kCall:
      if (in.target) {  // jal ra, or the assembler's far `call`: a known target
        w.load_literal(kRa, next);
        exit_to(in.target);
        return false;
      }
      if (post) {
        w.fail("not optimized: post handlers after an indirect call (its target is known only "
               "when it runs)");
        return false;
      }
      if (!r.dead) {
        w.fail("not optimized: an indirect call in the region needs a dead register to carry "
               "its target");
        return false;
      }
      // jalr ra, imm(rs1) / c.jalr rs1: the target first, rs1 may be ra itself.
      w.word(addi(r.dead, use.rs1, static_cast<i32>(use.imm)));
      w.load_literal(kRa, next);
      w.word(encode_jalr(0, r.dead, 0));
      return false;
    case Flow::kReturn:
      if (post) {
        w.fail("not optimized: post handlers after a return (its target is known only when it "
               "runs)");
        return false;
      }
      w.bytes(in.bytes, in.length);
      return false;
    case Flow::kIndirect:
    case Flow::kUnknown:
      break;
  }
  w.fail("not optimized: an instruction of the region cannot be relocated");
  return false;
}

}  // namespace

u32 encode_auipc(u8 rd, i32 hi20) {
  return (static_cast<u32>(hi20) & 0xfffff) << 12 | static_cast<u32>(rd) << 7 | 0x17;
}
u32 encode_jalr(u8 rd, u8 rs1, i32 imm12) { return i_type(0x67, 0, rd, rs1, imm12); }

u32 encode_jal(u8 rd, okp_addr_t from, okp_addr_t to) {
  const i64 delta = static_cast<i64>(to - from);
  if (delta & 1 || delta < -(i64{1} << 20) || delta >= (i64{1} << 20)) return 0;
  const u32 o = static_cast<u32>(delta);
  return ((o >> 20) & 1) << 31 | ((o >> 1) & 0x3ff) << 21 | ((o >> 11) & 1) << 20 |
         ((o >> 12) & 0xff) << 12 | static_cast<u32>(rd) << 7 | 0x6f;
}

void split_pair(i64 delta, i32* hi, i32* lo) {
  // jalr/addi/ld sign-extend their 12 bits: round the high part so the low one is in range.
  const i64 h = (delta + 0x800) >> 12;
  *hi = static_cast<i32>(h);
  *lo = static_cast<i32>(delta - (h << 12));
}

bool pair_reaches(okp_addr_t from, okp_addr_t to) {
  const i64 delta = static_cast<i64>(to - from);
  const i64 h = (delta + 0x800) >> 12;
  return h >= -(i64{1} << 19) && h < (i64{1} << 19);
}

ErrorOr<arch::DetourPlan> plan_detour(const DetourRegion& region, okp_addr_t buffer,
                                      const DetourEnv& env) {
  if (region.count == 0) return Error(Errno::kInval, "not optimized: the region was not checked");
  if (!encode_jal(0, region.addr, buffer + kDetourCallOffset)) {
    // The pair: 8 bytes of region, R to carry it.
    if (!pair_reaches(region.addr, buffer + kDetourCallOffset))
      return Error::formatted(Errno::kRange, "not optimized: the detour at %#lx is out of an "
                              "auipc/jalr pair's reach (+-2 GiB) of the probe", buffer);
    if (region.length < kJumpSize || !region.dead)
      return Error::formatted(Errno::kRange, "not optimized: the detour at %#lx is out of a "
                              "jal's reach (+-1 MiB) of the probe, and the region was checked "
                              "for one (no room or no register for an auipc/jalr pair)", buffer);
  }
  arch::DetourPlan plan;
  DetourWriter w(plan, buffer, region.dead);
  w.data(0, region.addr);
  w.data(kDetourSiteOffset, env.post_entry ? kDetourHasPost : 0);
  w.data(kDetourDeadRegOffset, detour_dead_slot(region.dead));
  w.call_entry(env.entry);
  w.after_entry();
  for (usize k = 0; k < region.count && !w.failed(); ++k)
    if (!relocate(w, region, k, env)) break;
  plan.post = env.post_entry != 0;
  return w.finish(region);
}

void set_detour_site(arch::DetourPlan* plan, okp_addr_t site) {
  u8* word = plan->image + kDetourSiteOffset;
  for (usize i = 0; i < 8; ++i) word[i] |= static_cast<u8>(site >> (8 * i));
}

}  // namespace okp::riscv
