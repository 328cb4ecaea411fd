// SPDX-License-Identifier: GPL-2.0
// The jump optimizer (core/optimizer/jump_optimizer.cpp) over the fake kernel of host_seam.cpp: a probe is
// queued when armed, the batch plans its detour, waits (unlocked) and patches the jump in two
// stages; the detour's layout; hits through the detour and through the breakpoint while a
// detour exists; unoptimizing by the sysctl; refusals with their reasons.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include <okprobes/okprobes.h>

#include "arch/x86/detour.h"
#include "core/registry.h"
#include "host_seam.h"

namespace {

using okp_host::fake_function;
using okp_host::seam_counters;

okp_addr_t g_seen_ip = 0;
unsigned long g_seen_di = 0;
int g_pre_hits = 0;
int record(okp_kprobe*, pt_regs* regs) {
  auto* r = reinterpret_cast<okp_regs*>(regs);
  g_seen_ip = r->ip;
  g_seen_di = r->di;
  ++g_pre_hits;
  return 0;
}
void post(okp_kprobe*, pt_regs*, unsigned long) {}

int32_t rel32_at(okp_addr_t at) {
  int32_t v;
  std::memcpy(&v, reinterpret_cast<const void*>(at), sizeof(v));
  return v;
}
uint8_t byte_at(okp_addr_t at) { return *reinterpret_cast<const uint8_t*>(at); }

class Optimizer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(okp_core_init(), 0); }
  void SetUp() override {
    ASSERT_TRUE(okp_host::fake_text_pristine());
    auto& c = seam_counters();
    c.waits_under_lock = c.unlocked_asserts = c.patches_without_lock = 0;
    c.pokes_without_text_lock = c.text_syncs = c.deferred_optimizations = 0;
    c.rcu_waits = c.tasks_waits = 0;
    c.tasks_outside = false;  // the look at the stacks proves nothing: tasks-RCU, as before
    c.tasks_outside_asks = c.tasks_outside_before_rcu = 0;
    g_pre_hits = 0;
  }
  void TearDown() override {
    ASSERT_EQ(okp_core_set_optimization(1), 0);
    auto& c = seam_counters();
    EXPECT_EQ(c.waits_under_lock, 0) << "a grace period was waited for under the registry lock";
    EXPECT_EQ(c.unlocked_asserts, 0);
    EXPECT_EQ(c.patches_without_lock, 0);
    EXPECT_EQ(c.pokes_without_text_lock, 0) << "a batch wrote text without text_mutex";
    EXPECT_FALSE(c.text_lock_held);
    EXPECT_TRUE(okp_host::fake_text_pristine()) << "the text was not restored";
  }
  static okp_kprobe probe(const char* sym, unsigned int off, okp_kprobe_post_handler_t p = nullptr) {
    okp_kprobe kp = {};
    kp.symbol_name = sym;
    kp.offset = off;
    kp.pre_handler = record;
    kp.post_handler = p;
    return kp;
  }
  // The detour the jump at addr leads to: its buffer (the jump targets the call at +8).
  static okp_addr_t detour_of(okp_addr_t addr) {
    return addr + 5 + static_cast<okp_addr_t>(static_cast<int64_t>(rel32_at(addr + 1))) -
           okp::x86::kDetourCallOffset;
  }
};

