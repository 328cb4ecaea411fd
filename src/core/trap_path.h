// SPDX-License-Identifier: GPL-2.0
// The trap path, derived: every function the kernel runs between a breakpoint of okprobes and
// okprobes' re-entry guard (and after it is dropped) must never hold a probe of okprobes, or
// each hit traps again inside its own handling until the NMI nesting count overflows. Which
// functions those are depends on the running kernel's configuration: on a PREEMPT_DYNAMIC
// kernel rcu_read_lock() in the die-notifier chain is the out-of-line __rcu_read_lock(), with
// lockdep it is lock_acquire() and its callees, with KASAN the shadow checks. A fixed list
// misses them; the kernel's own kprobes never needed one, being reached before that chain.
//
// So the list is derived from the live text: starting at the functions the kernel's trap entry
// calls on the way to the die notifiers (arch::kTrapEntryFunctions) and at okprobes' own entry
// points, every direct call and every jump that leaves a function is followed, transitively.
// The live text is what runs: alternatives, static calls and paravirt patching have already
// been applied. Indirect calls are not followed: they are the notifiers' and probes' handlers.
//
// Three kinds of call are not followed, each a fact about the trap's context, not a guess:
//  - kNotReached: fatal reporting (die, panic, printk of a BUG/WARN, __stack_chk_fail): when it
//    runs the trap is already lost; and preemption points and the scheduler: the breakpoint
//    trap runs as an NMI (preempt_count holds NMI_OFFSET), where preempt_enable() never
//    reschedules and nothing may sleep.
//  - kEntryOnly: functions that return at once when in_nmi() (rcu_read_unlock_special,
//    __rcu_irq_enter_check_tick): their first instructions run, so they are listed, but
//    nothing they call is reached from the trap.
// Everything else reached is listed, with the function it was reached from, so a refusal
// can say why ("__rcu_read_lock, reached from notify_die").
#pragma once

#include "core/error_or.h"
#include "core/string.h"
#include "core/utility.h"
#include "arch/arch_contract.h"

namespace okp {

struct FunctionExtent {
  okp_addr_t start = 0;
  unsigned long size = 0;
  char name[128] = {};
};

enum class CallRule { kFollow, kEntryOnly, kNotReached };

// The rule for a function, by its name without a compiler suffix (foo.isra.0, foo.cold).
CallRule trap_path_rule(const char* name);

// True when name (suffixes ignored) is base, e.g. ("do_int3.cold", "do_int3").
bool same_function(const char* name, const char* base);

// The walk over a call graph. Env provides:
//   bool function_at(okp_addr_t addr, FunctionExtent* out)  kernel text only (no init text)
//   bool read_text(okp_addr_t addr, u8* buf, usize len)      nofault
// and is a template parameter so the host tests can walk a crafted text image.
// visit(fn, via) is called once per function listed; via is nullptr for a root.
// At most max_functions are visited: past that the walk stops with -ENOSPC (what was
// visited is still reported). Process context: it allocates with GFP_KERNEL.
template <typename Env, typename Visit>
ErrorOr<usize> walk_trap_path(Env& env, const okp_addr_t* roots, usize nroots,
                              usize max_functions, Visit visit);

// --- implementation -----------------------------------------------------------------------

namespace trap_path_detail {

struct Node {
  okp_addr_t start;
  unsigned long size;
  u32 via;  // index of the node it was reached from; kNoVia for roots
  CallRule rule;
};
constexpr u32 kNoVia = ~0u;

// Open-addressed set of visited function starts (power-of-two capacity, twice max nodes).
class VisitedSet {
 public:
  explicit VisitedSet(usize nodes) {
    capacity_ = 16;
    while (capacity_ < 2 * nodes) capacity_ *= 2;
    keys_ = static_cast<okp_addr_t*>(okp_seam_alloc(capacity_ * sizeof(okp_addr_t), OKP_GFP_KERNEL));
  }
  ~VisitedSet() { okp_seam_free(keys_); }
  VisitedSet(const VisitedSet&) = delete;
  VisitedSet& operator=(const VisitedSet&) = delete;
  bool ok() const { return keys_ != nullptr; }
  // True when key was not there before.
  bool insert(okp_addr_t key) {
    usize i = (key >> 4) * 0x9E3779B97F4A7C15ull >> 7 & (capacity_ - 1);
    while (keys_[i]) {
      if (keys_[i] == key) return false;
      i = (i + 1) & (capacity_ - 1);
    }
    keys_[i] = key;
    return true;
  }

