// SPDX-License-Identifier: GPL-2.0
// x86-64's jump probes: the region check and detour planning of the jump contract
// (arch/jump_contract.h), over the whole function, its exception-table entries and its
// neighbours' branches. The region check and relocator themselves are arch/x86/detour*.cpp.
#include "jump_probe_arch.h"

#include "arch/x86/decoder.h"
#include "core/string.h"
#include "seam/jump_services.h"

namespace okp::arch {

namespace {

// The function's text and exception-table entries, for one region check (freed with it).
class CheckBuffer {
 public:
  static constexpr unsigned int kMaxExtable = 256;
  explicit CheckBuffer(usize text_bytes)
      : text_bytes_(text_bytes),
        mem_(static_cast<u8*>(okp_seam_alloc(text_bytes + kMaxExtable * sizeof(okp_extable_entry),
                                             OKP_GFP_KERNEL))) {}
  ~CheckBuffer() { okp_seam_free(mem_); }
  CheckBuffer(const CheckBuffer&) = delete;
  CheckBuffer& operator=(const CheckBuffer&) = delete;
  u8* text() { return mem_; }
  okp_extable_entry* extable() { return reinterpret_cast<okp_extable_entry*>(mem_ + text_bytes_); }

 private:
  usize text_bytes_;
  u8* mem_;
};
static_assert(sizeof(x86::ExtableEntry) == sizeof(okp_extable_entry) &&
              __builtin_offsetof(x86::ExtableEntry, fixup) == __builtin_offsetof(okp_extable_entry, fixup),
              "the seam's exception-table entry is x86::ExtableEntry");

// Another symbol's text, read for the checks around the function (okprobes' breakpoints
// recovered), freed with this.
class ForeignText {
 public:
  ForeignText(okp_addr_t start, unsigned long size, RecoverFn recover)
      : start_(start), size_(size),
        bytes_(static_cast<u8*>(okp_seam_alloc(size ? size : 1, OKP_GFP_KERNEL))) {
    if (bytes_ && okp_seam_read_nofault(bytes_, start, size)) {
      okp_seam_free(bytes_);
      bytes_ = nullptr;
    }
    if (bytes_) recover(start, bytes_, size);
  }
  ~ForeignText() { okp_seam_free(bytes_); }
  ForeignText(const ForeignText&) = delete;
  ForeignText& operator=(const ForeignText&) = delete;
  bool ok() const { return bytes_ != nullptr; }
  // Its code: the extent less a section's zero fill (x86::code_size).
  x86::FunctionText text() const {
    x86::FunctionText t{start_, bytes_, size_};
    t.size = x86::code_size(t);
    return t;
  }

