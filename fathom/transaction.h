// fathom::Transaction: several reads and writes, in one table or several, that commit atomically and
// strictly serializably. Given to the body of Client::Transact (client.h), which commits it when the body
// returns OK and runs the body again on a conflict, so a body must not have effects outside the
// transaction. Reads see the transaction's own writes.
//
//   RETURN_IF_ERROR(client->Transact([&](fathom::Transaction& tx) -> absl::Status {
//     ASSIGN_OR_RETURN(int64_t a, tx.GetInt(accounts, "alice"));
//     RETURN_IF_ERROR(tx.PutInt(accounts, "alice", a - 10));
//     ASSIGN_OR_RETURN(int64_t b, tx.GetInt(accounts, "bob"));
//     return tx.PutInt(accounts, "bob", b + 10);
//   }));
#ifndef FATHOM_FATHOM_TRANSACTION_H_
#define FATHOM_FATHOM_TRANSACTION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fathom/table.h"

namespace fathom {

class Transaction {
 public:
  // NotFound if the key is absent.
  absl::StatusOr<std::string> Get(const Table& table, std::string_view key);
  absl::Status Put(const Table& table, std::string_view key, std::string_view value);
  // NotFound if the key is absent.
  absl::Status Delete(const Table& table, std::string_view key);
  // Integers stored as 8 little-endian bytes; InvalidArgument for a value of another size.
  absl::StatusOr<int64_t> GetInt(const Table& table, std::string_view key);
  absl::Status PutInt(const Table& table, std::string_view key, int64_t value);

  struct Impl;  // internal (fathom/internal.h)
  explicit Transaction(Impl* impl) : impl_(impl) {}
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  Impl* impl_;
};

}  // namespace fathom

#endif  // FATHOM_FATHOM_TRANSACTION_H_