// fake_add_one: mov %rdi,%rax (3); add $1,%rax (4); ret.
TEST_F(Optimizer, QueuesOnArmThenPatchesTheJumpAfterTheWaits) {
  okp_kprobe kp = probe("fake_add_one", 0);
  const okp_addr_t at = fake_function("fake_add_one");
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  EXPECT_EQ(byte_at(at), 0xcc) << "armed with a breakpoint at once";
  EXPECT_GE(seam_counters().deferred_optimizations, 1);
  EXPECT_FALSE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED);

  okp_core_run_optimizer();
  ASSERT_TRUE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED) << kp.okp_reason;
  EXPECT_STREQ(kp.okp_reason, "");
  EXPECT_GE(seam_counters().rcu_waits, 1);
  EXPECT_GE(seam_counters().tasks_waits, 1) << "no task may be inside the region";
  EXPECT_EQ(seam_counters().text_syncs, 2) << "one sync per stage";
  ASSERT_EQ(byte_at(at), 0xe9);
  const okp_addr_t detour = detour_of(at);
  okp_addr_t owner;
  std::memcpy(&owner, reinterpret_cast<const void*>(detour), sizeof(owner));
  EXPECT_EQ(owner, at) << "the detour names its probe by address";
  EXPECT_EQ(byte_at(detour + okp::x86::kDetourCallOffset), 0xe8) << "call okp_detour_entry";
  EXPECT_FALSE(okp::x86::detour_has_post(detour + okp::x86::kDetourCopyOffset));
  const okp_addr_t copy = detour + okp::x86::kDetourCopyOffset;
  const uint8_t region[] = {0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01};
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(copy), region, sizeof(region)), 0);
  EXPECT_EQ(byte_at(copy + 7), 0xe9);
  EXPECT_EQ(copy + 12 + static_cast<okp_addr_t>(static_cast<int64_t>(rel32_at(copy + 8))), at + 7)
      << "the copy jumps back after the region";

  // A hit through the detour: handlers see the breakpoint convention, then the copy runs.
  okp_regs regs = {};
  regs.di = 41;
  okp_cpu_state cpu = {};
  EXPECT_EQ(okp_core_on_detour(copy, &regs, &cpu), 0) << "on to the copy, the entry's return address";
  EXPECT_EQ(g_pre_hits, 1);
  EXPECT_EQ(g_seen_ip, at + 1);
  EXPECT_EQ(g_seen_di, 41u);
  EXPECT_EQ(kp.nhit, 1u);
  EXPECT_EQ(cpu.depth, 0u);

  // The same hit as okp_detour_entry takes it on an idle CPU: it reads the untagged site word
  // before the call (detour_layout.h) and gives it to okp_core_on_detour_idle.
  okp_addr_t site_word;
  std::memcpy(&site_word, reinterpret_cast<const void*>(copy + OKP_DETOUR_SITE_FROM_COPY),
              sizeof(site_word));
  EXPECT_EQ(site_word & OKP_DETOUR_HAS_POST, 0u) << "no post entry: the entry's common hit";
  EXPECT_EQ(site_word, okp::x86::detour_site(copy));
  regs = {};
  regs.di = 43;
  EXPECT_EQ(okp_core_on_detour_idle(site_word, &regs), 0) << "on to the copy";
  EXPECT_EQ(g_pre_hits, 2);
  EXPECT_EQ(g_seen_ip, at + 1) << "handlers see the breakpoint convention";
  EXPECT_EQ(g_seen_di, 43u);
  EXPECT_EQ(kp.nhit, 2u);
  // Disabled (the flag alone, as a hit in flight sees a disable that has not yet taken the jump
  // out): skipped and counted as a miss, as on every other path.
  kp.flags |= OKP_KPROBE_FLAG_DISABLED;
  EXPECT_EQ(okp_core_on_detour_idle(site_word, &regs), 0);
  EXPECT_EQ(g_pre_hits, 2);
  EXPECT_EQ(kp.nhit, 2u);
  EXPECT_EQ(kp.nmissed, 1u);
  kp.flags &= ~OKP_KPROBE_FLAG_DISABLED;

  okp_core_unregister_kprobe(&kp);
  // A task on its way through the detour after the unregister runs no handler, resumes in the copy.
  regs.ip = 0;
  EXPECT_EQ(okp_core_on_detour(copy, &regs, &cpu), 0);
  EXPECT_EQ(okp_core_on_detour_idle(site_word, &regs), 0);
  EXPECT_EQ(g_pre_hits, 2);
  okp_core_collect_slots();
}

