// The riscv64 task look's stack walk (arch/riscv/task_stack_walk.cpp) over fake kernel stacks
// laid out as a frame-pointer kernel lays them: records {caller's s0, ra} below each CFA, a
// leaf's caller s0 alone at CFA - 8, pt_regs pushed by the exception entry with the handler's
// CFA at them, and the top pt_regs of the task's entry from user mode or fork.
#include <gtest/gtest.h>

#include <map>

#include "kernel/arch/riscv/task_stack_walk.h"

namespace {

constexpr okp_addr_t kStackLow = 0xffffffc000100000ul;
constexpr okp_addr_t kStackHigh = kStackLow + 0x4000;
constexpr unsigned long kRegsSize = 288;  // 36 words, 16-aligned
constexpr okp_addr_t kTop = kStackHigh - kRegsSize;
constexpr unsigned long kSpp = 0x100;

constexpr okp_addr_t kText = 0xffffffff80000000ul;
constexpr okp_addr_t kTextEnd = kText + 0x100000;
constexpr okp_addr_t kEntry = kText + 0x1000;  // handle_exception .. its end
constexpr okp_addr_t kEntryEnd = kEntry + 0x200;
constexpr okp_addr_t kFork = kText + 0x2000;  // ret_from_fork
constexpr okp_addr_t kRegion = kText + 0x50000;  // the region being switched: 8 bytes

std::map<okp_addr_t, unsigned long> g_stack;

int read_word(okp_addr_t addr, unsigned long* value) {
  auto it = g_stack.find(addr);
  *value = it == g_stack.end() ? 0 : it->second;
  return 0;
}
int is_text(okp_addr_t addr) { return addr >= kText && addr < kTextEnd; }

const okp_riscv_text_range kEntryRanges[] = {{kEntry, kEntryEnd}, {kFork, kFork + 0x40}};
const okp_riscv_text_range kInside[] = {{kRegion, kRegion + 8}};

class TaskStackWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    g_stack.clear();
    env_.regs = {kRegsSize, 0, 8, 16, 64, 256, kSpp};
    env_.entry = kEntryRanges;
    env_.n_entry = 2;
    env_.inside = kInside;
    env_.n_inside = 1;
    env_.read_word = read_word;
    env_.is_text = is_text;
    // The top frame: the task came from user mode.
    regs(kTop, 0x10000, 0, 0, 0x7fff0000, 0x0);
  }

  // A frame record below the CFA cfa: the caller's s0 and the return address.
  static void record(okp_addr_t cfa, okp_addr_t caller_fp, okp_addr_t ra) {
    g_stack[cfa - 16] = caller_fp;
    g_stack[cfa - 8] = ra;
  }
  // A pt_regs at at.
  static void regs(okp_addr_t at, okp_addr_t epc, okp_addr_t ra, okp_addr_t s0, okp_addr_t sp,
                   unsigned long status) {
    g_stack[at + 0] = epc;
    g_stack[at + 8] = ra;
    g_stack[at + 16] = sp;
    g_stack[at + 64] = s0;
    g_stack[at + 256] = status;
  }
  // A kernel-mode exception frame whose interrupted sp is just above it.
  static void kernel_regs(okp_addr_t at, okp_addr_t epc, okp_addr_t ra, okp_addr_t s0) {
    regs(at, epc, ra, s0, at + kRegsSize, kSpp);
  }

  okp_riscv_walk_result walk(okp_addr_t pc, okp_addr_t fp, okp_addr_t sp) {
    const okp_riscv_task_stack task{kStackLow, kStackHigh, kTop, pc, fp, sp};
    why_ = nullptr;
    return okp_riscv_walk_task_stack(&env_, &task, &where_, &why_);
  }

  // A task asleep in a syscall: __schedule <- schedule <- the syscall <- the entry (top).
  // Returns the switch context's fp; the syscall's CFA is the top pt_regs.
  static okp_addr_t sleeping_in_syscall(okp_addr_t syscall_cfa_below_top = 0) {
    const okp_addr_t syscall_cfa = kTop - syscall_cfa_below_top;
    const okp_addr_t schedule_cfa = syscall_cfa - 64, sched_cfa = schedule_cfa - 96;
    record(syscall_cfa, 0x1234, kEntry + 0x80);   // returns to the entry: regs at its CFA
    record(schedule_cfa, syscall_cfa, kText + 0x3000);
    record(sched_cfa, schedule_cfa, kText + 0x4000);
    return sched_cfa;
  }

  okp_riscv_walk_env env_{};
  okp_addr_t where_ = 0;
  const char* why_ = nullptr;
};

