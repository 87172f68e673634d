// Translation of UCX status codes into absl::Status.
#ifndef FATHOM_PLATFORM_FABRIC_UCX_UCX_STATUS_H_
#define FATHOM_PLATFORM_FABRIC_UCX_UCX_STATUS_H_

#include <ucs/type/status.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fathom::fabric::ucx_internal {

inline absl::Status FromUcs(ucs_status_t status, const char* what) {
  if (status == UCS_OK) return absl::OkStatus();
  std::string message = absl::StrCat(what, ": ", ucs_status_string(status));
  switch (status) {
    case UCS_ERR_NO_MEMORY:
    case UCS_ERR_NO_RESOURCE:
    case UCS_ERR_EXCEEDS_LIMIT:
      return absl::ResourceExhaustedError(message);
    case UCS_ERR_INVALID_PARAM:
    case UCS_ERR_INVALID_ADDR:
    case UCS_ERR_UNSUPPORTED:
      return absl::InvalidArgumentError(message);
    case UCS_ERR_TIMED_OUT:
    case UCS_ERR_ENDPOINT_TIMEOUT:
      return absl::DeadlineExceededError(message);
    case UCS_ERR_NO_ELEM:
    case UCS_ERR_NO_DEVICE:
      return absl::NotFoundError(message);
    default:
      // Peer failure, connection reset, cancellation, unreachable: the peer may be gone.
      return absl::UnavailableError(message);
  }
}

}  // namespace fathom::fabric::ucx_internal

#endif  // FATHOM_PLATFORM_FABRIC_UCX_UCX_STATUS_H_
