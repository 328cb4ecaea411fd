// SPDX-License-Identifier: GPL-2.0
// The jump optimizer's region check (arch/x86/detour_region.h) on crafted functions: one test
// per rule, each with the case it accepts beside the one it refuses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arch/x86/detour_region.h"

namespace {

using okp::x86::ExtableEntry;
using okp::x86::FunctionText;

constexpr okp_addr_t kBase = 0xffffffff81000000ul;

struct Check {
  bool ok;
  std::string reason;
  okp::x86::DetourRegion region;
};

Check check(const std::vector<okp::u8>& bytes, size_t at, std::vector<ExtableEntry> ext = {}) {
  FunctionText fn{kBase, bytes.data(), bytes.size()};
  auto r = okp::x86::check_detour_region(fn, kBase + at, ext.data(), ext.size());
  if (r.is_error()) return {false, r.error().reason(), {}};
  return {true, "", r.value()};
}

// push rbp; mov rbp,rsp; mov rax,rdi; add rax,1; pop rbp; ret
const std::vector<okp::u8> kSimple = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8,
                                      0x48, 0x83, 0xc0, 0x01, 0x5d, 0xc3};

TEST(DetourRegion, WholeInstructionsCoverTheJump) {
  auto c = check(kSimple, 1);  // mov rbp,rsp (3) + mov rax,rdi (3)
  ASSERT_TRUE(c.ok) << c.reason;
  EXPECT_EQ(c.region.length, 6u);
  EXPECT_EQ(c.region.count, 2);
  EXPECT_EQ(c.region.insns[1].offset, 3u);
}

TEST(DetourRegion, RegionPastTheFunctionEndIsRefused) {
  auto c = check(kSimple, 11);  // pop rbp; ret: 2 bytes left
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.reason.find("crosses the end of the function"), std::string::npos) << c.reason;
}

TEST(DetourRegion, BranchIntoTheRegionIsRefusedButToItsStartIsNot) {
  // 0: test rdi,rdi  3: je +3 (-> 8)  5: mov rax,rdi  8: mov rax,rsi  b: add rax,1  f: ret
  std::vector<okp::u8> f = {0x48, 0x85, 0xff, 0x74, 0x03, 0x48, 0x89, 0xf8,
                            0x48, 0x89, 0xf0, 0x48, 0x83, 0xc0, 0x01, 0xc3};
  auto inside = check(f, 5);  // region 5..10: je lands on 8, inside
  ASSERT_FALSE(inside.ok);
  EXPECT_NE(inside.reason.find("jz at +0x3 jumps to +0x8, inside the region +0x5..+0xa"),
            std::string::npos) << inside.reason;
  auto at_start = check(f, 8);  // region 8..14: je lands on its first byte: the jump itself
  EXPECT_TRUE(at_start.ok) << at_start.reason;
}

TEST(DetourRegion, CallOnlyAsTheLastInstruction) {
  // 0: xor eax,eax  2: call +0 (-> 7)  7: nop x5  c: ret: the call ends the region
  std::vector<okp::u8> f = {0x31, 0xc0, 0xe8, 0x00, 0x00, 0x00, 0x00,
                            0x90, 0x90, 0x90, 0x90, 0x90, 0xc3};
  auto last = check(f, 0);
  ASSERT_TRUE(last.ok) << last.reason;
  EXPECT_TRUE(last.region.insns[1].is_call);
  EXPECT_EQ(last.region.insns[1].target, kBase + 7);
  // 0: call *%rax (2)  2: mov rax,rdi (3)  5: ret: the region must go on past the call
  std::vector<okp::u8> g = {0xff, 0xd0, 0x48, 0x89, 0xf8, 0xc3};
  auto middle = check(g, 0);
  ASSERT_FALSE(middle.ok);
  EXPECT_NE(middle.reason.find("'call' at +0x0 is in the middle of the region (a call must be"),
            std::string::npos) << middle.reason;
}

