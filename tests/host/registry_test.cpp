// SPDX-License-Identifier: GPL-2.0
// The probe table, the blacklist and the hit path on the host, over the fake kernel of
// host_seam.cpp: registration and refusals, aggregates, the lock contract (no grace period
// waited for under the registry lock, every lock-demanding member reached with it held), and
// breakpoint hits driven through okp_core_on_breakpoint as the trap would.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <okprobes/okprobes.h>

#include "core/registry.h"
#include "host_seam.h"

namespace {

using okp_host::fake_function;
using okp_host::seam_counters;

struct Recorder {
  std::vector<std::string> calls;
  unsigned long seen_di = 0;
};
Recorder* g_rec = nullptr;

int pre_a(okp_kprobe*, pt_regs* regs) {
  g_rec->calls.push_back("pre_a");
  g_rec->seen_di = reinterpret_cast<okp_regs*>(regs)->di;
  return 0;
}
int pre_b(okp_kprobe*, pt_regs*) {
  g_rec->calls.push_back("pre_b");
  return 0;
}
void post_a(okp_kprobe*, pt_regs*, unsigned long) { g_rec->calls.push_back("post_a"); }

class Registry : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(okp_core_init(), 0); }
  void SetUp() override {
    g_rec = &rec_;
    ASSERT_TRUE(okp_host::fake_text_pristine());
    auto& c = seam_counters();
    c.rcu_waits = c.tasks_waits = c.waits_under_lock = c.unlocked_asserts = 0;
    c.patches = c.patches_without_lock = 0;
  }
  void TearDown() override {
    auto& c = seam_counters();
    EXPECT_EQ(c.waits_under_lock, 0) << "a grace period was waited for under the registry lock";
    EXPECT_EQ(c.unlocked_asserts, 0) << "a lock-demanding member ran without the lock";
    EXPECT_EQ(c.patches_without_lock, 0) << "text was patched without the registry lock";
    EXPECT_FALSE(c.lock_held);
    EXPECT_TRUE(okp_host::fake_text_pristine()) << "a breakpoint was left in the text";
  }
  static okp_kprobe probe(const char* sym, unsigned int off,
                          okp_kprobe_pre_handler_t pre = pre_a,
                          okp_kprobe_post_handler_t post = nullptr) {
    okp_kprobe kp = {};
    kp.symbol_name = sym;
    kp.offset = off;
    kp.pre_handler = pre;
    kp.post_handler = post;
    return kp;
  }
  // What the breakpoint trap does: ip after the int3, then the core.
  static int hit(okp_addr_t addr, okp_regs& regs, okp_cpu_state& cpu) {
    regs.ip = addr + 1;
    return okp_core_on_breakpoint(&regs, &cpu);
  }
  Recorder rec_;
};

TEST_F(Registry, ArmsABreakpointAndRestoresTheTextOnUnregister) {
  okp_kprobe kp = probe("fake_add_one", 3);
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  const okp_addr_t at = fake_function("fake_add_one") + 3;
  EXPECT_EQ(reinterpret_cast<okp_addr_t>(kp.addr), at);
  EXPECT_EQ(*reinterpret_cast<const uint8_t*>(at), 0xcc);
  okp_core_unregister_kprobe(&kp);
  EXPECT_EQ(*reinterpret_cast<const uint8_t*>(at), 0x48);
  EXPECT_EQ(kp.okp_core, nullptr);
}

TEST_F(Registry, EmulatedHitRunsTheHandlerAndTheInstruction) {
  okp_kprobe kp = probe("fake_add_one", 0);  // mov %rdi,%rax: emulated in the trap
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  okp_regs regs = {};
  regs.di = 41;
  okp_cpu_state cpu = {};
  EXPECT_EQ(hit(fake_function("fake_add_one"), regs, cpu), 1);
  EXPECT_EQ(rec_.calls, std::vector<std::string>{"pre_a"});
  EXPECT_EQ(rec_.seen_di, 41u);
  EXPECT_EQ(regs.ax, 41u) << "the probed mov must still run";
  EXPECT_EQ(regs.ip, fake_function("fake_add_one") + 3);
  EXPECT_EQ(kp.nhit, 1u);
  EXPECT_EQ(cpu.depth, 0u);
  okp_core_unregister_kprobe(&kp);
}

