// Status helpers: errors are values (absl::Status / absl::StatusOr); no exceptions cross our APIs.
#ifndef FATHOM_PLATFORM_BASE_STATUS_MACROS_H_
#define FATHOM_PLATFORM_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

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

#endif  // FATHOM_PLATFORM_BASE_STATUS_MACROS_H_
