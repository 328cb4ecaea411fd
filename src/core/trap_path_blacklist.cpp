// SPDX-License-Identifier: GPL-2.0
// Feeds the registry's blacklist with the running kernel's trap path (core/trap_path.h).
#include "core/registry.h"
#include "core/trap_path.h"
#include "seam/core_entries.h"

namespace okp {

namespace {

// The running kernel, through the seam.
struct KernelText {
  bool function_at(okp_addr_t addr, FunctionExtent* out) {
    return okp_seam_function_at(addr, &out->start, &out->size, out->name, sizeof(out->name)) == 0;
  }
  bool read_text(okp_addr_t addr, u8* buf, usize len) {
    return okp_seam_read_nofault(buf, addr, len) == 0;
  }
};

// Far more than any kernel's trap path reaches (tens of functions, hundreds with lockdep); a
// kernel that reaches more has a trap path nobody should probe near anyway.
constexpr usize kMaxTrapPathFunctions = 4096;

}  // namespace

}  // namespace okp

using namespace okp;

extern "C" int okp_core_derive_trap_path(const okp_addr_t* own_entries, unsigned int n_own) {
  constexpr usize kArchRoots = sizeof(arch::kTrapEntryFunctions) / sizeof(arch::kTrapEntryFunctions[0]);
  // Every entry of okprobes' own is a root: one left out would leave the functions only it
  // reaches probeable (a probe there recurses). More than fit is refused, never cut short.
  constexpr unsigned int kMaxOwnEntries = 16;
  if (n_own > kMaxOwnEntries) {
    char line[96];
    okp_seam_format(line, sizeof(line), "trap path: %u entries of okprobes' own, at most %u",
                    n_own, kMaxOwnEntries);
    okp_seam_log(OKP_LOG_ERR, line);
    return to_kernel_errno(Errno::k2Big);
  }
  okp_addr_t roots[kArchRoots + kMaxOwnEntries] = {};
  okp_seam_resolve_functions(arch::kTrapEntryFunctions, roots, kArchRoots);
  usize n = kArchRoots;
  for (unsigned int i = 0; i < n_own; ++i) roots[n++] = own_entries[i];
  for (usize i = 0; i < kArchRoots; ++i) {
    if (roots[i] || !arch::kTrapEntryFunctions[i][0]) continue;
    char line[160];
    okp_seam_format(line, sizeof(line),
                    "trap path: %s is not in this kernel (inlined or not built): walking past it",
                    arch::kTrapEntryFunctions[i]);
    okp_seam_log(OKP_LOG_DEBUG, line);
  }

  KernelText text;
  int added_errors = 0;
  // The walk is breadth first, so its first functions are the ones nearest the trap entry:
  // when it overflows, one of them is the call that opened the way to the rest (a kernel
  // reaches 25 to a few hundred), and naming them says which.
  constexpr usize kShownOnOverflow = 40;
  usize reached = 0;
  constexpr usize kShownLength = 96;
  // Off the stack (the kernel's frame limit); without it the overflow just names fewer.
  auto* first_reached = static_cast<char*>(okp_seam_alloc(kShownOnOverflow * kShownLength, OKP_GFP_KERNEL));
  auto r = walk_trap_path(text, roots, n, kMaxTrapPathFunctions,
                          [&](const FunctionExtent& fn, const FunctionExtent* via) {
                            const char* from = via ? via->name : "the trap entry";
                            if (first_reached && reached < kShownOnOverflow)
                              okp_seam_format(first_reached + reached * kShownLength, kShownLength,
                                              "%s via %s", fn.name, from);
                            ++reached;
                            if (registry().blacklist_add(fn.start, fn.start + fn.size, fn.name,
                                                         "trap path", nullptr, from))
                              ++added_errors;
                          });
  char line[160];
  if (r.is_error()) {
    okp_seam_format(line, sizeof(line), "trap path: %s (%lu functions reached)",
                    r.error().reason(), static_cast<unsigned long>(reached));
    okp_seam_log(OKP_LOG_ERR, line);
    for (usize i = 0; first_reached && i < reached && i < kShownOnOverflow; ++i) {
      okp_seam_format(line, sizeof(line), "trap path: reached %s", first_reached + i * kShownLength);
      okp_seam_log(OKP_LOG_ERR, line);
    }
    okp_seam_free(first_reached);
    return r.error().kernel_errno();
  }
  okp_seam_free(first_reached);
  okp_seam_format(line, sizeof(line), "blacklist: %lu functions on the trap path of this kernel",
                  static_cast<unsigned long>(r.value()));
  okp_seam_log(OKP_LOG_INFO, line);
  return added_errors ? to_kernel_errno(Errno::kNoMem) : 0;
}