TEST_F(TaskStackWalk, ASleepingTaskIsOutside) {
  const okp_addr_t fp = sleeping_in_syscall();
  EXPECT_EQ(walk(kText + 0x5000, fp, fp - 32), OKP_RISCV_TASK_OUTSIDE) << why_;
}

TEST_F(TaskStackWalk, AKernelThreadEndsAtItsForkReturn) {
  // kthread fn <- ret_from_fork (jalr s0, sp at the top pt_regs: a kthread's fake frame).
  regs(kTop, 0, 0, 0, 0, kSpp);
  const okp_addr_t fn_cfa = kTop, sched_cfa = fn_cfa - 128;
  record(fn_cfa, /*s0 = fn*/ kText + 0x6000, kFork + 0x10);
  record(sched_cfa, fn_cfa, kText + 0x3000);
  EXPECT_EQ(walk(kText + 0x5000, sched_cfa, sched_cfa - 32), OKP_RISCV_TASK_OUTSIDE) << why_;
}

TEST_F(TaskStackWalk, ATaskThatNeverRanIsOutside) {
  EXPECT_EQ(walk(kFork, 0, kTop), OKP_RISCV_TASK_OUTSIDE) << why_;
  EXPECT_EQ(walk(kFork, 0, kTop - 64), OKP_RISCV_TASK_UNKNOWN);
}

// A task preempted by an interrupt in kernel code F, called from a syscall:
// __schedule <- preempt_schedule_irq <- irqentry_exit <- do_irq <- [entry] pt_regs(epc in F)
// then F's frame (set up: its record at s0) <- the syscall <- [entry] top.
struct Preempted {
  okp_addr_t sched_cfa;
  okp_addr_t irq_regs;
};

Preempted preempted_at(okp_addr_t epc, okp_addr_t ra_reg, bool f_has_frame,
                       okp_addr_t* f_cfa_out = nullptr) {
  const okp_addr_t syscall_cfa = kTop;
  const okp_addr_t f_cfa = syscall_cfa - 80;
  g_stack[syscall_cfa - 16] = 0x1234;
  g_stack[syscall_cfa - 8] = kEntry + 0x80;
  if (f_has_frame) {
    g_stack[f_cfa - 16] = syscall_cfa;
    g_stack[f_cfa - 8] = kText + 0x7004;  // F returns into the syscall
  }
  const okp_addr_t irq_regs = f_cfa - 48 - kRegsSize;  // F's sp was f_cfa - 48
  g_stack[irq_regs + 0] = epc;
  g_stack[irq_regs + 8] = ra_reg;
  g_stack[irq_regs + 16] = irq_regs + kRegsSize;
  g_stack[irq_regs + 64] = f_has_frame ? f_cfa : syscall_cfa;
  g_stack[irq_regs + 256] = kSpp;
  const okp_addr_t do_irq_cfa = irq_regs, exit_cfa = do_irq_cfa - 64, psi_cfa = exit_cfa - 48,
                   sched_cfa = psi_cfa - 96;
  g_stack[do_irq_cfa - 16] = 0xdead;  // the entry's s0: no frame pointer
  g_stack[do_irq_cfa - 8] = kEntry + 0x40;
  g_stack[exit_cfa - 16] = do_irq_cfa;
  g_stack[exit_cfa - 8] = kText + 0x8000;
  g_stack[psi_cfa - 16] = exit_cfa;
  g_stack[psi_cfa - 8] = kText + 0x8100;
  g_stack[sched_cfa - 16] = psi_cfa;
  g_stack[sched_cfa - 8] = kText + 0x8200;
  if (f_cfa_out) *f_cfa_out = f_cfa;
  return {sched_cfa, irq_regs};
}

TEST_F(TaskStackWalk, APreemptedTaskOutsideTheRegion) {
  const Preempted p = preempted_at(kText + 0x9000, kText + 0x9100, true);
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_OUTSIDE) << why_;
}

