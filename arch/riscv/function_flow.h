// SPDX-License-Identifier: GPL-2.0
// A riscv64 function decoded whole, from its start: every instruction with its register use
// (arch/riscv/register_use.h) and where control goes after it, as indices of the function's
// own instructions. What the dead-register proof and the detour's region check both walk.
//
// Control flow the bytes do not show comes in as hidden edges, from the kernel's tables:
//  - a jump label's site (`nop`, patched to `j target` when its key flips): site -> target;
//  - an exception-table entry: the faulting instruction -> its fixup (it jumps there without
//    completing, so without its writes).
// An edge that leaves the function, lands off an instruction boundary or past the decoded
// code proves nothing about registers there (every register is taken as live).
//
// Registration-time only: the instruction array is allocated (GFP_KERNEL).
#pragma once

#include "arch/riscv/register_use.h"
#include "core/error_or.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp::riscv {

// Control flow of the function the bytes do not show (see above). table: from a jump
// table's dispatch (arch/riscv/jump_table.h) to one of its targets; a dispatch with such
// edges goes to exactly those.
struct HiddenEdge {
  okp_addr_t from, to;
  bool table = false;
};

// The containing function's text, with okprobes' own breakpoints recovered.
struct FunctionText {
  okp_addr_t start;
  const u8* bytes;
  usize size;
  const HiddenEdge* hidden = nullptr;
  usize n_hidden = 0;
  // The caller checked that every direct jump and branch out of the function lands on
  // another function's entry (a symbol's start, not a compiler's .cold part of this one):
  // such a jump is a tail call, after which only kTailCallReads can be read. Unchecked, a
  // jump out proves nothing (a .cold part continues this function with its registers).
  bool jumps_out_are_tail_calls = false;
  // The function's BUG/WARN sites (the kernel's __bug_table): their ebreak falls through to
  // the next instruction and reads nothing (report_bug() reads the registers only to print
  // them; a WARN resumes at the next instruction with all of them as they were, a BUG never
  // comes back, and a path that is never taken only makes registers more live). Any other
  // ebreak is another tool's breakpoint over an instruction nobody can see: unknown.
  const okp_addr_t* bug_sites = nullptr;
  usize n_bug_sites = 0;
};

// What a tail call's callee may read: its arguments, what it preserves for this function's
// caller (s0-s11, sp, gp, tp) and ra, through which it returns there.
constexpr RegSet kTailCallReads = kArgRegs | kSavedRegs | kFixedRegs | reg_bit(kRa);

constexpr u32 kNoInsn = 0xffffffff;  // an edge to somewhere that is not one of the function's

// One per instruction of the function, so kept small (32 bytes; with its liveness 36 per
// instruction, up to one every 2 bytes of the function).
struct FlowInsn {
  u32 offset;      // from the function's start
  RegSet reads, writes;
  u32 target;      // kJump/kBranch/kCall: the target's index, or kNoInsn (outside, or unknown)
  okp_addr_t target_addr;  // kJump/kBranch/kCall: the target's address (0: not known)
  u8 length;
  Flow flow;       // kIndirect resolved to kJump/kCall when an auipc into its base precedes it
  bool lr : 1, sc : 1, memory : 1, pc_relative : 1;
  bool hidden_from : 1;     // a hidden edge (not a table's) leaves from here
  bool table_dispatch : 1;  // kIndirect resolved: its targets are its table's HiddenEdges
  bool bug_site : 1;        // a BUG/WARN's ebreak (FunctionText::bug_sites): kNext
};
static_assert(sizeof(FlowInsn) == 32, "FlowInsn grew");

class FunctionFlow {
 public:
  // Decodes fn from its start until its end (less the next function's ftrace_ops pointer,
  // arch/riscv/ftrace_ops_literal.h), or until the first bytes that are no instruction (the
  // all-zero padding after the last one, data): code_size() says where.
  // -ENOMEM only.
  static ErrorOr<FunctionFlow> decode(const FunctionText& fn);
  ~FunctionFlow();
  FunctionFlow(FunctionFlow&& other);
  FunctionFlow(const FunctionFlow&) = delete;
  FunctionFlow& operator=(const FunctionFlow&) = delete;
  FunctionFlow& operator=(FunctionFlow&&) = delete;

  const FunctionText& text() const { return fn_; }
  usize count() const { return count_; }
  const FlowInsn& insn(usize i) const { return insns_[i]; }
  okp_addr_t addr_of(usize i) const { return fn_.start + insns_[i].offset; }
  usize code_size() const { return code_size_; }
  // The index of the instruction starting at addr, or kNoInsn.
  u32 index_of(okp_addr_t addr) const;

  // Registers live before each instruction: read on some path from it before any write.
  // Computed once (compute_liveness), then live_in(i).
  [[nodiscard]] bool compute_liveness();
  RegSet live_in(usize i) const { return live_[i]; }
  // Live at an edge's target: live_in there, or every register when it is not an instruction
  // of this function.
  RegSet live_at(u32 index) const { return index == kNoInsn ? kAllRegs : live_[index]; }
  // Live where a jump's or branch's target is: as live_at, but a tail call's reads when the
  // target is out of the function and FunctionText says those are tail calls.
  RegSet live_at_target(const FlowInsn& in) const;
  // The distinct targets of direct jumps and branches out of the function, at most max of
  // them (for the caller's check of jumps_out_are_tail_calls); how many there are.
  usize outside_targets(okp_addr_t* out, usize max) const;

  // The first indirect jump that is neither a return, a far jump nor a resolved table's
  // dispatch (kNoInsn: none).
  u32 first_unresolved_indirect() const;

  // Bytes after code_size() that are not all zero (an ftrace_ops pointer at the end aside):
  // the function goes on in what does not decode (data in its text, an encoding longer than
  // 32 bits), whose branches nobody sees.
  bool undecoded_bytes() const;

  // For the tests and the survey: why decoding stopped before the end (nullptr: it did not).
  const char* stopped_because() const { return stop_reason_; }

 private:
  FunctionFlow() = default;
  // The jalr at index loses a far jump's or call's resolution (something else lands on it).
  void unresolve_far(u32 index);
  FunctionText fn_ = {};
  FlowInsn* insns_ = nullptr;
  RegSet* live_ = nullptr;
  usize count_ = 0;
  usize code_size_ = 0;
  usize data_tail_ = 0;  // the next function's ftrace_ops pointer at the extent's end (0 or 8)
  const char* stop_reason_ = nullptr;
};

// The LR/SC reservation an instruction is inside: the index of the lr opening it when an lr
// within kMaxReservationInsns before index has no sc after it (kNoInsn otherwise). The ISA
// guarantees an LR/SC loop forward progress only within 16 instructions; compilers and the
// kernel's atomics keep every sequence within them.
constexpr usize kMaxReservationInsns = 16;
u32 open_reservation(const FunctionFlow& flow, usize index);

}  // namespace okp::riscv