TEST_F(Registry, SteppedHitRunsThePostHandlerAtTheSlotsTrap) {
  okp_kprobe kp = probe("fake_mul", 4, pre_a, post_a);  // imul: copied to a slot
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  const okp_addr_t at = fake_function("fake_mul") + 4;
  okp_regs regs = {};
  okp_cpu_state cpu = {};
  ASSERT_EQ(hit(at, regs, cpu), 1);
  EXPECT_EQ(cpu.depth, 1u) << "stepping: the slot's trap comes back to us";
  const okp_addr_t slot = regs.ip;
  EXPECT_NE(slot, at + 1);
  const uint8_t imul[] = {0x48, 0x0f, 0xaf, 0xfe};
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(slot), imul, sizeof(imul)), 0)
      << "the slot holds the original imul, not the breakpoint over it";
  // The slot ran the imul; its own breakpoint follows it.
  regs.ip = slot + 4 + 1;
  ASSERT_EQ(okp_core_on_breakpoint(&regs, &cpu), 1);
  EXPECT_EQ(regs.ip, at + 4) << "resumes after the original instruction";
  EXPECT_EQ(rec_.calls, (std::vector<std::string>{"pre_a", "post_a"}));
  EXPECT_EQ(cpu.depth, 0u);
  okp_core_unregister_kprobe(&kp);
}

// okp_core_on_break_hook answers in a break hook's convention (arm64's): 0 taken, 1 ours but
// refused, and otherwise what the glue's not_ours says, called with the trap's regs.
// The glue's okp_seam_break_not_ours (tests/host/host_seam.cpp) records its regs in
// g_not_ours_regs and answers 7.

TEST_F(Registry, BreakHookConventionTakesStepsAndPassesOnWhatIsNotOurs) {
  okp_kprobe kp = probe("fake_mul", 4, pre_a, post_a);  // imul: copied to a slot
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  const okp_addr_t at = fake_function("fake_mul") + 4;
  okp_regs regs = {};
  okp_cpu_state cpu = {};
  g_not_ours_regs = nullptr;
  regs.ip = at + 1;
  ASSERT_EQ(okp_core_on_break_hook(&regs, &cpu), 0) << "taken: 0";
  EXPECT_EQ(cpu.depth, 1u);
  const okp_addr_t slot = regs.ip;
  regs.ip = slot + 4 + 1;  // the slot's own breakpoint
  ASSERT_EQ(okp_core_on_break_hook(&regs, &cpu), 0) << "the step exit: taken";
  EXPECT_EQ(regs.ip, at + 4);
  EXPECT_EQ(rec_.calls, (std::vector<std::string>{"pre_a", "post_a"}));
  EXPECT_EQ(cpu.depth, 0u);
  EXPECT_EQ(g_not_ours_regs, nullptr) << "not_ours runs only for a breakpoint that is not ours";
  // No site here, on an idle CPU and on a busy one: the glue's answer, for these regs.
  regs.ip = fake_function("fake_add_one") + 1;
  EXPECT_EQ(okp_core_on_break_hook(&regs, &cpu), 7);
  EXPECT_EQ(g_not_ours_regs, &regs);
  g_not_ours_regs = nullptr;
  cpu.depth = 1;  // a frame of someone's open (kind 0: no step of ours)
  EXPECT_EQ(okp_core_on_break_hook(&regs, &cpu), 7);
  EXPECT_EQ(g_not_ours_regs, &regs);
  EXPECT_EQ(cpu.depth, 1u);
  cpu.depth = 0;
  EXPECT_EQ(kp.nhit, 1u);
  okp_core_unregister_kprobe(&kp);
}

