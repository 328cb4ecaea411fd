// SPDX-License-Identifier: GPL-2.0
// The arm64 detour's image and the relocation of its one instruction (detour.h says the
// layout and what each instruction becomes).
#include "arch/arm64/detour.h"

namespace okp::arm64 {

namespace {

constexpr u32 kStpX0X30Push = 0xa9bf7be0;  // stp x0, x30, [sp, #-16]!
constexpr u32 kLdpX0X30Pop = 0xa8c17be0;   // ldp x0, x30, [sp], #16
constexpr u32 kBr = 0xd61f0000;            // br xn (n << 5)
constexpr u32 kBlrX30 = 0xd63f03c0;        // blr x30
constexpr u32 kNop = 0xd503201f;

bool fits(i64 delta, unsigned bits) {  // a word offset in a signed field of bits
  const i64 words = delta >> 2;
  return (delta & 3) == 0 && words >= -(i64{1} << (bits - 1)) && words < (i64{1} << (bits - 1));
}

u32 word_field(i64 delta, unsigned bits) {
  return static_cast<u32>(delta >> 2) & ((1u << bits) - 1);
}

// Writes the detour's words and its literal pool; remembers the first failure.
class DetourWriter {
 public:
  DetourWriter(arch::DetourPlan& plan, okp_addr_t buffer) : plan_(plan), buffer_(buffer) {}

