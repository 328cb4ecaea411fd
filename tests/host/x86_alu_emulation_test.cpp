// SPDX-License-Identifier: GPL-2.0
// x86 flag-setting register arithmetic emulated in the trap (Emulation::kAlu, one trap and no
// slot): add, sub, cmp, and, or, xor, test, inc, dec at 64 and 32 bits. Each form is checked
// against this CPU running the same instruction on a grid of carry/overflow/sign/zero/parity/
// AF boundary values, and the edge cases also against hand-computed flags, so that a host CPU
// that agreed with a wrong emulation would not hide it.
#include <gtest/gtest.h>

#include "x86_plan_test_helpers.h"

namespace {

using namespace x86_plan_test;
using okp::x86::AluOp;

constexpr unsigned long kArith = kCF | kPF | kAF | kZF | kSF | kOF;

// The CPU's answer: dst in rax, src in rcx, flags in and out. The red zone is stepped over
// before pushing (host code may keep locals there).
using NativeFn = unsigned long (*)(unsigned long* dst, unsigned long src, unsigned long flags);
#define NATIVE(name, text)                                                                   \
  unsigned long name(unsigned long* dst, unsigned long src, unsigned long flags) {          \
    unsigned long a = *dst;                                                                 \
    asm volatile("lea -128(%%rsp),%%rsp\n\tpush %[f]\n\tpopf\n\t" text                      \
                 "\n\tpushf\n\tpop %[f]\n\tlea 128(%%rsp),%%rsp"                            \
                 : "+a"(a), [f] "+r"(flags) : "c"(src) : "cc", "memory");                   \
    *dst = a;                                                                               \
    return flags;                                                                           \
  }
NATIVE(add64, "add %%rcx,%%rax")
NATIVE(add32, "add %%ecx,%%eax")
NATIVE(sub64, "sub %%rcx,%%rax")
NATIVE(sub32, "sub %%ecx,%%eax")
NATIVE(cmp64, "cmp %%rcx,%%rax")
NATIVE(cmp32, "cmp %%ecx,%%eax")
NATIVE(and64, "and %%rcx,%%rax")
NATIVE(and32, "and %%ecx,%%eax")
NATIVE(or64, "or %%rcx,%%rax")
NATIVE(or32, "or %%ecx,%%eax")
NATIVE(xor64, "xor %%rcx,%%rax")
NATIVE(xor32, "xor %%ecx,%%eax")
NATIVE(test64, "test %%rcx,%%rax")
NATIVE(test32, "test %%ecx,%%eax")
NATIVE(inc64, "inc %%rax")
NATIVE(inc32, "inc %%eax")
NATIVE(dec64, "dec %%rax")
NATIVE(dec32, "dec %%eax")
NATIVE(addi8_64, "add $-1,%%rax")
NATIVE(subi32_64, "sub $-0x80000000,%%rax")
NATIVE(cmpi8_32, "cmp $0x7f,%%eax")
NATIVE(andi32_32, "and $0xfffffff0,%%eax")
NATIVE(testi32_64, "test $-0x80000000,%%rax")
NATIVE(xori8_64, "xor $-0x80,%%rax")
NATIVE(ori8_32, "or $0x10,%%eax")

struct Form {
  Code code;
  AluOp op;
  bool writes;
  NativeFn native;
  const char* text;
};

const Form kForms[] = {
    {{0x48, 0x01, 0xc8}, AluOp::kAdd, true, add64, "add %rcx,%rax"},
    {{0x01, 0xc8}, AluOp::kAdd, true, add32, "add %ecx,%eax"},
    {{0x48, 0x29, 0xc8}, AluOp::kSub, true, sub64, "sub %rcx,%rax"},
    {{0x2b, 0xc1}, AluOp::kSub, true, sub32, "sub %ecx,%eax (2b form)"},
    {{0x48, 0x39, 0xc8}, AluOp::kCmp, false, cmp64, "cmp %rcx,%rax"},
    {{0x39, 0xc8}, AluOp::kCmp, false, cmp32, "cmp %ecx,%eax"},
    {{0x48, 0x21, 0xc8}, AluOp::kAnd, true, and64, "and %rcx,%rax"},
    {{0x21, 0xc8}, AluOp::kAnd, true, and32, "and %ecx,%eax"},
    {{0x48, 0x09, 0xc8}, AluOp::kOr, true, or64, "or %rcx,%rax"},
    {{0x0b, 0xc1}, AluOp::kOr, true, or32, "or %ecx,%eax (0b form)"},
    {{0x48, 0x31, 0xc8}, AluOp::kXor, true, xor64, "xor %rcx,%rax"},
    {{0x31, 0xc8}, AluOp::kXor, true, xor32, "xor %ecx,%eax"},
    {{0x48, 0x85, 0xc8}, AluOp::kTest, false, test64, "test %rcx,%rax"},
    {{0x85, 0xc8}, AluOp::kTest, false, test32, "test %ecx,%eax"},
    {{0x48, 0xff, 0xc0}, AluOp::kInc, true, inc64, "inc %rax"},
    {{0xff, 0xc0}, AluOp::kInc, true, inc32, "inc %eax"},
    {{0x48, 0xff, 0xc8}, AluOp::kDec, true, dec64, "dec %rax"},
    {{0xff, 0xc8}, AluOp::kDec, true, dec32, "dec %eax"},
    {{0x48, 0x83, 0xc0, 0xff}, AluOp::kAdd, true, addi8_64, "add $-1,%rax (imm8)"},
    {{0x48, 0x2d, 0x00, 0x00, 0x00, 0x80}, AluOp::kSub, true, subi32_64,
     "sub $-0x80000000,%rax (rax imm32, sign-extended)"},
    {{0x83, 0xf8, 0x7f}, AluOp::kCmp, false, cmpi8_32, "cmp $0x7f,%eax"},
    {{0x81, 0xe0, 0xf0, 0xff, 0xff, 0xff}, AluOp::kAnd, true, andi32_32, "and $0xfffffff0,%eax"},
    {{0x48, 0xa9, 0x00, 0x00, 0x00, 0x80}, AluOp::kTest, false, testi32_64,
     "test $-0x80000000,%rax"},
    {{0x48, 0x83, 0xf0, 0x80}, AluOp::kXor, true, xori8_64, "xor $-0x80,%rax"},
    {{0x83, 0xc8, 0x10}, AluOp::kOr, true, ori8_32, "or $0x10,%eax"},
};

// Boundaries of carry, overflow and sign at both widths, AF's nibble, parity, zero.
constexpr unsigned long kValues[] = {
    0, 1, 2, 0x0f, 0x10, 0x7f, 0x80, 0xff, 0x100, 0x7fffffff, 0x80000000, 0xffffffff,
    0x100000000, 0x17fffffff, 0x7fffffffffffffff, 0x8000000000000000, 0xfffffffffffffffe,
    0xffffffffffffffff, 0xdeadbeefcafef00d, 0x0123456789abcdef};

struct Result {
  unsigned long ax, cx, flags;
};

Result emulated(const InsnPlan& p, unsigned long a, unsigned long b, unsigned long flags) {
  Frame f;
  f.regs.ax = a;
  f.regs.cx = b;
  f.regs.flags = flags;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.ip, kAddr + p.length);
  EXPECT_EQ(f.regs.sp, f.initial_sp());
  return {f.regs.ax, f.regs.cx, f.regs.flags};
}

