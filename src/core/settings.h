// SPDX-License-Identifier: GPL-2.0
// Global switches of okprobes, owned by the core. Plain atomics: readers are the hit path
// and debugfs; writers are admins through debugfs/sysctl. Constant-initialised, so no static
// constructor exists for them.
#pragma once

namespace okp {

class Settings {
 public:
  // Whether probes are armed at all (debugfs `enabled`); each probe's own disabled state is
  // separate and survives a global disarm/re-arm.
  bool armed() const { return __atomic_load_n(&armed_, __ATOMIC_ACQUIRE); }
  void set_armed(bool v) { __atomic_store_n(&armed_, v, __ATOMIC_RELEASE); }
  // Called (writer context, may sleep) after `armed` changed, so the probe table can patch
  // text to match. Set once at core init; null in host tests that have no probe table.
  void (*armed_observer)(bool armed) = nullptr;
  // Whether jump optimization may be used (sysctl debug.okprobes-optimization).
  bool optimization() const { return __atomic_load_n(&optimization_, __ATOMIC_ACQUIRE); }
  void set_optimization(bool v) { __atomic_store_n(&optimization_, v, __ATOMIC_RELEASE); }
  // Called (writer context, may sleep) after `optimization` changed: the probe table
  // unoptimizes or re-queues its sites. Set once at core init, as armed_observer.
  void (*optimization_observer)(bool enabled) = nullptr;
  // Why optimization may not be turned off now (nullptr: it may): where no breakpoint reaches
  // okprobes, a probe is a jump or nothing. Set once at core init, as the observers.
  const char* (*optimization_veto)() = nullptr;

 private:
  bool armed_ = true;
  bool optimization_ = true;
};

Settings& settings();

}  // namespace okp