TEST(DetourRegion, FlowEndInTheMiddleIsRefused) {
  // 0: ret  1: nop x4  5: ret  -- a region starting at a ret would run what follows it
  std::vector<okp::u8> f = {0xc3, 0x90, 0x90, 0x90, 0x90, 0xc3};
  auto c = check(f, 0);
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.reason.find("'ret' at +0x0 is in the middle of the region (the flow ends"),
            std::string::npos)
      << c.reason;
}

TEST(DetourRegion, Int3AndRel8OnlyBranchesCannotMove) {
  std::vector<okp::u8> pad = {0x48, 0x89, 0xf8, 0xcc, 0xcc, 0xcc, 0xc3};
  auto c = check(pad, 0);
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.reason.find("int3"), std::string::npos) << c.reason;
  // 0: loop -2 (itself)  2: nop x4  6: ret
  std::vector<okp::u8> loop = {0xe2, 0xfe, 0x90, 0x90, 0x90, 0x90, 0xc3};
  auto l = check(loop, 0);
  ASSERT_FALSE(l.ok);
  EXPECT_NE(l.reason.find("rel8-only"), std::string::npos) << l.reason;
}

TEST(DetourRegion, RipRelativeOperandsAreMarkedForRelocation) {
  // 0: mov rax,[rip+0x10]  7: ret
  std::vector<okp::u8> f = {0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00, 0xc3};
  auto c = check(f, 0);
  ASSERT_TRUE(c.ok) << c.reason;
  EXPECT_TRUE(c.region.insns[0].rip_relative);
}

TEST(DetourRegion, TailCallThroughARegisterIsAccepted) {
  // 0: push rbx  1: mov rax,rdi (3)  4: mov rbx,rsi (3)  7: pop rbx  8: jmp *rax
  std::vector<okp::u8> f = {0x53, 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf3, 0x5b, 0xff, 0xe0};
  auto c = check(f, 1);
  EXPECT_TRUE(c.ok) << c.reason;
}

TEST(DetourRegion, IndirectJumpWithAFrameLeftIsNotATailCall) {
  // 0: push rbx  1: mov rax,rdi  4: mov rbx,rsi  7: jmp *rax (rbx still pushed)
  std::vector<okp::u8> f = {0x53, 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf3, 0xff, 0xe0};
  auto c = check(f, 1);
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.reason.find("indirect jump at +0x7 is not a tail call (8 bytes on the stack)"),
            std::string::npos) << c.reason;
}

// A retpoline kernel keeps `jmp __x86_indirect_thunk_rax` in its live text: an indirect jump
// through rax, which must be a proved tail call like `jmp *%rax`.
TEST(DetourRegion, AJumpToARetpolineThunkIsAnIndirectJump) {
  constexpr okp_addr_t kThunks = kBase + 0x1000;  // __x86_indirect_thunk_array, 512 bytes
  const okp::x86::AddrRange thunks[] = {{kThunks, kThunks + 0x200}};
  auto rel = [](okp_addr_t from_next, okp_addr_t to) {
    const auto d = static_cast<okp::u32>(to - from_next);
    return std::vector<okp::u8>{okp::u8(d), okp::u8(d >> 8), okp::u8(d >> 16), okp::u8(d >> 24)};
  };
  auto with_jump = [&](std::vector<okp::u8> f, okp_addr_t to) {
    f.push_back(0xe9);
    auto d = rel(kBase + f.size() + 4, to);
    f.insert(f.end(), d.begin(), d.end());
    return f;
  };
  auto run = [&](const std::vector<okp::u8>& f, size_t at, bool with_thunks) {
    FunctionText fn{kBase, f.data(), f.size(), with_thunks ? thunks : nullptr, with_thunks ? 1u : 0u};
    return okp::x86::check_detour_region(fn, kBase + at, nullptr, 0);
  };
  // 0: push rbx  1: mov rax,rdi  4: mov rbx,rsi  7: jmp __x86_indirect_thunk_rax (rbx pushed)
  auto framed = with_jump({0x53, 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf3}, kThunks);
  auto refused = run(framed, 1, true);
  ASSERT_TRUE(refused.is_error());
  EXPECT_NE(std::string(refused.error().reason()).find("indirect jump at +0x7 is not a tail call (8 bytes"),
            std::string::npos) << refused.error().reason();
  // Without knowing the thunks, the same bytes are a direct jump out of the function.
  EXPECT_FALSE(run(framed, 1, false).is_error());
  // The same jump elsewhere than a thunk is a plain tail call to another function.
  EXPECT_FALSE(run(with_jump({0x53, 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf3}, kThunks + 0x200), 1, true).is_error());
  // 0: push rbx  1: mov rax,rdi  4: pop rbx  5: jmp __x86_indirect_thunk_rax: a tail call, and
  // in a region it stays a relative branch, re-encoded for the detour.
  auto tail = with_jump({0x53, 0x48, 0x89, 0xf8, 0x5b}, kThunks);
  auto ok = run(tail, 1, true);
  ASSERT_FALSE(ok.is_error()) << ok.error().reason();
  const auto& region = ok.value();
  ASSERT_EQ(region.count, 3);
  EXPECT_TRUE(region.insns[2].relative_branch);
  EXPECT_EQ(region.insns[2].target, kThunks);
}

