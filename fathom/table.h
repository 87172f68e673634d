// fathom::Table: a key-value table of the cluster (byte-string keys and values), opened through a
// fathom::Client (client.h). Copies share the same table; a Table must not outlive its Client.
//
//   ASSIGN_OR_RETURN(fathom::Table users, client->OpenTable("users"));
//   RETURN_IF_ERROR(users.Put("alice", "42"));          // a replicated transaction, retried on conflict
//   absl::StatusOr<std::string> v = users.Get("alice");  // one-sided and lock-free; NotFound if absent
//   RETURN_IF_ERROR(users.Delete("alice"));             // NotFound if absent
//
// Errors: InvalidArgument for an empty or oversized key or value, NotFound for a missing key, Aborted when
// a write kept conflicting, Unavailable when a node stayed unreachable (each call is tried again through a
// failure the cluster recovers from, for ClientOptions::retry_deadline), ResourceExhausted when the table
// is full. A Delete tried again after an attempt that may have deleted the key, and then finding it gone,
// says OK. A Put or Delete that failed in the end may still have taken effect if MayHaveCommitted (client.h)
// says so of its error.
#ifndef FATHOM_FATHOM_TABLE_H_
#define FATHOM_FATHOM_TABLE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fathom {

class Table {
 public:
  absl::StatusOr<std::string> Get(std::string_view key) const;
  absl::Status Put(std::string_view key, std::string_view value) const;
  absl::Status Delete(std::string_view key) const;
  const std::string& name() const;

  struct Impl;  // internal (fathom/internal.h)
  explicit Table(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace fathom

#endif  // FATHOM_FATHOM_TABLE_H_