// A batch whose region has an inside looks at every task's stack once, after the RCU grace
// period (before it a CPU could still be on its way into the inside); when that proves no task
// is there, the jump is written without the tasks-RCU wait. Not proven: the wait, as above.
TEST_F(Optimizer, ProofThatNoTaskIsInsideTheRegionReplacesTheTasksRcuWait) {
  seam_counters().tasks_outside = true;
  okp_kprobe kp = probe("fake_add_one", 0);
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED) << kp.okp_reason;
  auto& c = seam_counters();
  EXPECT_EQ(c.tasks_outside_asks, 1);
  EXPECT_EQ(c.tasks_outside_before_rcu, 0) << "asked before the RCU grace period";
  EXPECT_EQ(c.rcu_waits, 1);
  EXPECT_EQ(c.tasks_waits, 0) << "proven: no tasks-RCU wait";
  ASSERT_EQ(c.last_spans.size(), 1u);
  EXPECT_EQ(c.last_spans[0].start, fake_function("fake_add_one"));
  EXPECT_EQ(c.last_spans[0].length, 7u) << "mov (3) + add (4): the region under the jump";
  okp_core_unregister_kprobe(&kp);

  c.tasks_outside = false;
  okp_kprobe again = probe("fake_add_one", 0);
  ASSERT_EQ(okp_core_register_kprobe(&again), 0) << again.okp_reason;
  c.rcu_waits = c.tasks_waits = c.tasks_outside_asks = 0;
  okp_core_run_optimizer();
  EXPECT_TRUE(again.flags & OKP_KPROBE_FLAG_OPTIMIZED) << again.okp_reason;
  EXPECT_EQ(c.tasks_outside_asks, 1);
  EXPECT_EQ(c.tasks_waits, 1) << "not proven: tasks-RCU";
  okp_core_unregister_kprobe(&again);
  okp_core_collect_slots();
}

// A probe's reason keeps the breakpoint's verdict when the optimizer adds its own later: why
// the site is not a jump, then why its breakpoint is not boosted (KUnit's instruction classes
// once saw the optimizer's verdict replace the breakpoint's when its 20 ms delay ran first).
TEST_F(Optimizer, TheReasonSaysWhyNotAJumpAndWhyTheBreakpointIsNotBoosted) {
  const char* const boost = "not boosted: a post_handler needs the trap after the instruction";
  okp_kprobe kp = probe("fake_mul", 4, post);  // imul %rsi,%rdi: run from a slot
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  EXPECT_STREQ(kp.okp_reason, boost) << "queued: nothing said about the jump yet";
  ASSERT_EQ(okp_core_set_optimization(0), 0);
  EXPECT_EQ(std::string(kp.okp_reason),
            std::string("not optimized: optimization off (debug.okprobes-optimization=0); ") + boost);
  okp_kprobe second = probe("fake_mul", 4, post);  // joins the site while optimization is off
  ASSERT_EQ(okp_core_register_kprobe(&second), 0) << second.okp_reason;
  EXPECT_STREQ(second.okp_reason, kp.okp_reason);
  ASSERT_EQ(okp_core_set_optimization(1), 0);
  okp_core_run_optimizer();
  EXPECT_TRUE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED) << kp.okp_reason;
  EXPECT_STREQ(kp.okp_reason, "") << "a jump: its breakpoint no longer matters";
  okp_core_unregister_kprobe(&second);
  okp_core_unregister_kprobe(&kp);
  okp_core_collect_slots();
}

// A region of one instruction has no boundary inside it where a task could stop, so its batch
// patches without the grace periods; a batch holding any longer region still waits.
TEST_F(Optimizer, ARegionOfOneInstructionIsPatchedWithoutWaiting) {
  okp_kprobe one = probe("fake_answer", 0);
  ASSERT_EQ(okp_core_register_kprobe(&one), 0) << one.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(one.flags & OKP_KPROBE_FLAG_OPTIMIZED) << one.okp_reason;
  EXPECT_EQ(seam_counters().rcu_waits, 0);
  EXPECT_EQ(seam_counters().tasks_waits, 0);
  EXPECT_EQ(seam_counters().tasks_outside_asks, 0) << "nothing to look for";
  EXPECT_EQ(seam_counters().text_syncs, 2);
  const okp_addr_t at = fake_function("fake_answer");
  ASSERT_EQ(byte_at(at), 0xe9);
  const okp_addr_t copy = detour_of(at) + okp::x86::kDetourCopyOffset;
  const uint8_t region[] = {0xb8, 0x2a, 0x00, 0x00, 0x00};
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(copy), region, sizeof(region)), 0);
  EXPECT_EQ(copy + 10 + static_cast<okp_addr_t>(static_cast<int64_t>(rel32_at(copy + 6))), at + 5)
      << "the copy jumps back after the one instruction";
  okp_core_unregister_kprobe(&one);

  okp_kprobe again = probe("fake_answer", 0), two = probe("fake_add_one", 0);
  ASSERT_EQ(okp_core_register_kprobe(&again), 0) << again.okp_reason;
  ASSERT_EQ(okp_core_register_kprobe(&two), 0) << two.okp_reason;
  seam_counters().rcu_waits = seam_counters().tasks_waits = 0;
  okp_core_run_optimizer();
  EXPECT_TRUE(again.flags & OKP_KPROBE_FLAG_OPTIMIZED) << again.okp_reason;
  EXPECT_TRUE(two.flags & OKP_KPROBE_FLAG_OPTIMIZED) << two.okp_reason;
  EXPECT_GE(seam_counters().rcu_waits, 1) << "mov + add: a task may stop before the add";
  EXPECT_GE(seam_counters().tasks_waits, 1);
  okp_core_unregister_kprobe(&again);
  okp_core_unregister_kprobe(&two);
  okp_core_collect_slots();
}