// okp_core_on_step_break_hook: the trap only a step's end raises. The idle hit's step ends
// there (post handlers, resume after the original, frame closed); a step trap with no step of
// ours open (no frame, or a frame that is not a step, or the wrong slot) is the glue's to
// answer, and leaves the frames as they were.
TEST_F(Registry, StepBreakHookEndsTheStepAndPassesOnWhatIsNoStep) {
  okp_kprobe kp = probe("fake_mul", 4, pre_a, post_a);  // imul: copied to a slot
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  const okp_addr_t at = fake_function("fake_mul") + 4;
  okp_regs regs = {};
  okp_cpu_state cpu = {};
  g_not_ours_regs = nullptr;
  regs.ip = at + 1;
  ASSERT_EQ(okp_core_on_break_hook(&regs, &cpu), 0) << "taken: 0";
  ASSERT_EQ(cpu.depth, 1u);
  const okp_addr_t slot = regs.ip;
  // Not this step's exit (the slot's first byte): passed on, the step stays open.
  regs.ip = slot + 1;
  EXPECT_EQ(okp_core_on_step_break_hook(&regs, &cpu), 7);
  EXPECT_EQ(g_not_ours_regs, &regs);
  EXPECT_EQ(cpu.depth, 1u);
  EXPECT_EQ(rec_.calls, (std::vector<std::string>{"pre_a"}));
  g_not_ours_regs = nullptr;
  regs.ip = slot + 4 + 1;  // the slot's own breakpoint
  ASSERT_EQ(okp_core_on_step_break_hook(&regs, &cpu), 0) << "the step exit: taken";
  EXPECT_EQ(regs.ip, at + 4);
  EXPECT_EQ(rec_.calls, (std::vector<std::string>{"pre_a", "post_a"}));
  EXPECT_EQ(cpu.depth, 0u);
  EXPECT_EQ(cpu.frames[0].kind, 0u);
  EXPECT_EQ(g_not_ours_regs, nullptr);
  // The same trap again, idle CPU: nobody's step.
  regs.ip = slot + 4 + 1;
  EXPECT_EQ(okp_core_on_step_break_hook(&regs, &cpu), 7);
  EXPECT_EQ(g_not_ours_regs, &regs);
  EXPECT_EQ(cpu.depth, 0u);
  // A frame open that is no step (kind 0).
  g_not_ours_regs = nullptr;
  cpu.depth = 1;
  EXPECT_EQ(okp_core_on_step_break_hook(&regs, &cpu), 7);
  EXPECT_EQ(g_not_ours_regs, &regs);
  EXPECT_EQ(cpu.depth, 1u);
  cpu.depth = 0;
  EXPECT_EQ(rec_.calls, (std::vector<std::string>{"pre_a", "post_a"}));
  EXPECT_EQ(kp.nhit, 1u);
  okp_core_unregister_kprobe(&kp);
}

TEST_F(Registry, AggregateRunsHandlersInRegistrationOrderAndSurvivesPartialUnregister) {
  okp_kprobe a = probe("fake_select", 0, pre_a), b = probe("fake_select", 0, pre_b);
  ASSERT_EQ(okp_core_register_kprobe(&a), 0) << a.okp_reason;
  ASSERT_EQ(okp_core_register_kprobe(&b), 0) << b.okp_reason;
  okp_regs regs = {};
  okp_cpu_state cpu = {};
  ASSERT_EQ(hit(fake_function("fake_select"), regs, cpu), 1);
  EXPECT_EQ(rec_.calls, (std::vector<std::string>{"pre_a", "pre_b"}));
  okp_core_unregister_kprobe(&a);
  EXPECT_EQ(*reinterpret_cast<const uint8_t*>(fake_function("fake_select")), 0xcc)
      << "b still holds the site";
  rec_.calls.clear();
  ASSERT_EQ(hit(fake_function("fake_select"), regs, cpu), 1);
  EXPECT_EQ(rec_.calls, std::vector<std::string>{"pre_b"});
  okp_core_unregister_kprobe(&b);
}

