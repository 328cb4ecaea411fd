// SPDX-License-Identifier: GPL-2.0
// The trap-path walk (core/trap_path.h) over crafted x86-64 text: which functions it lists,
// which it follows, and which it never reaches.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/trap_path.h"

namespace {

// A fake text image: named functions laid out in one host buffer, so the host seam's
// nofault read (plain memcpy) reads them. Calls and jumps are encoded rel32 to real offsets.
class FakeText {
 public:
  // Adds a function of the given size (filled with nops, ending in ret).
  void add(const std::string& name, size_t size) {
    order_.push_back(name);
    funcs_[name] = {next_, size};
    next_ += size;
  }
  void finish() {
    text_.assign(next_, 0x90);
    for (auto& [name, f] : funcs_) text_[f.offset + f.size - 1] = 0xc3;
  }
  okp_addr_t addr(const std::string& name) const {
    return reinterpret_cast<okp_addr_t>(text_.data()) + funcs_.at(name).offset;
  }
  // Writes `call target` (0xe8) or `jmp target` (0xe9) at from+at.
  void branch(const std::string& from, size_t at, const std::string& to, uint8_t opcode = 0xe8) {
    size_t pos = funcs_.at(from).offset + at;
    int32_t rel = static_cast<int32_t>(static_cast<int64_t>(addr(to)) -
                                       static_cast<int64_t>(addr(from) + at + 5));
    text_[pos] = opcode;
    std::memcpy(&text_[pos + 1], &rel, 4);
  }
  void bytes(const std::string& in, size_t at, std::initializer_list<uint8_t> b) {
    std::copy(b.begin(), b.end(), text_.begin() + funcs_.at(in).offset + at);
  }

  // The Env the walk asks.
  bool function_at(okp_addr_t a, okp::FunctionExtent* out) {
    for (auto& [name, f] : funcs_) {
      okp_addr_t s = reinterpret_cast<okp_addr_t>(text_.data()) + f.offset;
      if (a >= s && a < s + f.size) {
        out->start = s;
        out->size = f.size;
        std::snprintf(out->name, sizeof(out->name), "%s", name.c_str());
        return true;
      }
    }
    return false;
  }
  bool read_text(okp_addr_t a, okp::u8* buf, okp::usize len) {
    ++reads;
    std::memcpy(buf, reinterpret_cast<const void*>(a), len);
    return true;
  }
  int reads = 0;

 private:
  struct Func {
    size_t offset, size;
  };
  std::map<std::string, Func> funcs_;
  std::vector<std::string> order_;
  std::vector<uint8_t> text_;
  size_t next_ = 0;
};

// name -> the function it was reached from ("" for a root).
std::map<std::string, std::string> walk(FakeText& t, std::vector<std::string> roots,
                                        size_t max = 64, int* err = nullptr) {
  std::vector<okp_addr_t> r;
  for (auto& n : roots) r.push_back(t.addr(n));
  std::map<std::string, std::string> seen;
  auto res = okp::walk_trap_path(t, r.data(), r.size(), max,
                                 [&](const okp::FunctionExtent& fn, const okp::FunctionExtent* via) {
                                   EXPECT_EQ(seen.count(fn.name), 0u) << fn.name << " listed twice";
                                   seen[fn.name] = via ? via->name : "";
                                 });
  if (err) *err = res.is_error() ? res.error().kernel_errno() : 0;
  else EXPECT_FALSE(res.is_error());
  return seen;
}

TEST(TrapPath, FollowsCallsAndTailJumpsTransitively) {
  FakeText t;
  t.add("entry", 32);
  t.add("notify", 32);
  t.add("lock", 32);
  t.add("helper", 32);
  t.add("unrelated", 32);
  t.finish();
  t.branch("entry", 0, "notify");
  t.branch("notify", 8, "lock");
  t.branch("lock", 4, "helper", 0xe9);  // tail call
  auto seen = walk(t, {"entry"});
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen["entry"], "");
  EXPECT_EQ(seen["notify"], "entry");
  EXPECT_EQ(seen["lock"], "notify");
  EXPECT_EQ(seen["helper"], "lock");
  EXPECT_EQ(seen.count("unrelated"), 0u);
}

TEST(TrapPath, BranchesInsideAFunctionAreNotCalls) {
  FakeText t;
  t.add("entry", 32);
  t.add("next", 32);
  t.finish();
  t.bytes("entry", 0, {0x74, 0x10});  // je +0x10: stays inside entry
  t.branch("entry", 4, "entry", 0xe9);  // jmp back to its own start
  auto seen = walk(t, {"entry"});
  EXPECT_EQ(seen.size(), 1u);
}

TEST(TrapPath, ConditionalTailJumpIsFollowed) {
  FakeText t;
  t.add("entry", 32);
  t.add("slow", 32);
  t.finish();
  // jne rel32 to slow: gcc's conditional tail call.
  size_t at = 2;
  t.bytes("entry", at, {0x0f, 0x85, 0, 0, 0, 0});
  int32_t rel = static_cast<int32_t>(t.addr("slow") - (t.addr("entry") + at + 6));
  std::vector<uint8_t> b(4);
  std::memcpy(b.data(), &rel, 4);
  t.bytes("entry", at + 2, {b[0], b[1], b[2], b[3]});
  auto seen = walk(t, {"entry"});
  EXPECT_EQ(seen["slow"], "entry");
}

