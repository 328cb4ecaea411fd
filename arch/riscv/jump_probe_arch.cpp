// SPDX-License-Identifier: GPL-2.0
// riscv64's jump probes: the region check's inputs from the running kernel, the detour
// planning and the text switch of the jump contract (arch/jump_contract.h). The proofs and
// the relocation themselves are arch/riscv/{function_flow,dead_register,detour_region,
// jump_table,detour}.cpp (docs/riscv64-detours.md).
#include "jump_probe_arch.h"

#include "arch/riscv/detour_region.h"
#include "arch/riscv/function_flow.h"
#include "arch/riscv/jump_table.h"
#include "core/string.h"
#include "kernel/arch/riscv/detour_layout.h"
#include "seam/jump_services.h"

namespace okp::arch {

// The pre entries find the detour's words from their return address, the instruction after
// the detour's call (src/kernel/arch/riscv/detour_layout.h).
constexpr long kDetourEntryReturn = riscv::kDetourCallOffset + 16;
static_assert(OKP_DETOUR_ADDR_FROM_RET == 0 - kDetourEntryReturn &&
                  OKP_DETOUR_SITE_FROM_RET == long{riscv::kDetourSiteOffset} - kDetourEntryReturn &&
                  OKP_DETOUR_DEAD_FROM_RET == long{riscv::kDetourDeadRegOffset} - kDetourEntryReturn &&
                  OKP_DETOUR_COPY_FROM_RET == long{riscv::kDetourCopyOffset} - kDetourEntryReturn &&
                  OKP_DETOUR_HAS_POST == riscv::kDetourHasPost,
              "detour_layout.h's offsets are arch/riscv/detour.h's");
static_assert(OKP_DETOUR_FRAME == riscv::kDetourEntryFrame &&
                  OKP_PT_X(1) == riscv::kDetourEntryRaSlot,
              "the frame the detour's call takes is the entries' own, ra in its pt_regs' ra");
static_assert(riscv::detour_dead_slot(5) == __builtin_offsetof(okp_regs, t0) &&
                  riscv::detour_dead_slot(31) == __builtin_offsetof(okp_regs, t6),
              "the detour's place of R is R's in okp_regs (and so in pt_regs)");

namespace {

// The region check decodes the whole function: FunctionFlow takes 36 bytes per possible
// instruction (one every 2 bytes), so this bounds it to about 1.2 MiB (okp_seam_alloc_large:
// vmalloc for such sizes).
constexpr unsigned long kMaxFunction = 64 * 1024;
constexpr unsigned int kMaxLabels = 256;
constexpr unsigned int kMaxExtable = 256;
constexpr unsigned int kMaxBugSites = 256;
constexpr usize kMaxTableEdges = 2048;
constexpr usize kMaxHidden = kMaxLabels + kMaxExtable + kMaxTableEdges;
// Jumps out of the function checked against kallsyms; with more, none is taken for a tail call.
constexpr usize kMaxOutside = 64;

// An array from okp_seam_alloc_large (the function's text and the kernel's tables over it: up
// to tens of KiB each), freed with this; the region check runs in process context.
template <typename T>
class SeamArray {
 public:
  explicit SeamArray(usize n)
      : p_(static_cast<T*>(okp_seam_alloc_large(n ? n * sizeof(T) : 1))) {}
  ~SeamArray() { okp_seam_free_large(p_); }
  SeamArray(const SeamArray&) = delete;
  SeamArray& operator=(const SeamArray&) = delete;
  T* get() { return p_; }
  bool ok() const { return p_ != nullptr; }