TEST(X86AluEmulation, EachFormIsPlannedAsAlu) {
  for (const Form& form : kForms) {
    InsnPlan p = plan_ok(form.code);
    EXPECT_EQ(p.emulation, Emulation::kAlu) << form.text;
    EXPECT_EQ(p.alu_op, form.op) << form.text;
    EXPECT_EQ(p.length, form.code.size) << form.text;
    EXPECT_FALSE(p.boostable) << form.text;
  }
}

TEST(X86AluEmulation, EachFormMatchesThisCpu) {
  for (const Form& form : kForms) {
    InsnPlan p = plan_ok(form.code);
    ASSERT_EQ(p.emulation, Emulation::kAlu) << form.text;
    for (unsigned long a : kValues)
      for (unsigned long b : kValues)
        for (unsigned long flags_in : {0x202ul, 0x202ul | kArith, 0x202ul | kCF}) {
          unsigned long native_ax = a;
          const unsigned long native_flags = form.native(&native_ax, b, flags_in);
          const Result e = emulated(p, a, b, flags_in);
          EXPECT_EQ(e.ax, native_ax) << form.text << " a=" << std::hex << a << " b=" << b;
          EXPECT_EQ(e.flags & (kArith | 0xffful), native_flags & (kArith | 0xffful))
              << form.text << " a=" << std::hex << a << " b=" << b << " flags=" << flags_in;
          EXPECT_EQ(e.cx, b) << form.text;  // the source is never written
          if (!form.writes) {
            EXPECT_EQ(e.ax, a) << form.text << " writes no register";
          }
        }
  }
}

// Hand-computed: these hold whatever CPU runs the tests.
struct Edge {
  Code code;
  unsigned long a, b, flags_in;
  unsigned long ax, flags;
  const char* what;
};