TEST(TrapPath, FatalReportingAndPreemptionPointsAreNotReached) {
  FakeText t;
  t.add("entry", 64);
  t.add("_printk", 32);
  t.add("preempt_schedule_thunk", 32);
  t.add("schedule", 32);
  t.add("die", 32);
  t.add("behind_printk", 32);
  t.finish();
  t.branch("entry", 0, "_printk");
  t.branch("entry", 8, "preempt_schedule_thunk");
  t.branch("entry", 16, "die");
  t.branch("preempt_schedule_thunk", 0, "schedule");
  t.branch("_printk", 0, "behind_printk");
  auto seen = walk(t, {"entry"});
  EXPECT_EQ(seen.size(), 1u) << "only entry itself";
}

TEST(TrapPath, InNmiEarlyReturnIsListedButNotFollowed) {
  FakeText t;
  t.add("__rcu_read_unlock", 32);
  t.add("rcu_read_unlock_special", 32);
  t.add("raise_softirq_irqoff", 32);
  t.finish();
  t.branch("__rcu_read_unlock", 0, "rcu_read_unlock_special");
  t.branch("rcu_read_unlock_special", 0, "raise_softirq_irqoff");
  auto seen = walk(t, {"__rcu_read_unlock"});
  EXPECT_EQ(seen["rcu_read_unlock_special"], "__rcu_read_unlock");
  EXPECT_EQ(seen.count("raise_softirq_irqoff"), 0u);
}

// riscv's do_trap_break serves user and kernel ebreaks in one function: its user-mode branch
// (the return to user mode, the uprobe notifiers' work) is not the trap path of a breakpoint in
// kernel text, while what its kernel-mode branch calls is.
TEST(TrapPath, UserModeWorkOfASharedEntryIsNotFollowed) {
  FakeText t;
  t.add("do_trap_break", 64);
  t.add("handle_break", 32);
  t.add("irqentry_nmi_enter", 32);
  t.add("exit_to_user_mode_loop", 32);
  t.add("get_signal", 32);
  t.add("uprobe_single_step_handler", 32);
  t.add("uprobe_post_sstep_notifier", 32);
  t.add("find_active_uprobe_rcu", 32);
  t.add("force_sig_fault", 32);
  t.add("send_signal_locked", 32);
  t.finish();
  t.branch("handle_break", 8, "force_sig_fault");
  t.branch("force_sig_fault", 0, "send_signal_locked");
  t.branch("do_trap_break", 0, "irqentry_nmi_enter");
  t.branch("do_trap_break", 8, "handle_break");
  t.branch("do_trap_break", 16, "exit_to_user_mode_loop");
  t.branch("exit_to_user_mode_loop", 0, "get_signal");
  t.branch("handle_break", 0, "uprobe_single_step_handler");
  t.branch("uprobe_single_step_handler", 0, "uprobe_post_sstep_notifier");
  t.branch("uprobe_post_sstep_notifier", 0, "find_active_uprobe_rcu");
  auto seen = walk(t, {"do_trap_break"});
  EXPECT_EQ(seen["handle_break"], "do_trap_break");
  EXPECT_EQ(seen["irqentry_nmi_enter"], "do_trap_break");
  EXPECT_EQ(seen.count("exit_to_user_mode_loop"), 0u);
  EXPECT_EQ(seen.count("get_signal"), 0u);
  EXPECT_EQ(seen["uprobe_post_sstep_notifier"], "uprobe_single_step_handler");
  EXPECT_EQ(seen.count("find_active_uprobe_rcu"), 0u);
  EXPECT_EQ(seen.count("force_sig_fault"), 0u);
  EXPECT_EQ(seen.count("send_signal_locked"), 0u);
}

TEST(TrapPath, CompilerSuffixesMatchTheirFunction) {
  EXPECT_TRUE(okp::same_function("_printk.cold", "_printk"));
  EXPECT_TRUE(okp::same_function("__schedule", "__schedule"));
  EXPECT_FALSE(okp::same_function("schedule_tail", "schedule"));
  EXPECT_FALSE(okp::same_function("sched", "schedule"));
  EXPECT_EQ(okp::trap_path_rule("rcu_read_unlock_special.part.0"), okp::CallRule::kEntryOnly);
  EXPECT_EQ(okp::trap_path_rule("__rcu_read_lock"), okp::CallRule::kFollow);
}

TEST(TrapPath, CyclesEndAndEachFunctionIsListedOnce) {
  FakeText t;
  t.add("a", 32);
  t.add("b", 32);
  t.add("c", 32);
  t.finish();
  t.branch("a", 0, "b");
  t.branch("b", 0, "c");
  t.branch("c", 0, "a");
  t.branch("c", 8, "b");
  auto seen = walk(t, {"a", "b"});
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen["c"], "b");
}

TEST(TrapPath, LongFunctionsAreReadInWindowsWithoutMissingACall) {
  FakeText t;
  t.add("big", 4000);
  t.add("target1", 16);
  t.add("target2", 16);
  t.finish();
  t.branch("big", 254, "target1");  // straddles the first 256-byte window
  t.branch("big", 3990, "target2");
  auto seen = walk(t, {"big"});
  EXPECT_EQ(seen["target1"], "big");
  EXPECT_EQ(seen["target2"], "big");
  EXPECT_GT(t.reads, 10);
}

TEST(TrapPath, StopsAtItsLimitWithENOSPC) {
  FakeText t;
  for (int i = 0; i < 10; ++i) t.add("f" + std::to_string(i), 16);
  t.finish();
  for (int i = 0; i < 9; ++i) t.branch("f" + std::to_string(i), 0, "f" + std::to_string(i + 1));
  int err = 0;
  auto seen = walk(t, {"f0"}, 4, &err);
  EXPECT_EQ(err, -28);
  EXPECT_EQ(seen.size(), 4u);
}

}  // namespace