TEST_F(TaskStackWalk, APreemptedTaskInsideTheRegionIsFound) {
  const Preempted p = preempted_at(kRegion + 4, kText + 0x9100, true);
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_INSIDE);
  EXPECT_EQ(where_, kRegion + 4);
}

TEST_F(TaskStackWalk, TheRegionsFirstAndEndAreNotInside) {
  Preempted p = preempted_at(kRegion, kText + 0x9100, true);
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_OUTSIDE) << why_;
  p = preempted_at(kRegion + 8, kText + 0x9100, true);
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_OUTSIDE) << why_;
}

TEST_F(TaskStackWalk, APreemptedLeafIsFollowedThroughItsRa) {
  // F a leaf with a frame pointer: only the caller's s0 at F's CFA - 8, ra still live.
  okp_addr_t f_cfa = 0;
  const Preempted p = preempted_at(kText + 0x9000, kText + 0x7004, false, &f_cfa);
  g_stack[p.irq_regs + 64] = f_cfa;   // s0 is F's CFA
  g_stack[f_cfa - 8] = kTop;          // the syscall's CFA
  g_stack[f_cfa - 16] = 0x5555;       // F's local, not a record
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_OUTSIDE) << why_;
}

TEST_F(TaskStackWalk, AnInterruptInAPrologueFollowsTheCallersRecord) {
  // F not set up yet: s0 is still the syscall's CFA; the syscall's record is read next.
  const Preempted p = preempted_at(kText + 0x9000, kText + 0x7004, false);
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_OUTSIDE) << why_;
}

TEST_F(TaskStackWalk, AnInterruptedEntryCalledHandlerBeforeItsRecordIsUnknown) {
  // F called by the entry code (ra into it), interrupted before its record: s0 is the
  // entry's scratch, which may point anywhere on the stack.
  okp_addr_t f_cfa = 0;
  const Preempted p = preempted_at(kText + 0x9000, kEntry + 0x90, false, &f_cfa);
  g_stack[p.irq_regs + 64] = f_cfa;
  g_stack[f_cfa - 16] = kTop;
  g_stack[f_cfa - 8] = kText + 0x7004;
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_UNKNOWN);
}

TEST_F(TaskStackWalk, ANestedExceptionFramesPcInsideIsFound) {
  // A page fault at kRegion + 2 (kernel mode, interrupts on), its handler preempted by an
  // interrupt: the inner frame is outside, the outer one inside.
  const okp_addr_t syscall_cfa = kTop;
  record(syscall_cfa, 0x1234, kEntry + 0x80);
  const okp_addr_t fault_regs = syscall_cfa - 80 - kRegsSize;
  kernel_regs(fault_regs, kRegion + 2, kText + 0x7004, syscall_cfa);
  const okp_addr_t handler_cfa = fault_regs;
  record(handler_cfa, 0xdead, kEntry + 0x60);
  const Preempted inner = [&] {
    const okp_addr_t irq_regs = handler_cfa - 64 - kRegsSize;
    kernel_regs(irq_regs, kText + 0xa000, kText + 0xa100, handler_cfa);
    const okp_addr_t do_irq_cfa = irq_regs, sched_cfa = do_irq_cfa - 128;
    record(do_irq_cfa, 0xdead, kEntry + 0x40);
    record(sched_cfa, do_irq_cfa, kText + 0x8000);
    return Preempted{sched_cfa, irq_regs};
  }();
  EXPECT_EQ(walk(kText + 0x5000, inner.sched_cfa, inner.sched_cfa - 32), OKP_RISCV_TASK_INSIDE);
  EXPECT_EQ(where_, kRegion + 2);
  // The same with the fault elsewhere: every frame read to the top.
  g_stack[fault_regs] = kText + 0xb000;
  EXPECT_EQ(walk(kText + 0x5000, inner.sched_cfa, inner.sched_cfa - 32), OKP_RISCV_TASK_OUTSIDE)
      << why_;
}