const Edge kEdges[] = {
    // add: carry out of bit 63 to zero (CF ZF PF, AF from bit 3), signed overflow at 0x7f..f.
    {{0x48, 0x01, 0xc8}, ~0ul, 1, 0x202, 0, 0x202 | kCF | kZF | kPF | kAF, "add wraps to 0"},
    {{0x48, 0x01, 0xc8}, 0x7fffffffffffffff, 1, 0x202, 0x8000000000000000,
     0x202 | kOF | kSF | kAF | kPF, "add overflows into the sign"},
    {{0x48, 0x01, 0xc8}, 0x8000000000000000, 0x8000000000000000, 0x202, 0,
     0x202 | kCF | kOF | kZF | kPF, "add of two negatives overflows to 0"},
    {{0x48, 0x01, 0xc8}, 0x1, 0x2, 0x202 | kArith, 3, 0x202 | kPF, "add clears what was set"},
    {{0x48, 0x01, 0xc8}, 0x1, 0x0, 0x202, 1, 0x202, "odd parity: PF clear"},
    // 32-bit add: the carry is out of bit 31 and the destination's upper half is cleared.
    {{0x01, 0xc8}, 0xaaaaaaaaffffffff, 1, 0x202, 0, 0x202 | kCF | kZF | kPF | kAF,
     "add32 wraps and zero-extends"},
    {{0x01, 0xc8}, 0xffffffff7fffffff, 1, 0x202, 0x80000000, 0x202 | kOF | kSF | kAF | kPF,
     "add32 overflows at bit 31"},
    // sub/cmp: borrow, overflow, AF from bit 3.
    {{0x48, 0x29, 0xc8}, 0, 1, 0x202, ~0ul, 0x202 | kCF | kSF | kAF | kPF, "sub borrows"},
    {{0x48, 0x29, 0xc8}, 0x8000000000000000, 1, 0x202, 0x7fffffffffffffff,
     0x202 | kOF | kAF | kPF, "sub overflows out of the sign"},
    {{0x48, 0x29, 0xc8}, 0x10, 0x10, 0x202, 0, 0x202 | kZF | kPF, "sub to zero"},
    {{0x29, 0xc8}, 0xffffffff00000010, 0x11, 0x202, 0xffffffff,
     0x202 | kCF | kSF | kPF | kAF, "sub32 borrows, zero-extends"},
    {{0x48, 0x39, 0xc8}, 5, 7, 0x202, 5, 0x202 | kCF | kSF | kAF, "cmp below: CF, rax kept"},
    {{0x39, 0xc8}, 0xffffffff00000007, 7, 0x202, 0xffffffff00000007, 0x202 | kZF | kPF,
     "cmp32 equal: ZF, upper half kept"},
    // Logic: CF, OF, AF cleared.
    {{0x48, 0x21, 0xc8}, 0xf0, 0x0f, 0x202 | kArith, 0, 0x202 | kZF | kPF, "and to zero"},
    {{0x21, 0xc8}, 0xffffffff80000000, 0xffffffff80000000, 0x202, 0x80000000,
     0x202 | kSF | kPF, "and32: SF from bit 31, zero-extends"},
    {{0x48, 0x09, 0xc8}, 0x8000000000000000, 1, 0x202 | kCF | kOF | kAF, 0x8000000000000001,
     0x202 | kSF, "or clears CF OF AF"},
    {{0x31, 0xc0}, 0xdeadbeefcafef00d, 0, 0x202 | kCF, 0, 0x202 | kZF | kPF,
     "xor %eax,%eax clears all of rax"},
    {{0x48, 0x85, 0xc8}, 0xff, 0x100, 0x202, 0xff, 0x202 | kZF | kPF, "test: no write"},
    {{0x85, 0xc8}, 0xffffffff00000003, 0xffffffff00000001, 0x202, 0xffffffff00000003, 0x202,
     "test32: no write, upper half kept"},
    // inc/dec keep CF, either way.
    {{0x48, 0xff, 0xc0}, ~0ul, 0, 0x202, 0, 0x202 | kZF | kPF | kAF, "inc wraps, CF untouched"},
    {{0x48, 0xff, 0xc0}, 0x7fffffffffffffff, 0, 0x202 | kCF, 0x8000000000000000,
     0x202 | kCF | kOF | kSF | kAF | kPF, "inc overflows, CF kept"},
    {{0x48, 0xff, 0xc8}, 0, 0, 0x202, ~0ul, 0x202 | kSF | kAF | kPF, "dec borrows, CF untouched"},
    {{0xff, 0xc8}, 0xffffffff00000001, 0, 0x202 | kCF, 0, 0x202 | kCF | kZF | kPF,
     "dec32 to zero, CF kept, zero-extends"},
    // Immediates: imm8 sign-extended at 64 bits; imm32 masked at 32.
    {{0x48, 0x83, 0xc0, 0xff}, 1, 0, 0x202, 0, 0x202 | kCF | kZF | kPF | kAF, "add $-1 to 1"},
    {{0x83, 0xf8, 0x7f}, 0x80, 0, 0x202, 0x80, 0x202 | kAF, "cmp $0x7f,%eax: above, borrow into bit 3"},
};