TEST(DetourRegion, JumpTableIsRefusedAsUnbounded) {
  // 0: sub rsp,0x20  4: mov rax,rdi  7: jmp *0x0(,%rax,8)  e: add rsp,0x20  12: ret
  std::vector<okp::u8> f = {0x48, 0x83, 0xec, 0x20, 0x48, 0x89, 0xf8, 0xff, 0x24, 0xc5,
                            0x00, 0x00, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x20, 0xc3};
  auto c = check(f, 14);  // a region away from the jump: the jump may still target it
  ASSERT_FALSE(c.ok);
  // Its table (at 0, unmapped) cannot be read: refused before any entry can be checked
  // (x86_jump_table_test.cpp has the tables that can).
  EXPECT_NE(c.reason.find("indirect jump at +0x7: cannot read its jump table at 0"),
            std::string::npos) << c.reason;
}

TEST(DetourRegion, FramePointerEpiloguesRestoreTheDepth) {
  // 0: push rbp  1: mov rbp,rsp  4: sub rsp,0x10  8: mov rax,rdi  b: leave  c: jmp *rax
  std::vector<okp::u8> leave = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10,
                                0x48, 0x89, 0xf8, 0xc9, 0xff, 0xe0};
  auto c = check(leave, 4);
  EXPECT_TRUE(c.ok) << c.reason;
  // The same with the stack realigned (and rsp,-16): the depth is lost before the leave
  // restores it from rbp, so the tail call is still proved.
  std::vector<okp::u8> aligned = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xe4, 0xf0,
                                  0x48, 0x89, 0xf8, 0xc9, 0xff, 0xe0};
  auto a = check(aligned, 8);
  EXPECT_TRUE(a.ok) << a.reason;
  // Without a frame pointer the lost depth stays lost.
  std::vector<okp::u8> lost = {0x48, 0x83, 0xe4, 0xf0, 0x48, 0x89, 0xf8, 0x90, 0x90, 0xff, 0xe0};
  auto l = check(lost, 4);
  ASSERT_FALSE(l.ok);
  EXPECT_NE(l.reason.find("stack depth unknown"), std::string::npos) << l.reason;
}

TEST(DetourRegion, PathsThatDisagreeOnTheDepthMakeItUnknown) {
  // 0: test rdi,rdi  3: je +1 (-> 6)  5: push rbx  6: mov rax,rsi (3)  9: nop x2  b: jmp *rax
  std::vector<okp::u8> f = {0x48, 0x85, 0xff, 0x74, 0x01, 0x53, 0x48, 0x89,
                            0xf0, 0x90, 0x90, 0xff, 0xe0};
  auto c = check(f, 6);
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.reason.find("stack depth unknown"), std::string::npos) << c.reason;
}

