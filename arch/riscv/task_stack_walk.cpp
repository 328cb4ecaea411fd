// SPDX-License-Identifier: GPL-2.0
// One task's kernel stack through its frame-pointer chain, every exception frame on it found
// (src/kernel/arch/riscv/task_stack_walk.h has the interface, docs/riscv64-detours.md "A
// preemptible kernel" the argument).
//
// A riscv64 kernel built with frame pointers keeps, below each function's CFA (s0 in its
// body), the record {caller's s0, ra}; a leaf keeps only the caller's s0, at CFA - 8, and its
// ra stays in the register. The exception entry saves a pt_regs at the interrupted sp minus
// its size and calls its C handler with sp there and s0 holding no frame pointer, so the
// handler's record names the entry code as its return address and its CFA is the pt_regs:
// that is how the kernel's own unwinder finds one (6.1: ra == ret_from_exception; 6.12 and
// 7.x: ra within handle_exception .. ret_from_exception_end), and how this walk does. 6.1
// preempts from the entry's own code (resume_kernel calls preempt_schedule_irq with sp at the
// pt_regs), 6.12 and 7.x from irqentry_exit under do_irq: either way the return address into
// the entry code marks the frame.
//
// Where the kernel's unwinder stops quietly (a frame pointer off the stack, a return address
// that is not text), this walk answers UNKNOWN, and the caller refuses to write: a chain that
// is not followed to the pt_regs at the top of the stack proves nothing. Each exception frame
// it passes is checked to be one (from the kernel: SPP set, its saved sp just above it).
#include "kernel/arch/riscv/task_stack_walk.h"

namespace {

using okp_addr = okp_addr_t;

// More frames than any kernel stack holds (16 KiB of 16-byte records at the very least).
constexpr unsigned kMaxSteps = 1024;

bool in_ranges(const okp_riscv_text_range* r, unsigned long n, okp_addr a) {
  for (unsigned long i = 0; i < n; ++i)
    if (a >= r[i].start && a < r[i].end) return true;
  return false;
}

bool strictly_inside(const okp_riscv_walk_env& env, okp_addr a) {
  for (unsigned long i = 0; i < env.n_inside; ++i)
    if (a > env.inside[i].start && a < env.inside[i].end) return true;
  return false;
}

class TaskWalk {
 public:
  TaskWalk(const okp_riscv_walk_env& env, const okp_riscv_task_stack& task)
      : env_(env), task_(task) {}

  okp_riscv_walk_result run(okp_addr* where, const char** why) {
    okp_riscv_walk_result r = walk();
    *where = at_;
    *why = r == OKP_RISCV_TASK_UNKNOWN ? why_ : nullptr;
    return r;
  }

 private:
  okp_riscv_walk_result unknown(const char* why, okp_addr at) {
    why_ = why;
    at_ = at;
    return OKP_RISCV_TASK_UNKNOWN;
  }

  bool inside(okp_addr pc) {
    if (!strictly_inside(env_, pc) && !(env_.keeps_switch && env_.keeps_switch(pc))) return false;
    at_ = pc;
    return true;
  }

  bool entry(okp_addr a) const { return in_ranges(env_.entry, env_.n_entry, a); }
  bool text(okp_addr a) const { return env_.is_text(a) != 0; }

  // One word of the task's stack, which must lie wholly on it.
  bool read(okp_addr addr, unsigned long* value) const {
    if ((addr & 7) || addr < task_.stack_low || addr > task_.stack_high - 8) return false;
    return env_.read_word(addr, value) == 0;
  }

  // A CFA the next record may be read below: aligned, above the frames already passed, and no
  // higher than the pt_regs at the top (every kernel frame of the task lies below it).
  bool frame_pointer_ok(okp_addr fp, okp_addr floor) const {
    return !(fp & 7) && fp >= floor + 16 && fp <= task_.top_regs;
  }

  okp_riscv_walk_result walk() {
    const okp_addr top = task_.top_regs;
    if ((task_.sp & 7) || task_.sp < task_.stack_low || task_.sp > top)
      return unknown("its saved sp is not on its stack", task_.sp);
    if (inside(task_.pc)) return OKP_RISCV_TASK_INSIDE;
    // A task that never ran resumes in the fork return with sp at its pt_regs.
    if (entry(task_.pc)) {
      if (task_.sp != top) return unknown("it resumes in the entry code off its top frame", task_.sp);
      return exception_frame(top, top);
    }
    pc_ = task_.pc;
    fp_ = task_.fp;
    floor_ = task_.sp;
    for (unsigned steps = 0; steps < kMaxSteps; ++steps) {
      // pc_ is a pc of the function whose CFA is fp_; its record holds where it returns.
      if (!text(pc_)) return unknown("a return address on its stack is not text", pc_);
      if (!frame_pointer_ok(fp_, floor_)) return unknown("a frame pointer is off its stack", fp_);
      unsigned long next_fp, ra;
      if (!read(fp_ - 16, &next_fp) || !read(fp_ - 8, &ra))
        return unknown("a frame record cannot be read", fp_ - 16);
      if (inside(ra)) return OKP_RISCV_TASK_INSIDE;
      if (entry(ra)) {
        const okp_riscv_walk_result r = exception_frame(fp_, fp_);
        if (r != kGoOn) return r;
        continue;
      }
      floor_ = fp_;
      pc_ = ra;
      fp_ = next_fp;
    }
    return unknown("its frame chain is longer than any stack", fp_);
  }