// A detour's buffer is taken at the largest size a plan may need and trimmed to the plan once
// written: the cells past it are free for other detours at once, and the detour's own go back
// (after the wait) when it does.
TEST_F(Optimizer, AWrittenDetourKeepsOnlyTheCellsItsPlanFills) {
  auto slots_in_use = [] {
    okp::RegistryGuard guard;
    return okp::registry().slots(guard).in_use();
  };
  okp_core_collect_slots();
  const auto before = slots_in_use();
  okp_kprobe one = probe("fake_answer", 0);
  ASSERT_EQ(okp_core_register_kprobe(&one), 0) << one.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(one.flags & OKP_KPROBE_FLAG_OPTIMIZED) << one.okp_reason;
  // The detour: its header and call, the 5-byte mov, the 5-byte jmp back.
  const okp::usize planned = okp::x86::kDetourCopyOffset + 10;
  const okp::usize cells = (planned + okp::arch::kSlotSize - 1) / okp::arch::kSlotSize;
  ASSERT_LT(cells, okp::x86::kMaxDetourSize / okp::arch::kSlotSize) << "nothing to trim";
  EXPECT_EQ(slots_in_use() - before, cells) << "the cells past the plan went back";
  // Its neighbour's detour may start right after it: both still work.
  okp_kprobe two = probe("fake_add_one", 0);
  ASSERT_EQ(okp_core_register_kprobe(&two), 0) << two.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(two.flags & OKP_KPROBE_FLAG_OPTIMIZED) << two.okp_reason;
  const okp_addr_t copy_one = detour_of(fake_function("fake_answer")) + okp::x86::kDetourCopyOffset;
  const uint8_t region[] = {0xb8, 0x2a, 0x00, 0x00, 0x00};
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(copy_one), region, sizeof(region)), 0)
      << "the second detour did not overwrite the first";
  okp_regs regs = {};
  okp_cpu_state cpu = {};
  EXPECT_EQ(okp_core_on_detour(copy_one, &regs, &cpu), 0);
  EXPECT_EQ(one.nhit, 1u);
  okp_core_unregister_kprobe(&one);
  okp_core_unregister_kprobe(&two);
  okp_core_collect_slots();
  EXPECT_EQ(slots_in_use(), before) << "every cell of both detours went back";
}

TEST_F(Optimizer, TheSysctlTakesProbesBackToTheBreakpointAndAgain) {
  okp_kprobe kp = probe("fake_add_one", 0);
  const okp_addr_t at = fake_function("fake_add_one");
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED) << kp.okp_reason;
  const okp_addr_t copy = detour_of(at) + okp::x86::kDetourCopyOffset;

  ASSERT_EQ(okp_core_set_optimization(0), 0);
  EXPECT_FALSE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED);
  EXPECT_NE(std::strstr(kp.okp_reason, "optimization off"), nullptr) << kp.okp_reason;
  const uint8_t armed[] = {0xcc, 0x89, 0xf8, 0x48, 0x83};
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(at), armed, sizeof(armed)), 0)
      << "back to the breakpoint over the original bytes";
  // A breakpoint hit resumes in the detour's copy: nothing steps into the region.
  okp_regs regs = {};
  okp_cpu_state cpu = {};
  regs.ip = at + 1;
  EXPECT_EQ(okp_core_on_breakpoint(&regs, &cpu), 1);
  EXPECT_EQ(regs.ip, copy);
  EXPECT_EQ(g_pre_hits, 1);

  ASSERT_EQ(okp_core_set_optimization(1), 0);
  okp_core_run_optimizer();
  EXPECT_TRUE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED) << kp.okp_reason;
  EXPECT_EQ(detour_of(at) + okp::x86::kDetourCopyOffset, copy) << "the same detour again";
  okp_core_unregister_kprobe(&kp);
  okp_core_collect_slots();
}

