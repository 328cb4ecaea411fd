// SPDX-License-Identifier: GPL-2.0
// Deliberately has a dynamic initialiser: the okprobes C++ rule must reject this object.
extern "C" int okp_ctor_probe_value(void);
struct NeedsConstructor {
  NeedsConstructor() : value(okp_ctor_probe_value()) {}
  int value;
};
NeedsConstructor g_needs_constructor;
extern "C" int okp_ctor_probe_value(void) { return g_needs_constructor.value + 1; }