TEST_F(TaskStackWalk, AnInterruptInTheEntryCodeContinuesAtTheOuterFrame) {
  // 6.1 runs the syscall entry with interrupts on and sp at the syscall's pt_regs (the top).
  const okp_addr_t irq_regs = kTop - kRegsSize;
  kernel_regs(irq_regs, kEntry + 0x20, kEntry + 0x10, 0x42);
  const okp_addr_t psi_cfa = irq_regs, sched_cfa = psi_cfa - 96;
  record(psi_cfa, 0x42, kEntry + 0x100);  // preempt_schedule_irq called from resume_kernel
  record(sched_cfa, psi_cfa, kText + 0x8200);
  EXPECT_EQ(walk(kText + 0x5000, sched_cfa, sched_cfa - 32), OKP_RISCV_TASK_OUTSIDE) << why_;
}

TEST_F(TaskStackWalk, ABrokenChainIsUnknown) {
  const okp_addr_t fp = sleeping_in_syscall();
  // A frame pointer pointing down the stack (a loop).
  g_stack[fp - 16] = fp - 32;
  EXPECT_EQ(walk(kText + 0x5000, fp, fp - 32), OKP_RISCV_TASK_UNKNOWN);
  EXPECT_NE(why_, nullptr);
  // Off the stack.
  g_stack[fp - 16] = kStackHigh + 0x1000;
  EXPECT_EQ(walk(kText + 0x5000, fp, fp - 32), OKP_RISCV_TASK_UNKNOWN);
  // Misaligned.
  g_stack[fp - 16] = fp + 68;
  EXPECT_EQ(walk(kText + 0x5000, fp, fp - 32), OKP_RISCV_TASK_UNKNOWN);
}

TEST_F(TaskStackWalk, AReturnAddressThatIsNotTextIsUnknown) {
  const okp_addr_t fp = sleeping_in_syscall();
  g_stack[fp - 8] = 0x12345678;
  EXPECT_EQ(walk(kText + 0x5000, fp, fp - 32), OKP_RISCV_TASK_UNKNOWN);
}

TEST_F(TaskStackWalk, AChainEndingBelowTheTopIsUnknown) {
  // The syscall's record says its caller is 0 with no return to the entry: no pt_regs reached.
  const okp_addr_t fp = sleeping_in_syscall();
  g_stack[kTop - 8] = kText + 0x100;
  g_stack[kTop - 16] = 0;
  EXPECT_EQ(walk(kText + 0x5000, fp, fp - 32), OKP_RISCV_TASK_UNKNOWN);
}

TEST_F(TaskStackWalk, AFrameTheEntryReturnsToMustBeAnExceptionFrame) {
  const Preempted p = preempted_at(kText + 0x9000, kText + 0x9100, true);
  g_stack[p.irq_regs + 16] = p.irq_regs + kRegsSize + 16;  // saved sp not just above it
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_UNKNOWN);
  g_stack[p.irq_regs + 16] = p.irq_regs + kRegsSize;
  g_stack[p.irq_regs + 256] = 0;  // from user mode, but not at the top
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_UNKNOWN);
}

TEST_F(TaskStackWalk, AReturnAddressInsideTheRegionCounts) {
  const okp_addr_t fp = sleeping_in_syscall();
  g_stack[fp - 8] = kRegion + 6;
  EXPECT_EQ(walk(kText + 0x5000, fp, fp - 32), OKP_RISCV_TASK_INSIDE);
  EXPECT_EQ(walk(kRegion + 2, fp, fp - 32), OKP_RISCV_TASK_INSIDE);
}

int g_keeps_pc_calls = 0;
int keeps_detour_pc(okp_addr_t pc) {
  ++g_keeps_pc_calls;
  return pc >= kText + 0xc000 && pc < kText + 0xc100;  // "a detour of a site being switched"
}

TEST_F(TaskStackWalk, ATaskInADetourOfASwitchedSiteKeepsTheSwitch) {
  // Preempted in the detour's copy (its pc there), or with a return into it on the stack.
  env_.keeps_switch = keeps_detour_pc;
  Preempted p = preempted_at(kText + 0xc040, kText + 0x7004, true);
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_INSIDE);
  EXPECT_EQ(where_, kText + 0xc040);
  p = preempted_at(kText + 0x9000, kText + 0x9100, true);
  EXPECT_EQ(walk(kText + 0x5000, p.sched_cfa, p.sched_cfa - 32), OKP_RISCV_TASK_OUTSIDE) << why_;
  EXPECT_GT(g_keeps_pc_calls, 0);
}

}  // namespace