  // Sentinel: the walk goes on from pc_, fp_, floor_ (set by exception_frame).
  static constexpr okp_riscv_walk_result kGoOn = static_cast<okp_riscv_walk_result>(3);

  // The pt_regs at regs, below which the walk has read nothing above floor. OUTSIDE at the
  // top of the stack, INSIDE or UNKNOWN, or kGoOn with the interrupted code's frame set up.
  okp_riscv_walk_result exception_frame(okp_addr regs, okp_addr floor) {
    const okp_riscv_regs_layout& L = env_.regs;
    for (unsigned nested = 0; nested < kMaxSteps; ++nested) {
      unsigned long epc, status, sp, s0, ra;
      if ((regs & 7) || regs < floor || regs > task_.stack_high - L.size)
        return unknown("an exception frame is off its stack", regs);
      if (!read(regs + L.epc, &epc) || !read(regs + L.status, &status) ||
          !read(regs + L.sp, &sp) || !read(regs + L.s0, &s0) || !read(regs + L.ra, &ra))
        return unknown("an exception frame cannot be read", regs);
      if (regs == task_.top_regs) {
        // From user mode, or a kernel thread's (never returned to) frame: the stack's end.
        if ((status & L.status_spp) && inside(epc)) return OKP_RISCV_TASK_INSIDE;
        return OKP_RISCV_TASK_OUTSIDE;
      }
      if (!(status & L.status_spp))
        return unknown("a user-mode exception frame below the top of its stack", regs);
      if (sp != regs + L.size)
        return unknown("a frame the entry code returns to is no exception frame (its saved "
                       "sp is not just above it)", regs);
      if (inside(epc)) return OKP_RISCV_TASK_INSIDE;
      if (entry(epc)) {
        // An exception taken in the entry code itself (6.1 runs parts of it with interrupts
        // on), which runs with sp at the outer pt_regs.
        floor = regs + L.size;
        regs = sp;
        continue;
      }
      return interrupted(regs + L.size, epc, s0, ra);
    }
    return unknown("exception frames nest deeper than any stack", regs);
  }

  // The code an exception interrupted at epc, its sp just above the pt_regs: its s0 is its
  // own CFA (a frame set up), or its caller's (in a prologue or epilogue, or a function
  // keeping no frame), with its record, a leaf's, or its caller's below it.
  okp_riscv_walk_result interrupted(okp_addr sp, okp_addr epc, okp_addr s0, okp_addr ra) {
    if (!text(epc)) return unknown("an exception interrupted no kernel text", epc);
    if (inside(ra)) return OKP_RISCV_TASK_INSIDE;
    if (!frame_pointer_ok(s0, sp))
      return unknown("the interrupted code's frame pointer is off its stack", s0);
    unsigned long below, saved;  // [s0 - 16], [s0 - 8]
    if (!read(s0 - 16, &below) || !read(s0 - 8, &saved))
      return unknown("the interrupted code's frame record cannot be read", s0 - 16);
    if (text(saved)) {
      // A full record at s0: the interrupted function's, or its caller's.
      if (inside(saved)) return OKP_RISCV_TASK_INSIDE;
      if (entry(ra) && !entry(saved)) {
        // Called by the entry code (its return address still in ra) but its record does not
        // say so: it was interrupted before it had one, and s0 is still the entry's scratch.
        return unknown("interrupted in a function the exception entry called, before its "
                       "frame record", epc);
      }
      if (entry(saved)) return exception_frame(s0, s0);
      pc_ = saved;
      fp_ = below;
      floor_ = s0;
      return kGoOn;
    }
    if (frame_pointer_ok(saved, s0) && text(ra)) {
      // A leaf: only its caller's s0 saved (at s0 - 8), its return address still in ra.
      if (entry(ra)) return exception_frame(s0, s0);
      pc_ = ra;
      fp_ = saved;
      floor_ = s0;
      return kGoOn;
    }
    return unknown("the interrupted code keeps no frame record the walk can follow", s0);
  }

  const okp_riscv_walk_env& env_;
  const okp_riscv_task_stack& task_;
  okp_addr pc_ = 0, fp_ = 0, floor_ = 0;
  okp_addr at_ = 0;
  const char* why_ = nullptr;
};

}  // namespace

extern "C" okp_riscv_walk_result okp_riscv_walk_task_stack(const okp_riscv_walk_env* env,
                                                           const okp_riscv_task_stack* task,
                                                           okp_addr_t* where, const char** why) {
  return TaskWalk(*env, *task).run(where, why);
}