TEST_F(Optimizer, DisableTakesTheJumpOutAndEnableBringsItBack) {
  okp_kprobe kp = probe("fake_add_one", 0);
  const okp_addr_t at = fake_function("fake_add_one");
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED);
  ASSERT_EQ(okp_core_set_kprobe_disabled(&kp, 1), 0);
  EXPECT_FALSE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED);
  EXPECT_EQ(byte_at(at), 0x48) << "disabled: the original text";
  ASSERT_EQ(okp_core_set_kprobe_disabled(&kp, 0), 0);
  EXPECT_EQ(byte_at(at), 0xcc);
  okp_core_run_optimizer();
  EXPECT_TRUE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED) << kp.okp_reason;
  okp_core_unregister_kprobe(&kp);
  okp_core_collect_slots();
}

// The common hit's answer (okp_core_on_detour_idle): a site's one probe has its pre handler
// tail-called, whose own return is the answer (non-zero: go on at regs->ip); any other list
// runs the loop, in registration order, stopping at the first handler that redirects.
int g_order[4];
int g_calls = 0;
int first_records(okp_kprobe*, pt_regs*) {
  g_order[g_calls++ & 3] = 1;
  return 0;
}
int second_redirects(okp_kprobe*, pt_regs* regs) {
  g_order[g_calls++ & 3] = 2;
  reinterpret_cast<okp_regs*>(regs)->ip = 0x1234;
  return 7;
}

TEST_F(Optimizer, TheCommonHitTailCallsAOneProbeSiteAndLoopsOverMore) {
  okp_kprobe one = probe("fake_add_one", 0);
  one.pre_handler = second_redirects;
  const okp_addr_t at = fake_function("fake_add_one");
  ASSERT_EQ(okp_core_register_kprobe(&one), 0) << one.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(one.flags & OKP_KPROBE_FLAG_OPTIMIZED) << one.okp_reason;
  const okp_addr_t copy = detour_of(at) + okp::x86::kDetourCopyOffset;
  const okp_addr_t site = okp::x86::detour_site(copy);
  okp_regs regs = {};
  g_calls = 0;
  EXPECT_EQ(okp_core_on_detour_idle(site, &regs), 7) << "the one handler's own answer";
  EXPECT_EQ(g_calls, 1);
  EXPECT_EQ(regs.ip, 0x1234u) << "where it sent execution";
  EXPECT_EQ(one.nhit, 1u);

  // No pre handler: counted as a hit, on to the copy; the ip is the breakpoint convention's.
  one.pre_handler = nullptr;
  EXPECT_EQ(okp_core_on_detour_idle(site, &regs), 0);
  EXPECT_EQ(regs.ip, at + 1);
  EXPECT_EQ(one.nhit, 2u);
  EXPECT_EQ(g_calls, 1);
  // Disabled: a miss, no call.
  one.pre_handler = second_redirects;
  one.flags |= OKP_KPROBE_FLAG_DISABLED;
  EXPECT_EQ(okp_core_on_detour_idle(site, &regs), 0);
  EXPECT_EQ(g_calls, 1);
  EXPECT_EQ(one.nhit, 2u);
  EXPECT_EQ(one.nmissed, 1u);
  one.flags &= ~OKP_KPROBE_FLAG_DISABLED;
  okp_core_unregister_kprobe(&one);
  okp_core_collect_slots();

  // Two probes on the site: both run in registration order, the second's redirect answered.
  okp_kprobe first = probe("fake_add_one", 0);
  first.pre_handler = first_records;
  okp_kprobe second = probe("fake_add_one", 0);
  second.pre_handler = second_redirects;
  ASSERT_EQ(okp_core_register_kprobe(&first), 0) << first.okp_reason;
  ASSERT_EQ(okp_core_register_kprobe(&second), 0) << second.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(first.flags & OKP_KPROBE_FLAG_OPTIMIZED) << first.okp_reason;
  const okp_addr_t site2 = okp::x86::detour_site(detour_of(at) + okp::x86::kDetourCopyOffset);
  regs = {};
  g_calls = 0;
  EXPECT_NE(okp_core_on_detour_idle(site2, &regs), 0) << "the second redirected";
  ASSERT_EQ(g_calls, 2);
  EXPECT_EQ(g_order[0], 1);
  EXPECT_EQ(g_order[1], 2);
  EXPECT_EQ(first.nhit, 1u);
  EXPECT_EQ(second.nhit, 1u);
  // The first disabled: the loop skips it (a miss) and still reaches the second.
  first.flags |= OKP_KPROBE_FLAG_DISABLED;
  g_calls = 0;
  EXPECT_NE(okp_core_on_detour_idle(site2, &regs), 0);
  EXPECT_EQ(g_calls, 1);
  EXPECT_EQ(g_order[0], 2);
  EXPECT_EQ(first.nmissed, 1u);
  EXPECT_EQ(second.nhit, 2u);
  first.flags &= ~OKP_KPROBE_FLAG_DISABLED;
  // The second gone: the first is the one probe again, tail-called.
  okp_core_unregister_kprobe(&second);
  g_calls = 0;
  EXPECT_EQ(okp_core_on_detour_idle(site2, &regs), 0);
  EXPECT_EQ(g_calls, 1);
  EXPECT_EQ(g_order[0], 1);
  EXPECT_EQ(first.nhit, 2u);
  okp_core_unregister_kprobe(&first);
  okp_core_collect_slots();
}

