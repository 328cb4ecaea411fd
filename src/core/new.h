// SPDX-License-Identifier: GPL-2.0
// Placement new and explicit, context-naming allocation. There is deliberately no global
// operator new/delete in okprobes: an allocation must say whether it may sleep (Gfp), and a
// stray `new T` fails the module link instead of guessing.
#pragma once

#include "seam/kernel_services.h"
#include "core/utility.h"

#if __STDC_HOSTED__
#include <new>  // host tests: the hosted library already declares placement new
#else
inline void* operator new(__SIZE_TYPE__, void* where) noexcept { return where; }
inline void operator delete(void*, void*) noexcept {}
#endif

namespace okp {

enum class Gfp { kKernel = OKP_GFP_KERNEL, kAtomic = OKP_GFP_ATOMIC };

// Returns nullptr when memory is short; the object is constructed in zeroed memory.
template <typename T, typename... Args>
[[nodiscard]] T* make(Gfp gfp, Args&&... args) {
  void* mem = okp_seam_alloc(sizeof(T), static_cast<okp_gfp>(gfp));
  if (!mem) return nullptr;
  return new (mem) T(forward<Args>(args)...);
}

template <typename T>
void destroy(T* obj) {
  if (!obj) return;
  obj->~T();
  okp_seam_free(obj);
}

}  // namespace okp