  okp_addr_t here() const { return buffer_ + code_; }
  void word(u32 w) {
    if (code_ + 4 > kLiteralStart) {
      fail("not optimized: the relocated instruction does not fit the detour");
      return;
    }
    put(code_, w);
    code_ += 4;
  }
  void patch(okp_addr_t at, u32 w) { put(at - buffer_, w); }
  void data(usize at, u64 value) {
    for (usize i = 0; i < 8; ++i) plan_.image[at + i] = static_cast<u8>(value >> (8 * i));
  }
  // ldr xt, =value (from the pool after the code: its offset is filled in by finish(), when
  // the code's end is known).
  void load_literal(u8 rt, u64 value) {
    usize i = 0;
    while (i < literals_ && literal_[i] != value) ++i;
    if (i == kMaxLiterals || loads_ == kMaxLiteralLoads) {
      fail("not optimized: the relocated instruction does not fit the detour");
      return;
    }
    if (i == literals_) literal_[literals_++] = value;
    load_[loads_++] = {code_, rt, static_cast<u8>(i)};
    word(0x58000000u | rt);
  }
  // b target from here.
  void branch(okp_addr_t target) {
    const u32 b = encode_b(here(), target);
    if (!b) {
      fail_reach(target);
      return;
    }
    word(b);
  }
  // A way out of the copy to target: through the post entry first, when there is one.
  void exit_to(okp_addr_t target, okp_addr_t post_entry) {
    if (post_entry) call_entry(post_entry);
    branch(target);
  }
  // stp x0, x30; bl entry (or, out of its reach, ldr x30, =entry; blr x30); ldp x0, x30: two
  // words before the call either way, so the call's return address is where detour.h says.
  void call_entry(okp_addr_t entry) {
    word(kStpX0X30Push);
    const u32 b = encode_b(here() + 4, entry);
    if (b) {
      word(kNop);
      word(b | 0x80000000u);  // bl
    } else {
      load_literal(30, entry);
      word(kBlrX30);
    }
    word(kLdpX0X30Pop);
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
  ErrorOr<arch::DetourPlan> finish(okp_addr_t addr) {
    if (error_ && *error_) return Error(Errno::kNoSpc, error_);
    if (error_)
      return Error::formatted(Errno::kRange, "not optimized: %#lx is out of a branch's reach "
                              "(b: +-128 MiB) of the detour at %#lx", reach_target_, buffer_);
    // The pool right after the code, 8-aligned: a detour takes only the cells it fills
    // (JumpOptimizer::trim_detour gives the rest back).
    const usize pool = (code_ + 7) & ~static_cast<usize>(7);
    for (usize i = 0; i < literals_; ++i) data(pool + 8 * i, literal_[i]);
    for (usize k = 0; k < loads_; ++k) {
      const i64 delta = static_cast<i64>(pool + 8 * load_[k].literal) -
                        static_cast<i64>(load_[k].at);
      put(load_[k].at, 0x58000000u | word_field(delta, 19) << 5 | load_[k].rt);
    }
    plan_.size = static_cast<u16>(pool + 8 * literals_);
    plan_.buffer = buffer_;
    plan_.copy = buffer_ + kDetourCopyOffset;
    plan_.region_length = kInsnSize;
    plan_.region_insns = 1;
    const u32 jump = encode_b(addr, buffer_ + kDetourCallOffset);  // in reach: plan_detour
    for (usize i = 0; i < 4; ++i) plan_.jump[i] = static_cast<u8>(jump >> (8 * i));
    plan_.jump_size = kInsnSize;
    return plan_;
  }

  // The code ends where the pool of the longest detour would start, so that any detour fits.
  static constexpr usize kMaxLiterals = 3;  // the entry, the post entry, one the copy loads
  static constexpr usize kLiteralStart = kMaxDetourSize - 8 * kMaxLiterals;
  // The pre call's, the copy's, and a post call's on each of at most two ways out.
  static constexpr usize kMaxLiteralLoads = 4;

 private:
  void put(usize at, u32 w) {
    for (usize i = 0; i < 4; ++i) plan_.image[at + i] = static_cast<u8>(w >> (8 * i));
  }

  arch::DetourPlan& plan_;
  okp_addr_t buffer_;
  usize code_ = kDetourCallOffset;  // after the two data words
  usize literals_ = 0;
  u64 literal_[kMaxLiterals] = {};
  struct LiteralLoad {
    usize at;    // the ldr's byte in the image
    u8 rt;
    u8 literal;  // its index in literal_
  };
  usize loads_ = 0;
  LiteralLoad load_[kMaxLiteralLoads] = {};
  const char* error_ = nullptr;
  okp_addr_t reach_target_ = 0;
};
static_assert(DetourWriter::kLiteralStart % 8 == 0, "literals are 8-aligned");

// The relocated instruction, every way out of it through exit_to.
void relocate(DetourWriter& w, const InsnPlan& p, okp_addr_t addr, u32 insn,
              const DetourEnv& env) {
  const okp_addr_t next = addr + kInsnSize;
  const okp_addr_t post = env.post_entry;
  switch (p.sim) {
    case Sim::kB:
      w.exit_to(p.target, post);
      return;
    case Sim::kBl:
      w.load_literal(30, next);
      w.exit_to(p.target, post);
      return;
    case Sim::kBCond:
    case Sim::kCbz:
    case Sim::kTbz: {
      const bool tbz = p.sim == Sim::kTbz;
      const unsigned bits = tbz ? 14 : 19;
      const u32 keep = ~(((1u << bits) - 1) << 5);
      const okp_addr_t at = w.here();
      w.word(0);  // the condition, patched below
      w.exit_to(next, post);
      const okp_addr_t taken = w.here();
      w.exit_to(p.target, post);
      const i64 delta = static_cast<i64>(taken) - static_cast<i64>(at);
      if (!fits(delta, bits)) {
        w.fail("not optimized: the relocated conditional branch does not reach its way out");
        return;
      }
      w.patch(at, (insn & keep) | word_field(delta, bits) << 5);
      return;
    }
    case Sim::kAdr:
      if (p.rd != 31) w.load_literal(p.rd, p.target);
      w.exit_to(next, post);
      return;
    case Sim::kLdrLit:
      if (p.rd != 31) {
        w.load_literal(p.rd, p.target);
        const u32 base = p.size == 4 ? 0xb9400000u : p.size == 8 ? 0xf9400000u : 0xb9800000u;
        w.word(base | static_cast<u32>(p.rd) << 5 | p.rd);  // ldr wt|xt / ldrsw xt, [xt]
      }
      w.exit_to(next, post);
      return;
    case Sim::kNop:
      if ((insn & 0x3b000000) != 0x18000000) w.word(insn);  // prfm (literal): nothing at all
      w.exit_to(next, post);
      return;
    case Sim::kBr:
    case Sim::kRet:
      if (post) {
        w.fail("not optimized: post handlers after an indirect branch (its target is known only "
               "when it runs)");
        return;
      }
      w.word(insn);
      return;
    case Sim::kBlr:
      if (post) {
        w.fail("not optimized: post handlers after an indirect branch (its target is known only "
               "when it runs)");
        return;
      }
      if (p.rn == 30) {
        w.fail("not optimized: blr x30 (the return address it sets is its own target register)");
        return;
      }
      if (env.bti) {
        w.fail("not optimized: blr under BTI (a br from the detour would not match the callee's "
               "bti c landing pad)");
        return;
      }
      w.load_literal(30, next);
      w.word(kBr | static_cast<u32>(p.rn) << 5);
      return;
    default:
      // Reads no PC (mov, add, the DAIF moves, every stepped instruction): as it is.
      w.word(insn);
      w.exit_to(next, post);
      return;
  }
}

}  // namespace

u32 encode_b(okp_addr_t at, okp_addr_t target) {
  const i64 delta = static_cast<i64>(target - at);
  if (!fits(delta, 26)) return 0;
  return 0x14000000u | word_field(delta, 26);
}

bool is_landing_pad(u32 insn) {
  // hint #32..#39 with bit 1 or 2 (bti c/j/jc: #34, #36, #38), paciasp (#25), pacibsp (#27).
  return (insn & 0xffffff3f) == 0xd503241f || insn == 0xd503233f || insn == 0xd503237f;
}

ErrorOr<arch::DetourPlan> plan_detour(okp_addr_t addr, u32 insn, okp_addr_t buffer,
                                      const DetourEnv& env) {
  if (env.bti && is_landing_pad(insn))
    return Error::formatted(Errno::kOpNotSupp, "not optimized: %#010x is a BTI landing pad "
                            "(an indirect branch lands here; a b is no landing pad)", insn);
  if (!encode_b(addr, buffer + kDetourCallOffset))
    return Error::formatted(Errno::kRange, "not optimized: the detour at %#lx is out of a b's "
                            "reach (+-128 MiB) of the probe", buffer);
  auto planned = plan_insn(addr, insn);
  if (planned.is_error()) return planned.error();
  arch::DetourPlan plan;
  DetourWriter w(plan, buffer);
  w.data(0, addr);
  w.data(kDetourSiteOffset, env.post_entry ? kDetourHasPost : 0);
  w.call_entry(env.entry);
  relocate(w, planned.value(), addr, insn, env);
  plan.post = env.post_entry != 0;
  return w.finish(addr);
}

void set_detour_site(arch::DetourPlan* plan, okp_addr_t site) {
  u8* word = plan->image + kDetourSiteOffset;
  for (usize i = 0; i < 8; ++i) word[i] |= static_cast<u8>(site >> (8 * i));
}


}  // namespace okp::arm64