int g_post_hits = 0;
okp_addr_t g_post_ip = 0;
unsigned long g_post_ax = 0;
void count_post(okp_kprobe*, pt_regs* regs, unsigned long) {
  ++g_post_hits;
  g_post_ip = reinterpret_cast<okp_regs*>(regs)->ip;
  g_post_ax = reinterpret_cast<okp_regs*>(regs)->ax;
}

// fake_add_one: mov %rdi,%rax (3); add $1,%rax (4); ret. A post_handler runs from the detour
// after the copy's first instruction, interrupts off in between, as for a single-step.
TEST_F(Optimizer, APostHandlerRunsFromTheDetourAfterTheFirstInstruction) {
  okp_kprobe kp = probe("fake_add_one", 0, count_post);
  const okp_addr_t at = fake_function("fake_add_one");
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED) << kp.okp_reason;
  const okp_addr_t copy = detour_of(at) + okp::x86::kDetourCopyOffset;
  ASSERT_TRUE(okp::x86::detour_has_post(copy));
  // The copy: mov %rdi,%rax, then call the post entry, then its data.
  EXPECT_EQ(byte_at(copy + 3), 0xe8);
  const okp_addr_t ret = copy + 3 + 5;
  okp_addr_t data[2];
  std::memcpy(data, reinterpret_cast<const void*>(ret), sizeof(data));
  EXPECT_EQ(data[0], at);
  EXPECT_EQ(data[1], at + 3) << "post handlers see the original next instruction";
  EXPECT_EQ(byte_at(ret + 16), 0x48) << "then add $1,%rax";

  g_post_hits = 0;
  okp_regs regs = {};
  regs.flags = 0x246;  // IF on
  regs.di = 9;
  okp_cpu_state cpu = {};
  EXPECT_NE(okp_core_on_detour(copy, &regs, &cpu), 0) << "a post handler's step goes on at regs->ip";
  EXPECT_EQ(g_pre_hits, 1);
  EXPECT_EQ(regs.ip, copy);
  EXPECT_EQ(regs.flags & 0x200, 0u) << "the first instruction runs with interrupts off";
  EXPECT_EQ(cpu.depth, 1u) << "the post entry closes the frame";
  regs.ax = 9;  // what mov %rdi,%rax left
  okp_core_on_detour_post(ret, &regs, &cpu);
  EXPECT_EQ(g_post_hits, 1);
  EXPECT_EQ(g_post_ip, at + 3);
  EXPECT_EQ(g_post_ax, 9u);
  EXPECT_EQ(regs.ip, ret + 16);
  EXPECT_EQ(regs.flags & 0x200, 0x200u) << "interrupts back as they were";
  EXPECT_EQ(cpu.depth, 0u);

  // The post_handler's probe goes: the site gets the plain detour, planned anew.
  okp_kprobe plain = probe("fake_add_one", 0);
  ASSERT_EQ(okp_core_register_kprobe(&plain), 0) << plain.okp_reason;
  okp_core_unregister_kprobe(&kp);
  okp_core_run_optimizer();
  ASSERT_TRUE(plain.flags & OKP_KPROBE_FLAG_OPTIMIZED) << plain.okp_reason;
  EXPECT_FALSE(okp::x86::detour_has_post(detour_of(at) + okp::x86::kDetourCopyOffset));
  okp_core_unregister_kprobe(&plain);
  okp_core_collect_slots();
}

