// SPDX-License-Identifier: GPL-2.0
// A riscv64 function decoded whole, and the registers live before each of its instructions
// (function_flow.h).
#include "arch/riscv/function_flow.h"

#include "arch/riscv/ftrace_ops_literal.h"

#include "arch/riscv/insn_plan.h"

namespace okp::riscv {

namespace {

bool is_ebreak(const u8* b, usize length) {
  if (length == 2) return (b[0] | b[1] << 8) == kCEbreak;
  return (b[0] | b[1] << 8 | b[2] << 16 | static_cast<u32>(b[3]) << 24) == kEbreak;
}

}  // namespace

FunctionFlow::FunctionFlow(FunctionFlow&& other)
    : fn_(other.fn_), insns_(other.insns_), live_(other.live_), count_(other.count_),
      code_size_(other.code_size_), data_tail_(other.data_tail_), stop_reason_(other.stop_reason_) {
  other.insns_ = nullptr;
  other.live_ = nullptr;
  other.count_ = 0;
}

FunctionFlow::~FunctionFlow() {
  if (insns_) okp_seam_free_large(insns_);
  if (live_) okp_seam_free_large(live_);
}

ErrorOr<FunctionFlow> FunctionFlow::decode(const FunctionText& fn) {
  FunctionFlow f;
  f.fn_ = fn;
  const usize cap = fn.size / 2 + 1;  // instructions are at least 2 bytes
  f.insns_ = static_cast<FlowInsn*>(okp_seam_alloc_large(cap * sizeof(FlowInsn)));
  f.live_ = static_cast<RegSet*>(okp_seam_alloc_large(cap * sizeof(RegSet)));
  if (!f.insns_ || !f.live_) return Error(Errno::kNoMem, "no memory for the function's flow");
  usize off = 0;
  // The auipc just before, for the far jump and call (`auipc rX, hi; jalr rd, lo(rX)`).
  bool after_auipc = false;
  u8 auipc_rd = 0;
  okp_addr_t auipc_value = 0;
  // The next function's ftrace_ops pointer (CALL_OPS) ends the extent: data, not decoded.
  if (fn.size >= 8) f.data_tail_ = ftrace_ops_literal_bytes(fn.bytes + fn.size - 8);
  const usize end = fn.size - f.data_tail_;
  while (off < end) {
    auto r = register_use(fn.bytes + off, end - off, fn.start + off);
    if (r.is_error()) {
      f.stop_reason_ = r.error().reason();
      break;
    }
    const RegisterUse& u = r.value();
    FlowInsn& in = f.insns_[f.count_];
    in = {};
    in.offset = static_cast<u32>(off);
    in.length = u.length;
    in.flow = u.flow;
    in.lr = u.lr;
    in.sc = u.sc;
    in.memory = u.memory;
    in.pc_relative = u.pc_relative;
    in.reads = u.reads;
    in.writes = u.writes;
    in.target = kNoInsn;
    in.target_addr = u.target;
    if (u.flow == Flow::kUnknown && is_ebreak(fn.bytes + off, u.length)) {
      for (usize b = 0; b < fn.n_bug_sites; ++b)
        if (fn.bug_sites[b] == fn.start + off) in.bug_site = true;
      if (in.bug_site) in.flow = Flow::kNext, in.reads = in.writes = 0;
    }
    const bool jalr = u.length == 4 && (fn.bytes[off] & 0x7f) == 0x67;
    if (jalr && after_auipc && u.rs1 == auipc_rd && (u.rd == 0 || u.rd == kRa)) {
      // The assembler's `tail` and `call`: the target is as direct as a jal's.
      in.target_addr = auipc_value + static_cast<u64>(u.imm);
      in.flow = u.rd == 0 ? Flow::kJump : Flow::kCall;
      in.pc_relative = true;
    }
    after_auipc = u.rd != 0 && u.length == 4 && (fn.bytes[off] & 0x7f) == 0x17;
    auipc_rd = u.rd;
    auipc_value = static_cast<okp_addr_t>(u.imm);
    ++f.count_;
    off += u.length;
  }
  f.code_size_ = off;
  for (usize i = 0; i < f.count_; ++i) {
    FlowInsn& in = f.insns_[i];
    if (in.flow == Flow::kJump || in.flow == Flow::kBranch || in.flow == Flow::kCall)
      in.target = f.index_of(in.target_addr);
  }
  // A far jump or call resolved above is only as sound as its auipc: when anything else
  // lands on the jalr, the base register may hold another value there.
  for (usize i = 0; i < f.count_; ++i) {
    const FlowInsn& in = f.insns_[i];
    if (in.target == kNoInsn || (in.flow != Flow::kJump && in.flow != Flow::kBranch)) continue;
    f.unresolve_far(in.target);
  }
  for (usize h = 0; h < fn.n_hidden; ++h) {
    const u32 from = f.index_of(fn.hidden[h].from);
    if (from != kNoInsn && fn.hidden[h].table) {
      if (f.insns_[from].flow == Flow::kIndirect) f.insns_[from].table_dispatch = true;
    } else if (from != kNoInsn) {
      FlowInsn& site = f.insns_[from];
      site.hidden_from = true;
      // A jump label's site enabled now (`j target`) is a nop again when its key flips:
      // both ways, whatever the text holds today.
      if (site.flow == Flow::kJump && site.length == 4 && (fn.bytes[site.offset] & 0x7f) == 0x6f)
        site.flow = Flow::kBranch;
    }
    const u32 to = f.index_of(fn.hidden[h].to);
    if (to != kNoInsn) f.unresolve_far(to);
  }
  return f;
}

void FunctionFlow::unresolve_far(u32 index) {
  FlowInsn& t = insns_[index];
  if (t.length != 4 || (fn_.bytes[t.offset] & 0x7f) != 0x67) return;  // not a jalr
  if (t.flow == Flow::kJump) t.flow = Flow::kIndirect;  // a `tail`: a jr again
  t.target = kNoInsn;
  t.target_addr = 0;  // a `call`: through its register again (detour.cpp)
}

u32 FunctionFlow::index_of(okp_addr_t addr) const {
  if (addr < fn_.start || addr >= fn_.start + code_size_) return kNoInsn;
  const u32 off = static_cast<u32>(addr - fn_.start);
  usize lo = 0, hi = count_;
  while (lo < hi) {
    const usize mid = (lo + hi) / 2;
    if (insns_[mid].offset < off) lo = mid + 1;
    else hi = mid;
  }
  return lo < count_ && insns_[lo].offset == off ? static_cast<u32>(lo) : kNoInsn;
}

bool FunctionFlow::compute_liveness() {
  for (usize i = 0; i < count_; ++i) live_[i] = 0;
  // A hidden edge from where no instruction starts: the decode and the kernel's tables
  // disagree, so nothing here can be trusted.
  bool sound = true;
  for (usize h = 0; h < fn_.n_hidden; ++h) {
    const okp_addr_t from = fn_.hidden[h].from;
    if (from >= fn_.start && from < fn_.start + fn_.size && index_of(from) == kNoInsn)
      sound = false;
  }
  if (!sound) {
    for (usize i = 0; i < count_; ++i) live_[i] = kAllRegs;
    return false;
  }
  // Liveness is the least fixed point of live_in = reads | (live_out & ~writes): start from
  // nothing live and sweep backwards until no set grows (sets only grow, so it ends).
  bool changed = true;
  while (changed) {
    changed = false;
    for (usize k = count_; k-- > 0;) {
      const FlowInsn& in = insns_[k];
      const RegSet next = k + 1 < count_ ? live_[k + 1] : kAllRegs;  // off the decoded code
      RegSet out = 0;
      switch (in.flow) {
        case Flow::kNext: out = next; break;
        case Flow::kJump: out = live_at_target(in); break;
        case Flow::kBranch: out = live_at_target(in) | next; break;
        case Flow::kCall: out = next; break;
        case Flow::kReturn: out = 0; break;
        case Flow::kIndirect: out = in.table_dispatch ? 0 : kAllRegs; break;
        case Flow::kUnknown: out = kAllRegs; break;
      }
      RegSet live = in.reads | (out & ~in.writes);
      if (in.flow == Flow::kUnknown || (in.flow == Flow::kIndirect && !in.table_dispatch))
        live = kAllRegs;
      // A hidden edge leaves before the instruction's writes (a fault does not complete it;
      // a jump label's site is a nop; a dispatch writes nothing).
      if (in.hidden_from || in.table_dispatch) {
        const okp_addr_t at = fn_.start + in.offset;
        for (usize h = 0; h < fn_.n_hidden; ++h)
          if (fn_.hidden[h].from == at) live |= live_at(index_of(fn_.hidden[h].to));
      }
      live |= live_[k];
      if (live != live_[k]) {
        live_[k] = live;
        changed = true;
      }
    }
  }
  return true;
}

RegSet FunctionFlow::live_at_target(const FlowInsn& in) const {
  if (in.target != kNoInsn) return live_[in.target];
  const bool outside = in.target_addr < fn_.start || in.target_addr >= fn_.start + fn_.size;
  return outside && fn_.jumps_out_are_tail_calls ? kTailCallReads : kAllRegs;
}

usize FunctionFlow::outside_targets(okp_addr_t* out, usize max) const {
  usize n = 0;
  for (usize i = 0; i < count_; ++i) {
    const FlowInsn& in = insns_[i];
    if (in.flow != Flow::kJump && in.flow != Flow::kBranch) continue;
    const okp_addr_t t = in.target_addr;
    if (t >= fn_.start && t < fn_.start + fn_.size) continue;
    bool seen = false;
    for (usize k = 0; k < n && k < max; ++k) seen = seen || out[k] == t;
    if (seen) continue;
    if (n < max) out[n] = t;
    ++n;
  }
  return n;
}

bool FunctionFlow::undecoded_bytes() const {
  for (usize i = code_size_; i < fn_.size - data_tail_; ++i)
    if (fn_.bytes[i]) return true;
  return false;
}

u32 FunctionFlow::first_unresolved_indirect() const {
  for (usize i = 0; i < count_; ++i)
    if (insns_[i].flow == Flow::kIndirect && !insns_[i].table_dispatch) return static_cast<u32>(i);
  return kNoInsn;
}

u32 open_reservation(const FunctionFlow& flow, usize index) {
  for (usize back = 1; back <= kMaxReservationInsns && back <= index; ++back) {
    const FlowInsn& in = flow.insn(index - back);
    if (in.sc) return kNoInsn;
    if (in.lr) return static_cast<u32>(index - back);
  }
  return kNoInsn;
}

}  // namespace okp::riscv