 private:
  T* p_;
};

bool read_kernel(void*, okp_addr_t addr, u8* out, usize n) {
  return okp_seam_read_nofault(out, addr, n) == 0;
}

// Every direct jump or branch out of the function lands on another function's entry (a
// symbol's start, not a compiler's .cold part of this one): then they are tail calls.
[[gnu::noinline]] bool jumps_out_are_tail_calls(const riscv::FunctionFlow& flow) {
  okp_addr_t targets[kMaxOutside];
  const usize n = flow.outside_targets(targets, kMaxOutside);
  if (n > kMaxOutside) return false;
  for (usize i = 0; i < n; ++i) {
    char name[64];
    okp_addr_t start = 0;
    unsigned long size = 0;
    if (okp_seam_function_at(targets[i], &start, &size, name, sizeof(name)) ||
        start != targets[i] || contains(name, ".cold"))
      return false;
  }
  return true;
}

// The kernel's tables over the function: jump labels and exception-table entries as hidden
// edges (n_hidden of them), BUG/WARN sites.
[[gnu::noinline]] ErrorOr<void> kernel_tables(okp_addr_t start, okp_addr_t end, riscv::HiddenEdge* hidden,
                            usize* n_hidden, okp_addr_t* bugs, usize* n_bugs) {
  SeamArray<okp_addr_t> sites(kMaxLabels), targets(kMaxLabels);
  SeamArray<okp_extable_entry> ex(kMaxExtable);
  if (!sites.ok() || !targets.ok() || !ex.ok())
    return Error(Errno::kNoMem, "not optimized: out of memory for the region check");
  const int labels = okp_riscv_jump_labels_in(start, end, sites.get(), targets.get(), kMaxLabels);
  if (labels < 0)
    return Error(Errno::kNoEnt, "not optimized: this kernel's jump table is not found, so no "
                 "jump label's site or target could be kept out of the region");
  if (static_cast<unsigned int>(labels) > kMaxLabels)
    return Error::formatted(Errno::kNoSpc, "not optimized: the function has %d jump labels, "
                            "more than the %u the check reads", labels, kMaxLabels);
  usize n = 0;
  for (int i = 0; i < labels; ++i) hidden[n++] = {sites.get()[i], targets.get()[i], false};
  const int faults = okp_seam_extable_in(start, end, ex.get(), kMaxExtable);
  if (faults < 0)
    return Error(Errno::kNoEnt, "not optimized: this kernel's exception table is unknown, so no "
                 "fault in the region could be fixed up");
  if (static_cast<unsigned int>(faults) > kMaxExtable)
    return Error::formatted(Errno::kNoSpc, "not optimized: the function has %d exception-table "
                            "entries, more than the %u the check reads", faults, kMaxExtable);
  for (int i = 0; i < faults; ++i) hidden[n++] = {ex.get()[i].insn, ex.get()[i].fixup, false};
  *n_hidden = n;
  const int b = okp_riscv_bug_sites_in(start, end, bugs, kMaxBugSites);
  // Without the BUG table an ebreak is unknown: more registers live, nothing unsafe.
  *n_bugs = b < 0 || static_cast<unsigned int>(b) > kMaxBugSites ? 0 : static_cast<usize>(b);
  return {};
}

// The function decoded twice: first for its jumps out (tail calls?) and its jump tables'
// dispatches, then with the tables' edges; liveness; the region at addr checked.
[[gnu::noinline]] ErrorOr<riscv::DetourRegion> check_region(riscv::FunctionText fn,
                                                            riscv::HiddenEdge* hidden,
                                                            usize cap, okp_addr_t addr,
                                                            usize jump_size) {
  usize n_hidden = fn.n_hidden;
  {
    auto first = riscv::FunctionFlow::decode(fn);
    if (first.is_error()) return first.release_error();
    fn.jumps_out_are_tail_calls = jumps_out_are_tail_calls(first.value());
    n_hidden += riscv::resolve_jump_tables(first.value(), read_kernel, nullptr,
                                           hidden + n_hidden, cap - n_hidden);
  }
  fn.n_hidden = n_hidden;
  auto decoded = riscv::FunctionFlow::decode(fn);
  if (decoded.is_error()) return decoded.release_error();
  riscv::FunctionFlow flow = decoded.release_value();
  if (!flow.compute_liveness())
    return Error(Errno::kInval, "not optimized: the kernel's tables name an address inside the "
                 "function that its decode does not find an instruction at");
  return riscv::check_detour_region(flow, addr, jump_size);
}

}  // namespace

ErrorOr<DetourPlan> plan_detour(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                                RecoverFn recover, okp_addr_t buffer, bool with_post,
                                okp_addr_t site) {
  // The whole function is checked: a branch anywhere in it may land in the region, and a
  // register is dead only over all of its paths.
  if (!func_size) return Error(Errno::kInval, "not optimized: the function's size is unknown");
  if (func_size > kMaxFunction)
    return Error::formatted(Errno::kNoSpc, "not optimized: the function is %lu bytes, more than "
                            "the %lu the region check decodes", func_size, kMaxFunction);
  SeamArray<u8> text(func_size);
  SeamArray<riscv::HiddenEdge> hidden(kMaxHidden);
  SeamArray<okp_addr_t> bugs(kMaxBugSites);
  if (!text.ok() || !hidden.ok() || !bugs.ok())
    return Error(Errno::kNoMem, "not optimized: out of memory for the region check");
  if (okp_seam_read_nofault(text.get(), func_start, func_size))
    return Error(Errno::kFault, "not optimized: the function's text is unreadable");
  recover(func_start, text.get(), func_size);
  usize n_hidden = 0, n_bugs = 0;
  OKP_TRY(kernel_tables(func_start, func_start + func_size, hidden.get(), &n_hidden, bugs.get(),
                        &n_bugs));
  riscv::FunctionText fn{func_start, text.get(), func_size};
  fn.hidden = hidden.get();
  fn.n_hidden = n_hidden;
  fn.bug_sites = bugs.get();
  fn.n_bug_sites = n_bugs;
  // A jal where the buffer is in its reach (4 bytes, no register), else the pair.
  const bool jal = riscv::encode_jal(0, addr, buffer + riscv::kDetourCallOffset) != 0;
  auto region = check_region(fn, hidden.get(), kMaxHidden, addr,
                             jal ? riscv::kJalSize : riscv::kJumpSize);
  if (region.is_error()) return region.release_error();
  const riscv::DetourEnv env{okp_seam_detour_entry(with_post),
                             with_post ? okp_seam_detour_post_entry() : 0};
  auto plan = riscv::plan_detour(region.value(), buffer, env);
  if (plan.is_error()) return plan;
  riscv::set_detour_site(&plan.value(), site);
  return plan;
}

void switch_jumps(JumpSwitch* batch, bool to_jump) {
  constexpr unsigned int kChunk = 16;
  okp_riscv_patch patches[kChunk];
  u8 breakpoint_text[kChunk][kJumpCapacity];  // the breakpoint, then the original's rest
  JumpSwitch* sites[kChunk];
  // Why a switch to the jump was not written (a registration's error names it); switches run
  // under the registry lock, one at a time.
  static char busy_why[160];
  // From a breakpoint that traps to the jump nothing is stopped (text_patch.c says why);
  // every other switch is, and the way back is tried until it is written.
  const bool behind_breakpoints = to_jump && !no_breakpoint_trap();
  JumpSwitch* s = batch;
  while (s) {
    unsigned int n = 0;
    for (; s && n < kChunk; s = s->next, ++n) {
      u8* bp = breakpoint_text[n];
      for (usize i = 0; i < s->jump_size; ++i)
        bp[i] = i < s->breakpoint.size ? s->breakpoint.bytes[i] : s->original[i];
      patches[n] = {s->addr, to_jump ? s->jump : bp, to_jump ? bp : s->jump, s->jump_size, 0,
                    s->breakpoint.size, static_cast<unsigned char>(to_jump && s->jump_size == 8)};
      sites[n] = s;
    }
    busy_why[0] = '\0';
    const int err = behind_breakpoints
                        ? okp_riscv_patch_behind_breakpoints(patches, n)
                        : okp_riscv_patch_stopped(patches, n, to_jump, busy_why, sizeof(busy_why));
    for (unsigned int i = 0; i < n; ++i) {
      sites[i]->failed = err || patches[i].failed;
      sites[i]->busy = err == -static_cast<int>(Errno::kBusy) && busy_why[0] ? busy_why : nullptr;
    }
  }
}

}  // namespace okp::arch
