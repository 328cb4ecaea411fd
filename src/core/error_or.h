// SPDX-License-Identifier: GPL-2.0
// Error flow for the core: Error carries an errno and the human-readable reason that
// okp_kprobe_reason(), the log and debugfs show later, either static text or formatted into
// the Error itself (Error::formatted): one channel, no parallel reason buffer. ErrorOr<T> is a
// value or an Error. OKP_TRY propagates an error to the caller, like SerenityOS' TRY().
//
// An Error is ~180 bytes: errors travel on registration paths only (process context; the
// deepest registration chain's frames add up to ~5 KiB), and functions with many refusals are
// split so their Errors do not pile up in one frame. The hit path only asks is_error() of an
// ErrorOr<void>, whose success constructs no Error.
#pragma once

#include "core/errno.h"
#include "core/new.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp {

class [[nodiscard]] Error {
 public:
  static constexpr usize kReasonMax = 160;  // OKP_REASON_MAX
  // Static text: valid for the life of the module.
  Error(Errno code, const char* reason) : code_(code), static_(reason) { text_[0] = '\0'; }
  // Formatted now, kept in the Error (core/error.cpp: one out-of-line copy).
  [[gnu::format(printf, 2, 3)]] static Error formatted(Errno code, const char* fmt, ...);
  Errno code() const { return code_; }
  int kernel_errno() const { return to_kernel_errno(code_); }
  const char* reason() const { return text_[0] || !static_ ? text_ : static_; }

 private:
  Errno code_;
  const char* static_;
  char text_[kReasonMax];
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
  ErrorOr() : has_error_(false) {}  // success constructs no Error (the hit path's case)
  ErrorOr(Error error) : has_error_(true) { new (&storage_.error) Error(error); }
  ErrorOr(ErrorOr&& other) : has_error_(other.has_error_) {
    if (has_error_) new (&storage_.error) Error(other.storage_.error);
  }
  ErrorOr(const ErrorOr&) = delete;
  ErrorOr& operator=(const ErrorOr&) = delete;
  bool is_error() const { return has_error_; }
  const Error& error() const { return storage_.error; }
  void release_value() {}
  Error release_error() { return storage_.error; }

 private:
  union Storage {
    Storage() {}
    Error error;
  } storage_;
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