 private:
  okp_addr_t* keys_ = nullptr;
  usize capacity_ = 0;
};

template <typename Env>
bool name_of(Env& env, okp_addr_t addr, FunctionExtent* out) {
  return env.function_at(addr, out) && out->start == addr;
}

}  // namespace trap_path_detail

template <typename Env, typename Visit>
ErrorOr<usize> walk_trap_path(Env& env, const okp_addr_t* roots, usize nroots,
                              usize max_functions, Visit visit) {
  using namespace trap_path_detail;
  auto* nodes = static_cast<Node*>(okp_seam_alloc(max_functions * sizeof(Node), OKP_GFP_KERNEL));
  VisitedSet visited(max_functions);
  if (!nodes || !visited.ok()) {
    okp_seam_free(nodes);
    return Error(Errno::kNoMem, "no memory for the trap-path walk");
  }
  usize count = 0;
  bool full = false;
  FunctionExtent fn, via;

  // Adds the function containing addr (reached from node `from`); the queue is `nodes`.
  auto reach = [&](okp_addr_t addr, u32 from) {
    if (!env.function_at(addr, &fn) || !fn.size) return;
    CallRule rule = trap_path_rule(fn.name);
    if (rule == CallRule::kNotReached && from != kNoVia) return;
    if (!visited.insert(fn.start)) return;
    if (count == max_functions) {
      full = true;
      return;
    }
    nodes[count] = Node{fn.start, fn.size, from, rule};
    ++count;
    if (from != kNoVia && name_of(env, nodes[from].start, &via))
      visit(fn, static_cast<const FunctionExtent*>(&via));
    else
      visit(fn, static_cast<const FunctionExtent*>(nullptr));
  };

  for (usize i = 0; i < nroots; ++i)
    if (roots[i]) reach(roots[i], kNoVia);

  // Breadth first: the queue is the node array itself, each node decoded once.
  u8 window[256];
  for (usize head = 0; head < count; ++head) {
    const Node n = nodes[head];
    if (n.rule != CallRule::kFollow) continue;
    usize code_size = n.size;  // the extent less the data at its end (arch::trailing_data_bytes)
    if constexpr (arch::kTrailingDataWindow > 0) {
      u8 last[arch::kTrailingDataWindow > 0 ? arch::kTrailingDataWindow : 1];
      if (n.size >= arch::kTrailingDataWindow &&
          env.read_text(n.start + n.size - arch::kTrailingDataWindow, last, arch::kTrailingDataWindow))
        code_size -= arch::trailing_data_bytes(last);
    }
    usize off = 0, have = 0, base = 0;  // window holds [base, base+have) of the function
    while (off < code_size) {
      if (off + arch::kMaxInsnLength > base + have && base + have < code_size) {
        base = off;
        have = min<usize>(sizeof(window), code_size - off);
        if (!env.read_text(n.start + base, window, have)) break;
      }
      auto step = arch::direct_branch(window + (off - base), base + have - off, n.start + off);
      if (step.is_error()) break;  // undecodable bytes (data, padding): the rest is not code
      okp_addr_t target = step.value().target;
      if (target && (target < n.start || target >= n.start + n.size))
        reach(target, static_cast<u32>(head));
      off += step.value().length;
    }
  }
  okp_seam_free(nodes);
  if (full) return Error(Errno::kNoSpc, "trap-path walk reached its function limit");
  return count;
}

}  // namespace okp