TEST_F(Optimizer, APostHandlerAfterABranchKeepsTheBreakpointAndSaysWhy) {
  // fake_select+5: je +3 (2); mov %rsi,%rax (3): a post_handler after a branch.
  okp_kprobe kp = probe("fake_select", 5, post);
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  okp_core_run_optimizer();
  EXPECT_FALSE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED);
  EXPECT_NE(std::strstr(kp.okp_reason, "not optimized: a post_handler after a branch"), nullptr)
      << kp.okp_reason;
  okp_core_unregister_kprobe(&kp);
}

// fake_select: xor %eax,%eax (2); test %rdi,%rdi (3); je +3 (2); mov %rsi,%rax (3); ret.
TEST_F(Optimizer, ARegionPastTheFunctionEndIsRefusedWithItsReason) {
  okp_kprobe kp = probe("fake_select", 7);
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  okp_core_run_optimizer();
  EXPECT_FALSE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED);
  EXPECT_NE(std::strstr(kp.okp_reason, "not optimized: the region"), nullptr) << kp.okp_reason;
  EXPECT_NE(std::strstr(kp.okp_reason, "crosses the end of the function"), nullptr) << kp.okp_reason;
  okp_core_unregister_kprobe(&kp);
}

TEST_F(Optimizer, ANewProbeInsideARegionTakesItBackToItsBreakpoint) {
  okp_kprobe outer = probe("fake_select", 0), inner = probe("fake_select", 2);
  const okp_addr_t at = fake_function("fake_select");
  ASSERT_EQ(okp_core_register_kprobe(&outer), 0) << outer.okp_reason;
  okp_core_run_optimizer();
  ASSERT_TRUE(outer.flags & OKP_KPROBE_FLAG_OPTIMIZED) << outer.okp_reason;
  ASSERT_EQ(okp_core_register_kprobe(&inner), 0) << inner.okp_reason;
  EXPECT_FALSE(outer.flags & OKP_KPROBE_FLAG_OPTIMIZED);
  EXPECT_NE(std::strstr(outer.okp_reason, "inside the region"), nullptr) << outer.okp_reason;
  EXPECT_EQ(byte_at(at), 0xcc);
  EXPECT_EQ(byte_at(at + 2), 0xcc) << "the inner probe's own breakpoint";
  // The outer site's hits run its own instruction again (xor %eax,%eax: emulated in the
  // trap) and resume at the inner probe's breakpoint, so the inner one sees them.
  okp_regs regs = {};
  okp_cpu_state cpu = {};
  regs.ip = at + 1;
  regs.ax = 0x1234;
  EXPECT_EQ(okp_core_on_breakpoint(&regs, &cpu), 1);
  EXPECT_EQ(regs.ip, at + 2);
  EXPECT_EQ(regs.ax, 0u);
  cpu = {};
  // The inner probe goes: the outer one is queued again and gets its jump back.
  okp_core_unregister_kprobe(&inner);
  okp_core_run_optimizer();
  EXPECT_TRUE(outer.flags & OKP_KPROBE_FLAG_OPTIMIZED) << outer.okp_reason;
  EXPECT_EQ(byte_at(at), 0xe9);
  okp_core_unregister_kprobe(&outer);
  okp_core_collect_slots();
}

}  // namespace

// A kernel on which no jump may be written (riscv64 preempting kernel code): each site is
// refused up front with the kernel's reason, its breakpoint stays, and nothing is queued.
TEST_F(Optimizer, AKernelThatRefusesEveryJumpGivesItsReasonUpFront) {
  struct Restore {
    ~Restore() { seam_counters().jumps_refused = nullptr; }
  } restore;
  seam_counters().jumps_refused = "not optimized: this kernel preempts kernel code";
  okp_kprobe kp = probe("fake_add_one", 0);
  const okp_addr_t at = fake_function("fake_add_one");
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  okp_core_run_optimizer();
  EXPECT_FALSE(kp.flags & OKP_KPROBE_FLAG_OPTIMIZED);
  EXPECT_STREQ(kp.okp_reason, "not optimized: this kernel preempts kernel code");
  EXPECT_EQ(byte_at(at), 0xcc) << "the breakpoint stays";
  EXPECT_EQ(seam_counters().text_syncs, 0) << "no jump was planned or written";
  okp_core_unregister_kprobe(&kp);
}
