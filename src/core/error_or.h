// SPDX-License-Identifier: GPL-2.0
// Error flow for the core: Error carries an errno and a static, human-readable reason (the
// text that okp_kprobe_reason() and debugfs show later); ErrorOr<T> is a value or an Error.
// OKP_TRY propagates an error to the caller, like SerenityOS' TRY().
#pragma once

#include "core/errno.h"
#include "core/new.h"
#include "core/utility.h"

namespace okp {

class [[nodiscard]] Error {
 public:
  constexpr Error(Errno code, const char* reason) : code_(code), reason_(reason) {}
  constexpr Errno code() const { return code_; }
  constexpr int kernel_errno() const { return to_kernel_errno(code_); }
  // Static storage: valid for the life of the module.
  constexpr const char* reason() const { return reason_; }

 private:
  Errno code_;
  const char* reason_;
};

template <typename T>
class [[nodiscard]] ErrorOr {
 public:
  ErrorOr(const T& value) : has_value_(true) { new (&storage_.value) T(value); }
  ErrorOr(T&& value) : has_value_(true) { new (&storage_.value) T(move(value)); }
  ErrorOr(Error error) : has_value_(false) { new (&storage_.error) Error(error); }
  ErrorOr(ErrorOr&& other) : has_value_(other.has_value_) {
    if (has_value_)
      new (&storage_.value) T(move(other.storage_.value));
    else
      new (&storage_.error) Error(other.storage_.error);
  }
  ErrorOr(const ErrorOr&) = delete;
  ErrorOr& operator=(const ErrorOr&) = delete;
  ~ErrorOr() {
    if (has_value_) storage_.value.~T();
  }

  bool is_error() const { return !has_value_; }
  const Error& error() const { return storage_.error; }
  T& value() { return storage_.value; }
  const T& value() const { return storage_.value; }
  T release_value() { return move(storage_.value); }
  Error release_error() { return storage_.error; }

 private:
  union Storage {
    Storage() {}
    ~Storage() {}
    T value;
    Error error;
  } storage_;
  bool has_value_;
};

template <>
class [[nodiscard]] ErrorOr<void> {
 public:
  ErrorOr() : error_(Errno::kInval, nullptr), has_error_(false) {}
  ErrorOr(Error error) : error_(error), has_error_(true) {}
  bool is_error() const { return has_error_; }
  const Error& error() const { return error_; }
  void release_value() {}
  Error release_error() { return error_; }

 private:
  Error error_;
  bool has_error_;
};

// 0 or the negative errno: for the C API boundary.
template <typename T>
int to_kernel_result(const ErrorOr<T>& r) {
  return r.is_error() ? r.error().kernel_errno() : 0;
}

}  // namespace okp

// Evaluates expr (an ErrorOr); on error returns it from the enclosing function, else yields
// the value. A GNU statement expression, as in the kernel and SerenityOS.
#define OKP_TRY(expr)                                  \
  ({                                                   \
    auto _okp_try_result = (expr);                     \
    if (_okp_try_result.is_error())                    \
      return _okp_try_result.release_error();          \
    _okp_try_result.release_value();                   \
  })
