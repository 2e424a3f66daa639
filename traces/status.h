// Status: errors as values. A non-OK status carries one line naming what is wrong
// (the file, field or value at fault), fit to print as the program's only error line.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace autotune {

class Status {
 public:
  enum class Code { kOk = 0, kInvalidArgument, kNotFound, kIoError, kCorruption, kInternal,
                    kNotSupported, kAborted };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return {Code::kInvalidArgument, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status IoError(std::string msg) { return {Code::kIoError, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status Internal(std::string msg) { return {Code::kInternal, std::move(msg)}; }
  static Status NotSupported(std::string msg) { return {Code::kNotSupported, std::move(msg)}; }
  static Status Aborted(std::string msg) { return {Code::kAborted, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // The one-line message; empty when ok().
  const std::string& message() const { return message_; }
  // Returns a copy whose message is "prefix: message".
  Status WithPrefix(const std::string& prefix) const {
    return ok() ? *this : Status(code_, prefix + ": " + message_);
  }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // REQUIRES: ok().
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

#define AUTOTUNE_RETURN_IF_ERROR(expr)      \
  do {                                      \
    ::autotune::Status _st = (expr);        \
    if (!_st.ok()) return _st;              \
  } while (0)

}  // namespace autotune
