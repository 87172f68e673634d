// Store: what the gateway's data commands read and write, either a table directly (one key per call, each
// a transaction of its own; Get is one-sided) or inside one fathom::Transaction (several keys atomically:
// MGET, MSET, INCR, DEL of several keys, EXEC).
#ifndef FATHOM_RESP_STORE_H_
#define FATHOM_RESP_STORE_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fathom/client.h"

namespace fathom::resp {

class Store {
 public:
  virtual ~Store() = default;
  // nullopt if the key is absent.
  virtual absl::StatusOr<std::optional<std::string>> Get(std::string_view key) = 0;
  virtual absl::Status Put(std::string_view key, std::string_view value) = 0;
  // Whether the key was there.
  virtual absl::StatusOr<bool> Delete(std::string_view key) = 0;
};

class TableStore final : public Store {
 public:
  explicit TableStore(const Table& table) : table_(table) {}
  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override {
    absl::StatusOr<std::string> value = table_.Get(key);
    if (absl::IsNotFound(value.status())) return std::nullopt;
    if (!value.ok()) return value.status();
    return *std::move(value);
  }
  absl::Status Put(std::string_view key, std::string_view value) override { return table_.Put(key, value); }
  absl::StatusOr<bool> Delete(std::string_view key) override {
    absl::Status s = table_.Delete(key);
    if (absl::IsNotFound(s)) return false;
    if (!s.ok()) return s;
    return true;
  }

 private:
  const Table& table_;
};

class TxnStore final : public Store {
 public:
  TxnStore(Transaction& tx, const Table& table) : tx_(tx), table_(table) {}
  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override {
    absl::StatusOr<std::string> value = tx_.Get(table_, key);
    if (absl::IsNotFound(value.status())) return std::nullopt;
    if (!value.ok()) return value.status();
    return *std::move(value);
  }
  absl::Status Put(std::string_view key, std::string_view value) override { return tx_.Put(table_, key, value); }
  absl::StatusOr<bool> Delete(std::string_view key) override {
    absl::Status s = tx_.Delete(table_, key);
    if (absl::IsNotFound(s)) return false;
    if (!s.ok()) return s;
    return true;
  }

 private:
  Transaction& tx_;
  const Table& table_;
};

}  // namespace fathom::resp

#endif  // FATHOM_RESP_STORE_H_
