// SPDX-License-Identifier: GPL-2.0
#include "probe_arch.h"

#include "arch/x86/decoder.h"

namespace okp::arch {

namespace {

// endbr64, and the poison the kernel writes over sealed (never indirectly called) ones.
bool has_substring(const char* s, const char* part) {
  for (; *s; ++s) {
    usize i = 0;
    while (part[i] && s[i] == part[i]) ++i;
    if (!part[i]) return true;
  }
  return false;
}

bool same(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

// An int3 right after ret/jmp is straight-line-speculation padding (CONFIG_SLS), not a
// breakpoint: the decode may walk over it.
constexpr u8 kJmpRel32Opcode = 0xe9;

bool ends_flow(const char* mnemonic) { return same(mnemonic, "ret") || same(mnemonic, "jmp"); }

// endbr64, and the poison 6.1 writes over sealed (never indirectly called) ones: the 4-byte
// `osp nopl (%rax)`, unique to former ENDBR sites (later kernels use 0f 1f 40 d6).
bool is_landing_pad(const u8* b) {
  return (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa) ||
         (b[0] == 0x66 && b[1] == 0x0f && b[2] == 0x1f && b[3] == 0x00) ||
         (b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x40 && b[3] == 0xd6);
}

}  // namespace

okp_addr_t skip_landing_pad(okp_addr_t addr, okp_addr_t func_start) {
  u8 bytes[4];
  if (addr != func_start || okp_seam_read_nofault(bytes, addr, sizeof(bytes))) return addr;
  return is_landing_pad(bytes) ? addr + 4 : addr;
}

ErrorOr<Plan> check_and_plan(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                             okp_addr_t slot, RecoverFn recover) {
  // Walk instruction by instruction from the function's start through a window of bytes
  // read (and recovered from under breakpoints) ahead. It is refilled only when it no longer
  // holds a whole instruction from pos, not once per instruction: each fill costs a nofault
  // read and a site lookup per byte it could hold, and probing the N-th instruction of a
  // function walks N of them (1000 probes in one 1024-instruction function: half a million
  // steps).
  constexpr usize kWindow = 64;
  u8 window[kWindow];
  okp_addr_t window_start = func_start, window_end = func_start;  // read and recovered
  okp_addr_t pos = func_start, previous = func_start;
  const char* previous_mnemonic = "";
  okp_addr_t func_end = func_size ? func_start + func_size : addr + x86::kMaxInsnLength;
  while (pos < addr) {
    if (window_end < func_end && window_end - pos < x86::kMaxInsnLength) {
      usize fill = func_end - pos < kWindow ? func_end - pos : kWindow;
      if (okp_seam_read_nofault(window, pos, fill))
        return Error::formatted(Errno::kFault, "cannot read the text at %#lx", pos);
      recover(pos, window, fill);
      window_start = pos;
      window_end = pos + fill;
    }
    const u8* at = window + (pos - window_start);
    usize avail = window_end - pos;
    auto insn = x86::decode(at, avail);
    if (insn.is_error())
      return Error::formatted(Errno::kIlSeq,
                              "cannot decode the function from its start: bytes at +%#lx are "
                              "not an instruction", pos - func_start);
    if (at[0] == x86::kInt3 && !ends_flow(previous_mnemonic)) {
      // Someone else's breakpoint hides the original instruction: boundaries after it are
      // unknowable, as for kprobes.
      return Error::formatted(Errno::kBusy,
                              "an int3 at +%#lx (another tool's breakpoint) hides the "
                              "instructions before the probe", pos - func_start);
    }
    if (at[0] == kJmpRel32Opcode && okp_seam_kernel_kprobe_in(pos, 1)) {
      // The kernel's optprobe: its jmp hides the region's first instructions and the rest of
      // the region after it is decoded from inside them (as the kernel's own can_probe() would
      // through okprobes' jump, measured by tests/vm/modules/kk_drift.c mirror=1).
      return Error::formatted(Errno::kBusy,
                              "a kernel kprobe optimized into a jump at +%#lx hides the "
                              "instructions before the probe", pos - func_start);
    }
    previous = pos;
    if (at[0] != x86::kInt3) previous_mnemonic = insn.value().mnemonic;
    pos += insn.value().length;
  }
  if (pos != addr)
    return Error::formatted(Errno::kIlSeq,
                            "+%#lx is not an instruction boundary: the nearest are +%#lx and +%#lx",
                            addr - func_start, previous - func_start, pos - func_start);
  u8 bytes[x86::kMaxInsnLength];
  usize avail = func_end - addr < sizeof(bytes) ? func_end - addr : sizeof(bytes);
  if (okp_seam_read_nofault(bytes, addr, avail))
    return Error::formatted(Errno::kFault, "cannot read the text at %#lx", addr);
  recover(addr, bytes, avail);
  auto plan = x86::plan_insn(addr, bytes, avail, slot);
  if (plan.is_error()) {
    auto d = x86::decode(bytes, avail);
    return Error::formatted(plan.error().code(), "%s (instruction '%s')", plan.error().reason(),
                            d.is_error() ? "?" : d.value().mnemonic);
  }
  return plan;
}

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
    if (!has_substring(name, ".cold")) continue;  // a tail call: another function's entry
    OKP_TRY(check_symbol(start, size, name, "the function's cold part", false, recover,
                         region_start, region_end));
  }
  return {};
}

}  // namespace

ErrorOr<DetourPlan> plan_detour(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                                RecoverFn recover, okp_addr_t buffer, okp_addr_t entry,
                                okp_addr_t post_entry, okp_addr_t site) {
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
                               static_cast<usize>(n), buffer, entry, post_entry);
  if (plan.is_error()) return plan;
  OKP_TRY(check_surroundings(fn, func_start + func_size, recover, addr,
                             addr + plan.value().region_length));
  x86::set_detour_site(&plan.value(), site);
  return plan;
}

}  // namespace okp::arch