TEST(X86AluEmulation, EdgeCasesAsComputedByHand) {
  for (const Edge& edge : kEdges) {
    InsnPlan p = plan_ok(edge.code);
    ASSERT_EQ(p.emulation, Emulation::kAlu) << edge.what;
    const Result e = emulated(p, edge.a, edge.b, edge.flags_in);
    EXPECT_EQ(e.ax, edge.ax) << edge.what;
    EXPECT_EQ(e.flags, edge.flags) << edge.what << std::hex << ": got " << e.flags;
  }
}

TEST(X86AluEmulation, OtherFlagsAreKept) {
  // DF, IF, TF, NT, AC and friends belong to no ALU result.
  InsnPlan p = plan_ok({0x48, 0x01, 0xc8});  // add %rcx,%rax
  const unsigned long system = 0x2 | kTF | kIF | kDF | kIOPL | kNT | kAC | kID;
  const Result e = emulated(p, 1, 1, system);
  EXPECT_EQ(e.flags, system);
}

TEST(X86AluEmulation, StackPointerArithmetic) {
  // The prologue's sub $n,%rsp and the epilogue's add: rsp moves, nothing is written below it.
  InsnPlan sub = plan_ok({0x48, 0x83, 0xec, 0x28});  // sub $0x28,%rsp
  ASSERT_EQ(sub.emulation, Emulation::kAlu);
  Frame f;
  emulate_ok(sub, f);
  EXPECT_EQ(f.regs.sp, f.initial_sp() - 0x28);
  EXPECT_EQ(f.regs.ip, kAddr + 4);
  for (unsigned long w : f.stack) EXPECT_EQ(w, 0u);
  InsnPlan add = plan_ok({0x48, 0x81, 0xc4, 0x00, 0x01, 0x00, 0x00});  // add $0x100,%rsp
  ASSERT_EQ(add.emulation, Emulation::kAlu);
  emulate_ok(add, f);
  EXPECT_EQ(f.regs.sp, f.initial_sp() - 0x28 + 0x100);
}

TEST(X86AluEmulation, ExtendedRegistersAndSameRegister) {
  InsnPlan p = plan_ok({0x4d, 0x29, 0xfc});  // sub %r15,%r12
  ASSERT_EQ(p.emulation, Emulation::kAlu);
  Frame f;
  f.regs.r12 = 10;
  f.regs.r15 = 3;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.r12, 7u);
  EXPECT_EQ(f.regs.r15, 3u);

  InsnPlan same = plan_ok({0x48, 0x29, 0xff});  // sub %rdi,%rdi
  ASSERT_EQ(same.emulation, Emulation::kAlu);
  Frame g;
  g.regs.di = 0x1234;
  emulate_ok(same, g);
  EXPECT_EQ(g.regs.di, 0u);
  EXPECT_EQ(g.regs.flags, 0x202 | kZF | kPF);
}

TEST(X86AluEmulation, OtherFormsStillStep) {
  for (const Code& c : {Code{0x48, 0x01, 0x07},          // add %rax,(%rdi): memory
                        Code{0x48, 0x03, 0x07},          // add (%rdi),%rax: memory
                        Code{0xf0, 0x48, 0x01, 0x07},    // lock add %rax,(%rdi)
                        Code{0x00, 0xc8},                // add %cl,%al: 8-bit
                        Code{0x66, 0x01, 0xc8},          // add %cx,%ax: 16-bit
                        Code{0x66, 0x83, 0xf8, 0x01},    // cmp $1,%ax: 16-bit
                        Code{0x84, 0xc0},                // test %al,%al: 8-bit
                        Code{0x80, 0xe1, 0x0f},          // and $0xf,%cl: 8-bit
                        Code{0xfe, 0xc0},                // inc %al: 8-bit
                        Code{0x48, 0xff, 0x07},          // incq (%rdi)
                        Code{0x48, 0x11, 0xc8},          // adc: reads CF
                        Code{0x48, 0x19, 0xc8},          // sbb: reads CF
                        Code{0x48, 0xf7, 0xd8},          // neg
                        Code{0x48, 0x39, 0x05, 0, 0, 0, 0}}) {  // cmp %rax,0(%rip)
    InsnPlan p = plan_ok(c);
    EXPECT_EQ(p.emulation, Emulation::kNone) << p.mnemonic;
    EXPECT_EQ(p.reg_dst, okp::x86::kNoReg) << p.mnemonic;
  }
  // lock on a register destination is #UD: never emulated (decoded or not, the CPU decides).
  auto locked = plan({0xf0, 0x48, 0x01, 0xc8});
  if (!locked.is_error()) {
    EXPECT_EQ(locked.value().emulation, Emulation::kNone);
  }
}

}  // namespace