TEST_F(Registry, AHitInsideHandlingIsAReentryMiss) {
  okp_kprobe kp = probe("fake_add_one", 0);
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0);
  okp_regs regs = {};
  okp_cpu_state cpu = {};
  cpu.depth = 1;  // this CPU is already inside okprobes' handling
  cpu.frames[0].kind = 1;
  ASSERT_EQ(hit(fake_function("fake_add_one"), regs, cpu), 1);
  EXPECT_TRUE(rec_.calls.empty());
  EXPECT_EQ(kp.nmissed_by[OKP_MISS_REENTRY], 1u);
  EXPECT_EQ(regs.ip, fake_function("fake_add_one") + 3) << "the instruction still runs";
  okp_core_unregister_kprobe(&kp);
}

TEST_F(Registry, RefusalsCarryErrnoAndReason) {
  okp_kprobe mid = probe("fake_add_one", 1);
  EXPECT_EQ(okp_core_register_kprobe(&mid), -84);  // -EILSEQ: inside mov
  EXPECT_NE(std::string(mid.okp_reason), "");
  okp_kprobe unknown = probe("no_such_fake", 0);
  EXPECT_EQ(okp_core_register_kprobe(&unknown), -2);
  EXPECT_NE(std::string(unknown.okp_reason).find("no_such_fake"), std::string::npos);
  EXPECT_EQ(okp_core_register_kprobe(nullptr), -22);

  const okp_addr_t f = fake_function("fake_forbidden");
  ASSERT_EQ(okp_core_blacklist_add(f, f + 3, "fake_forbidden", "trap path", nullptr), 0);
  okp_kprobe bl = probe("fake_forbidden", 1);
  EXPECT_EQ(okp_core_register_kprobe(&bl), -22);
  EXPECT_NE(std::string(bl.okp_reason).find("blacklisted: fake_forbidden [trap path]"),
            std::string::npos) << bl.okp_reason;

  okp_kprobe twice = probe("fake_add_one", 0);
  ASSERT_EQ(okp_core_register_kprobe(&twice), 0);
  EXPECT_EQ(okp_core_register_kprobe(&twice), -17);  // -EEXIST
  okp_core_unregister_kprobe(&twice);
}

TEST_F(Registry, BatchUnregisterWaitsOneGracePeriodOutsideTheLock) {
  okp_kprobe kps[3] = {probe("fake_add_one", 0), probe("fake_mul", 0), probe("fake_select", 0)};
  okp_kprobe* list[4] = {&kps[0], &kps[1], &kps[2], &kps[1]};  // a repeat is harmless
  for (auto& kp : kps) ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  const long before = seam_counters().rcu_waits;
  okp_core_unregister_kprobes(list, 4);
  EXPECT_EQ(seam_counters().rcu_waits - before, 1);
  for (auto& kp : kps) EXPECT_EQ(kp.okp_core, nullptr);
}

TEST_F(Registry, BoostedSlotsAreCollectedByTheWorkerAfterTasksRcu) {
  okp_kprobe kp = probe("fake_mul", 4);  // imul, no post_handler: boosted
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  okp_regs regs = {};
  okp_cpu_state cpu = {};
  ASSERT_EQ(hit(fake_function("fake_mul") + 4, regs, cpu), 1);
  EXPECT_EQ(cpu.depth, 0u) << "boosted: no second trap";
  const long deferred = seam_counters().deferred_collections;
  const long tasks = seam_counters().tasks_waits;
  okp_core_unregister_kprobe(&kp);
  EXPECT_EQ(seam_counters().deferred_collections - deferred, 1) << "the boosted slot waits";
  EXPECT_EQ(seam_counters().tasks_waits, tasks) << "unregister itself never waits for tasks";
  okp_core_collect_slots();  // what the worker runs
  EXPECT_EQ(seam_counters().tasks_waits - tasks, 1);
}

