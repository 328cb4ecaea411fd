// SPDX-License-Identifier: GPL-2.0
// What a registration would do, without registering (debugfs `explain`): the same location,
// blacklist and site checks as register_probe (create_site's dry run), then how the probe
// would run, or the refusal a registration would give, word for word.
#include "core/registry.h"

#include "core/optimizer/jump_optimizer.h"
#include "core/string.h"
#include "seam/core_entries.h"

namespace okp {

namespace {

// How a site's hit runs its instruction, for a breakpoint site.
const char* execution_of(const Site& s) {
  if (!arch::needs_slot(s.plan)) return "emulated in the trap";
  if (s.boost_slot) return "boosted (run from a slot, no second trap)";
  return "single-stepped from a slot";
}

}  // namespace

void Registry::discard_trial_site(Locked lock, Site& site) {
  // Never published nor written: its slots are free at once.
  ProbeTable& t = table(lock);
  if (site.step_slot) t.slots.release(site.step_slot);
  if (site.boost_slot) t.slots.release(site.boost_slot);
  destroy(&site);
}

int Registry::explain(const char* symbol, okp_addr_t addr, unsigned int offset, char* out,
                      usize out_len) {
  okp_kprobe kp = {};
  kp.symbol_name = symbol;
  kp.addr = reinterpret_cast<okp_kprobe_opcode_t*>(addr);
  kp.offset = offset;
  char what[64];  // as debugfs `refused` names a request
  if (symbol)
    okp_seam_format(what, sizeof(what), "%s+%#x", symbol, offset);
  else
    okp_seam_format(what, sizeof(what), "%#lx+%#x", addr, offset);
  RegistryGuard guard;
  okp_addr_t at = 0;
  okp_text_info info = {};
  auto located = locate_probe(guard, &kp, false, &at, &info);
  if (located.is_error()) {
    okp_seam_format(out, out_len, "refused %s (%d): %s", what, located.error().kernel_errno(),
                    located.error().reason());
    return located.error().kernel_errno();
  }
  char place[96];
  okp_seam_format(place, sizeof(place), "%s+%#lx%s%s%s at %#lx", info.symbol,
                  at - info.func_start, info.module_name[0] ? " [" : "", info.module_name,
                  info.module_name[0] ? "]" : "", at);
  if (const Site* s = table(guard).sites.find(at)) {
    okp_seam_format(out, out_len, "accepted %s: joins the probes already there%s", place,
                    s->gone() ? " (gone: its text was unloaded)" : "");
    return 0;
  }
  auto trial = create_site(guard, at, info, &kp, SiteTrial::kDryRun);
  if (trial.is_error()) {
    okp_seam_format(out, out_len, "refused %s (%d): %s", what, trial.error().kernel_errno(),
                    trial.error().reason());
    return trial.error().kernel_errno();
  }
  Site& site = *trial.value();
  if (site.ftrace()) {
    okp_seam_format(out, out_len, "accepted %s: function entry through ftrace (no breakpoint)",
                    place);
  } else {
    char jump[OKP_REASON_MAX] = "";
    bool jump_only = false;
    if constexpr (arch::kJumpProbes) {
      jump_optimizer().explain(guard, site, jump, sizeof(jump));
      jump_only = jump_optimizer().jump_only();
    }
    if (jump_only && !starts_with(jump, "optimized")) {
      // No breakpoint reaches okprobes on this kernel: a site is its jump or refused, in the
      // words attach() gives.
      const int err = to_kernel_errno(Errno::kOpNotSupp);
      okp_seam_format(out, out_len,
                      "refused %s (%d): no breakpoint on this kernel, and no jump: %s", what, err,
                      jump);
      discard_trial_site(guard, site);
      return err;
    }
    if (jump_only)
      okp_seam_format(out, out_len, "accepted %s: %s, served by its jump alone (no breakpoint "
                      "on this kernel)", place, jump);
    else
      okp_seam_format(out, out_len, "accepted %s: breakpoint on %s, %s%s%s", place,
                      arch::mnemonic(site.plan), execution_of(site), jump[0] ? "; " : "", jump);
  }
  discard_trial_site(guard, site);
  return 0;
}

}  // namespace okp

extern "C" int okp_core_explain(const char* symbol, okp_addr_t addr, unsigned int offset,
                                char* out, unsigned long out_len) {
  return okp::registry().explain(symbol, addr, offset, out, out_len);
}