TEST(DetourRegion, ExceptionTableEntriesRefuseOnlyWhenTheyTouchTheRegion) {
  // 0: mov rax,[rdi] (3)  3: mov rbx,[rsi] (3)  6: nop x5  b: ret
  std::vector<okp::u8> f = {0x48, 0x8b, 0x07, 0x48, 0x8b, 0x1e, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3};
  auto faulting = check(f, 0, {{kBase + 3, kBase + 11}});
  ASSERT_FALSE(faulting.ok);
  EXPECT_NE(faulting.reason.find("exception-table entry at +0x3"), std::string::npos)
      << faulting.reason;
  auto fixup_in = check(f, 6, {{kBase + 0, kBase + 8}});
  ASSERT_FALSE(fixup_in.ok);
  EXPECT_NE(fixup_in.reason.find("exception fixup of +0x0 lands in the region"), std::string::npos)
      << fixup_in.reason;
  auto elsewhere = check(f, 6, {{kBase + 0, kBase + 11}});
  EXPECT_TRUE(elsewhere.ok) << elsewhere.reason;
}

}  // namespace

// --- Code around the function --------------------------------------------------------------

namespace {
FunctionText text_at(okp_addr_t start, const std::vector<okp::u8>& bytes) {
  return {start, bytes.data(), bytes.size()};
}
}  // namespace

TEST(DetourRegion, AForeignBranchIntoTheRegionIsFoundAndOneToItsStartIsNot) {
  // Another symbol 0x40 before: xor eax,eax; jne rel32 -> kBase+0x3 (inside +0x1..+0x7)
  const okp_addr_t other = kBase - 0x40;
  const int32_t rel = static_cast<int32_t>(kBase + 3 - (other + 2 + 6));
  std::vector<okp::u8> bytes = {0x31, 0xc0, 0x0f, 0x85};
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<okp::u8>(rel >> (8 * i)));
  bytes.push_back(0xc3);
  auto hit = okp::x86::foreign_branch_into(text_at(other, bytes), kBase + 1, kBase + 7);
  ASSERT_FALSE(hit.is_error()) << hit.error().reason();
  EXPECT_EQ(hit.value(), other + 2);
  auto miss = okp::x86::foreign_branch_into(text_at(other, bytes), kBase + 3, kBase + 9);
  ASSERT_FALSE(miss.is_error());
  EXPECT_EQ(miss.value(), 0u) << "a branch to the region's first byte is the jump's own entry";
}

TEST(DetourRegion, FallingThroughIntoTheNextSymbolIsToldFromAnEndingOne) {
  // endbr64 alone (an assembly function whose body is an inner label): runs on.
  EXPECT_TRUE(okp::x86::runs_on_past_end(text_at(kBase, {0xf3, 0x0f, 0x1e, 0xfa})));
  EXPECT_TRUE(okp::x86::runs_on_past_end(text_at(kBase, {0x48, 0x89, 0xf8})));       // mov
  EXPECT_FALSE(okp::x86::runs_on_past_end(text_at(kBase, {0x48, 0x89, 0xf8, 0xc3})));  // ret
  EXPECT_FALSE(okp::x86::runs_on_past_end(text_at(kBase, {0xe9, 0, 0, 0, 0})));       // jmp
  // call then alignment padding: the call does not return here (or the padding would run).
  EXPECT_FALSE(okp::x86::runs_on_past_end(text_at(kBase, {0xe8, 0, 0, 0, 0, 0xcc, 0xcc})));
  // A last call right at the end (call __stack_chk_fail, panic): it does not return either.
  EXPECT_FALSE(okp::x86::runs_on_past_end(text_at(kBase, {0x48, 0x89, 0xf8, 0xe8, 0, 0, 0, 0})));
  // A static-call trampoline: jmp; ud1 %esp,%ecx.
  EXPECT_FALSE(okp::x86::runs_on_past_end(text_at(kBase, {0xe9, 0, 0, 0, 0, 0x0f, 0xb9, 0xcc})));
  // __pfx_ padding alone: nothing but nops.
  EXPECT_FALSE(okp::x86::runs_on_past_end(text_at(kBase, std::vector<okp::u8>(16, 0x90))));
}

