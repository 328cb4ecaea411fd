// SPDX-License-Identifier: GPL-2.0
// The few <utility>/<type_traits> pieces the core needs (there is no libstdc++ in a module).
#pragma once

namespace okp {

template <typename T> struct RemoveReference { using Type = T; };
template <typename T> struct RemoveReference<T&> { using Type = T; };
template <typename T> struct RemoveReference<T&&> { using Type = T; };

template <typename T>
constexpr typename RemoveReference<T>::Type&& move(T&& v) noexcept {
  return static_cast<typename RemoveReference<T>::Type&&>(v);
}

template <typename T>
constexpr T&& forward(typename RemoveReference<T>::Type& v) noexcept {
  return static_cast<T&&>(v);
}

using usize = __SIZE_TYPE__;
using u8 = __UINT8_TYPE__;
using u16 = __UINT16_TYPE__;
using i32 = __INT32_TYPE__;
using i64 = __INT64_TYPE__;
using u32 = __UINT32_TYPE__;
using u64 = __UINT64_TYPE__;
using uptr = __UINTPTR_TYPE__;

template <typename T>
constexpr T min(T a, T b) { return b < a ? b : a; }

}  // namespace okp
