#include "platform/node/control/table_validation.h"

#include "absl/strings/str_cat.h"

namespace fathom::control {

namespace {

// 0 (a default) or min..kMaxTableBuckets.
absl::Status ValidateBuckets(uint64_t buckets, uint64_t min_buckets) {
  if (buckets != 0 && (buckets < min_buckets || buckets > kMaxTableBuckets)) {
    return absl::InvalidArgumentError(absl::StrCat("buckets: ", buckets, " is not in ", min_buckets, "..",
                                                   kMaxTableBuckets));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateCreateTableRequest(const CreateTableRequest& request) {
  if (absl::Status s = ValidateTableName(request.name()); !s.ok()) return s;
  if (request.kind() != TABLE_INDEX_UNSPECIFIED && request.kind() != TABLE_INDEX_HOPSCOTCH &&
      request.kind() != TABLE_INDEX_CUCKOO) {
    return absl::InvalidArgumentError(absl::StrCat("kind: unknown index kind ", request.kind()));
  }
  if (absl::Status s = ValidateBuckets(request.buckets(), request.kind() == TABLE_INDEX_CUCKOO ? 3 : 2); !s.ok()) {
    return s;
  }
  if (request.inline_bytes() > 16384) {
    return absl::InvalidArgumentError(absl::StrCat("inline_bytes: ", request.inline_bytes(), " is over 16384"));
  }
  if (request.max_key_bytes() > UINT16_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("max_key_bytes: ", request.max_key_bytes(), " is over 65535"));
  }
  return absl::OkStatus();
}

absl::Status ValidateResizeTableRequest(const ResizeTableRequest& request) {
  if (absl::Status s = ValidateTableName(request.name()); !s.ok()) return s;
  return ValidateBuckets(request.buckets(), 2);
}

}  // namespace fathom::control