TEST(DetourRegion, OutsideJumpTargetsAreTheColdPartCandidates) {
  // jne rel32 -> kBase+0x1000 (a .cold part); call rel32 (not a jump); je rel8 inside; ret
  std::vector<okp::u8> bytes = {0x0f, 0x85, 0xfa, 0x0f, 0x00, 0x00,  // -> +0x1000
                                0xe8, 0x00, 0x01, 0x00, 0x00,        // call
                                0x74, 0x00, 0xc3};
  okp_addr_t targets[4];
  ASSERT_EQ(okp::x86::outside_jump_targets(text_at(kBase, bytes), targets, 4), 1u);
  EXPECT_EQ(targets[0], kBase + 0x1000);
}

namespace {

// The checked size of a function, as plan_detour gives the check: its extent's code.
Check check_code(const std::vector<okp::u8>& bytes, size_t at) {
  FunctionText fn{kBase, bytes.data(), bytes.size()};
  fn.size = okp::x86::code_size(fn);
  auto r = okp::x86::check_detour_region(fn, kBase + at, nullptr, 0);
  if (r.is_error()) return {false, r.error().reason(), {}};
  return {true, "", r.value()};
}

}  // namespace

// A module section's last function: its extent runs over the loader's zero fill up to the
// next section's first symbol. Five zeros after `ret; int3` decode as two `add %al,(%rax)`
// and a byte that does not decode; okp_ot_jump_table on the test-debug kernel was refused for
// it ("the function does not decode at +0x7f").
TEST(DetourRegion, ZeroFillAfterTheLastInstructionIsNoCode) {
  std::vector<okp::u8> f = kSimple;  // ends in ret
  f.push_back(0xcc);                 // int3 (straight-line speculation)
  const size_t code = f.size();
  for (int i = 0; i < 5; ++i) f.push_back(0x00);
  FunctionText fn{kBase, f.data(), f.size()};
  EXPECT_EQ(okp::x86::code_size(fn), code);
  auto whole = check(f, 1);
  ASSERT_FALSE(whole.ok) << "the unfixed check must fail here for the test to mean anything";
  EXPECT_NE(whole.reason.find("does not decode"), std::string::npos) << whole.reason;
  auto trimmed = check_code(f, 1);
  EXPECT_TRUE(trimmed.ok) << trimmed.reason;
  // Nothing to cut: no zeros, or an even run (decodable) as well.
  FunctionText plain{kBase, kSimple.data(), kSimple.size()};
  EXPECT_EQ(okp::x86::code_size(plain), kSimple.size());
}

TEST(DetourRegion, ZerosAfterAnInstructionThatFallsThroughAreKept) {
  // mov rax,rdi; add rax,1 then zeros: the flow runs into them, so they are what runs next
  // (however odd) and the function stays whole: the check still refuses what it cannot decode.
  std::vector<okp::u8> f = {0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0x00, 0x00, 0x00};
  FunctionText fn{kBase, f.data(), f.size()};
  EXPECT_EQ(okp::x86::code_size(fn), f.size());
  EXPECT_FALSE(check_code(f, 0).ok);
}

TEST(DetourRegion, ZerosInsideTheLastInstructionAreNotCut) {
  // mov rax,rdi; add rax,1; jmp rel32 +0x1000 (e9 00 10 00 00), a tail call whose displacement
  // ends in zeros, then three zeros of fill: the cut is after the jmp, not inside it.
  std::vector<okp::u8> f = {0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0xe9, 0x00, 0x10, 0x00, 0x00,
                            0x00, 0x00, 0x00};
  FunctionText fn{kBase, f.data(), f.size()};
  EXPECT_EQ(okp::x86::code_size(fn), 12u);
  auto c = check_code(f, 0);
  EXPECT_TRUE(c.ok) << c.reason;
}
