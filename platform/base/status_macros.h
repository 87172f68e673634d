// Status helpers: errors are values (absl::Status / absl::StatusOr); no exceptions cross our APIs.
#ifndef FATHOM_PLATFORM_BASE_STATUS_MACROS_H_
#define FATHOM_PLATFORM_BASE_STATUS_MACROS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

#define FATHOM_CONCAT_INNER_(a, b) a##b
#define FATHOM_CONCAT_(a, b) FATHOM_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::absl::Status fathom_status_ = (expr);    \
    if (!fathom_status_.ok()) return fathom_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, StatusOrExpr());` assigns the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(FATHOM_CONCAT_(fathom_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(tmp).value()

namespace fathom {

// A copy of `status` that shares no memory with it: code, message and payloads (such as
// txn::MayHaveCommitted's mark) copied byte for byte. For a status handed to another thread: the shared
// representation's reference count is touched inside Debian's Abseil, where ThreadSanitizer cannot see
// it, so a rep shared by two threads looks racy.
inline absl::Status UnsharedCopy(const absl::Status& status) {
  if (status.ok()) return absl::OkStatus();
  absl::Status copy(status.code(), std::string(status.message()));
  status.ForEachPayload([&copy](absl::string_view type_url, const absl::Cord& payload) {
    copy.SetPayload(std::string(type_url), absl::Cord(std::string(payload)));
  });
  return copy;
}

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_STATUS_MACROS_H_