TEST_F(Registry, DisabledProbeDisarmsAndReenableRearms) {
  okp_kprobe kp = probe("fake_add_one", 0);
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0);
  const auto* at = reinterpret_cast<const uint8_t*>(fake_function("fake_add_one"));
  ASSERT_EQ(okp_core_set_kprobe_disabled(&kp, 1), 0);
  EXPECT_EQ(*at, 0x48);
  ASSERT_EQ(okp_core_set_kprobe_disabled(&kp, 0), 0);
  EXPECT_EQ(*at, 0xcc);
  okp_core_unregister_kprobe(&kp);
}

TEST_F(Registry, SitesInARangeAreFoundByTheirPatchedBytes) {
  okp_kprobe a = probe("fake_add_one", 0), b = probe("fake_add_one", 3);
  ASSERT_EQ(okp_core_register_kprobe(&a), 0) << a.okp_reason;
  ASSERT_EQ(okp_core_register_kprobe(&b), 0) << b.okp_reason;
  const okp_addr_t f = fake_function("fake_add_one");
  auto count = [&](okp_addr_t start, okp_addr_t end) {
    int n = 0;
    okp::RegistryGuard guard;
    okp::registry().for_each_site_in(guard, start, end, [&](okp::Site&) { ++n; });
    return n;
  };
  EXPECT_EQ(count(f, f + 3), 1);
  EXPECT_EQ(count(f, f + 5), 2) << "a 5-byte jump at f would cover both";
  EXPECT_EQ(count(f + 1, f + 3), 0);
  okp_kprobe* both[] = {&a, &b};
  okp_core_unregister_kprobes(both, 2);
}

}  // namespace

// debugfs explain: a registration's verdict, word for word, with nothing written.
TEST_F(Registry, ExplainGivesTheRegistrationsVerdictWithoutRegistering) {
  char out[512];
  auto explained = [&](const char* sym, unsigned int off) {
    return okp_core_explain(sym, 0, off, out, sizeof(out));
  };
  const long patches = seam_counters().patches;
  auto slots_in_use = [] {
    okp::RegistryGuard guard;
    return okp::registry().slots(guard).in_use();
  };
  const auto slots_before = slots_in_use();

  okp_kprobe mid = probe("fake_add_one", 1);
  EXPECT_EQ(explained("fake_add_one", 1), -84);
  EXPECT_EQ(okp_core_register_kprobe(&mid), -84);
  EXPECT_NE(std::string(out).find(mid.okp_reason), std::string::npos) << out;
  EXPECT_EQ(std::string(out).rfind("refused fake_add_one+0x1 (-84): ", 0), 0u) << out;

  EXPECT_EQ(explained("no_such_fake", 0), -2);
  EXPECT_NE(std::string(out).find("no text symbol 'no_such_fake'"), std::string::npos) << out;

  const okp_addr_t f = fake_function("fake_forbidden");
  ASSERT_EQ(okp_core_blacklist_add(f, f + 3, "fake_forbidden", "trap path", nullptr), 0);
  okp_kprobe bl = probe("fake_forbidden", 1);
  EXPECT_EQ(explained("fake_forbidden", 1), -22);
  EXPECT_EQ(okp_core_register_kprobe(&bl), -22);
  EXPECT_NE(std::string(out).find(bl.okp_reason), std::string::npos) << out;

  EXPECT_EQ(explained("fake_mul", 4), 0);  // imul: boosted
  EXPECT_EQ(std::string(out).rfind("accepted fake_mul", 0), 0u) << out;
  EXPECT_NE(std::string(out).find("boosted"), std::string::npos) << out;
  EXPECT_EQ(seam_counters().patches, patches) << "explain wrote text";
  EXPECT_EQ(slots_in_use(), slots_before) << "a trial kept its slots";
  EXPECT_NE(std::string(out).find("; optimized: a jump over +0x4.."), std::string::npos) << out;

  okp_kprobe kp = probe("fake_mul", 4);
  ASSERT_EQ(okp_core_register_kprobe(&kp), 0) << kp.okp_reason;
  EXPECT_EQ(explained("fake_mul", 4), 0);
  EXPECT_NE(std::string(out).find("joins the probes already there"), std::string::npos) << out;
  okp_core_unregister_kprobe(&kp);
}