 private:
  okp_addr_t start_;
  unsigned long size_;
  u8* bytes_;
};

constexpr unsigned long kMaxFunction = 64 * 1024;

// One symbol around the function: none of its direct branches may land inside the region.
// before: it is the symbol just before, which must not run on into the function (then the
// function's symbol is an inner label and its extent unknown).
[[gnu::noinline]] ErrorOr<void> check_symbol(okp_addr_t start, unsigned long size, const char* name,
                                             const char* where, bool before, RecoverFn recover,
                                             okp_addr_t region_start, okp_addr_t region_end) {
  if (size > kMaxFunction)
    return Error::formatted(Errno::kNoSpc, "not optimized: %s (%s) is %lu bytes, more than the "
                            "check decodes", name, where, size);
  ForeignText other(start, size, recover);
  if (!other.ok())
    return Error::formatted(Errno::kFault, "not optimized: cannot read %s (%s)", name, where);
  if (before && x86::runs_on_past_end(other.text()))
    return Error::formatted(Errno::kInval, "not optimized: %s runs on into the function: its "
                            "symbol is an inner label, its extent unknown", name);
  auto from = x86::foreign_branch_into(other.text(), region_start, region_end);
  if (from.is_error())
    return Error::formatted(Errno::kIlSeq, "not optimized: %s (%s) does not decode: %s", name,
                            where, from.error().reason());
  if (from.value())
    return Error::formatted(Errno::kInval, "not optimized: %s+%#lx (%s) jumps into the region",
                            name, from.value() - start, where);
  return {};
}

// The symbols next to the function, and the ones its jumps leave for (its .cold part).
// extent_end: where the function's symbol ends (the symbol after starts there), which fn's
// code (x86::code_size) may stop short of.
ErrorOr<void> check_surroundings(const x86::FunctionText& fn, okp_addr_t extent_end,
                                 RecoverFn recover, okp_addr_t region_start,
                                 okp_addr_t region_end) {
  char name[64];
  okp_addr_t start = 0;
  unsigned long size = 0;
  if (!okp_seam_function_at(fn.start - 1, &start, &size, name, sizeof(name)) &&
      start + size == fn.start)
    OKP_TRY(check_symbol(start, size, name, "the symbol before", true, recover, region_start,
                         region_end));
  if (!okp_seam_function_at(extent_end, &start, &size, name, sizeof(name)) && start == extent_end)
    OKP_TRY(check_symbol(start, size, name, "the symbol after", false, recover, region_start,
                         region_end));
  okp_addr_t targets[8];
  const usize n = x86::outside_jump_targets(fn, targets, sizeof(targets) / sizeof(targets[0]));
  for (usize i = 0; i < n; ++i) {
    if (okp_seam_function_at(targets[i], &start, &size, name, sizeof(name))) continue;
    if (!contains(name, ".cold")) continue;  // a tail call: another function's entry
    OKP_TRY(check_symbol(start, size, name, "the function's cold part", false, recover,
                         region_start, region_end));
  }
  return {};
}

}  // namespace

ErrorOr<DetourPlan> plan_detour(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                                RecoverFn recover, okp_addr_t buffer, bool with_post,
                                okp_addr_t site) {
  // The whole function is checked: a branch anywhere in it may land in the region.
  if (!func_size)
    return Error(Errno::kInval, "not optimized: the function's size is unknown");
  if (func_size > kMaxFunction)
    return Error::formatted(Errno::kNoSpc, "not optimized: the function is %lu bytes, more than "
                            "the %lu the region check decodes", func_size, kMaxFunction);
  CheckBuffer check(func_size);
  if (!check.text()) return Error(Errno::kNoMem, "not optimized: out of memory for the region check");
  if (okp_seam_read_nofault(check.text(), func_start, func_size))
    return Error(Errno::kFault, "not optimized: the function's text is unreadable");
  recover(func_start, check.text(), func_size);
  const int n = okp_seam_extable_in(func_start, func_start + func_size, check.extable(),
                                    CheckBuffer::kMaxExtable);
  if (n < 0)
    return Error(Errno::kNoEnt, "not optimized: this kernel's exception table is unknown, so no "
                 "fault in the region could be fixed up");
  if (static_cast<unsigned int>(n) > CheckBuffer::kMaxExtable)
    return Error::formatted(Errno::kNoSpc, "not optimized: the function has %d exception-table "
                            "entries, more than the %u the check reads", n, CheckBuffer::kMaxExtable);
  okp_addr_range thunk_ranges[x86::kMaxThunkRanges];
  const unsigned int n_thunks = okp_seam_indirect_thunks(thunk_ranges, x86::kMaxThunkRanges);
  x86::AddrRange thunks[x86::kMaxThunkRanges];
  for (unsigned int i = 0; i < n_thunks; ++i) thunks[i] = {thunk_ranges[i].start, thunk_ranges[i].end};
  x86::FunctionText fn{func_start, check.text(), func_size, thunks, n_thunks};
  fn.size = x86::code_size(fn);
  auto plan = x86::plan_detour(fn, addr, reinterpret_cast<const x86::ExtableEntry*>(check.extable()),
                               static_cast<usize>(n), buffer, okp_seam_detour_entry(with_post),
                               with_post ? okp_seam_detour_post_entry() : 0);
  if (plan.is_error()) return plan;
  OKP_TRY(check_surroundings(fn, func_start + func_size, recover, addr,
                             addr + plan.value().region_length));
  x86::set_detour_site(&plan.value(), site);
  return plan;
}

void switch_jumps(JumpSwitch* batch, bool to_jump) {
  okp_seam_text_lock();
  for (JumpSwitch* s = batch; s; s = s->next) {  // stage 1: all but the first byte, or the int3
    const usize tail = s->jump_size - 1;
    const int err = to_jump ? okp_seam_poke_text(s->addr + 1, s->jump + 1, s->original + 1, tail)
                            : okp_seam_poke_text(s->addr, s->breakpoint.bytes, s->jump,
                                                 s->breakpoint.size);
    s->failed = err != 0;
  }
  okp_seam_text_sync();
  for (JumpSwitch* s = batch; s; s = s->next) {  // stage 2: the first byte, or the rest
    if (s->failed) continue;
    const usize tail = s->jump_size - 1;
    const int err = to_jump ? okp_seam_poke_text(s->addr, s->jump, s->breakpoint.bytes,
                                                 s->breakpoint.size)
                            : okp_seam_poke_text(s->addr + 1, s->original + 1, s->jump + 1, tail);
    if (err) okp_seam_invariant_failed("a jump site's text changed mid-switch", __FILE__, __LINE__);
  }
  okp_seam_text_sync();
  okp_seam_text_unlock();
}

}  // namespace okp::arch
