// Backend: the store a YCSB client thread drives (YCSB's site.ycsb.DB). One instance per client thread,
// never shared: Init() runs on that thread before its first operation and Cleanup() after its last, so an
// implementation may keep a connection or other per-thread state without locking.
//
// Every operation returns an absl::Status; the driver counts it as YCSB's Return=<code> (see
// ReturnCodeOf): OK, NOT_FOUND (absl NotFound), NOT_IMPLEMENTED (absl Unimplemented), ERROR (anything else).
// A backend never throws or aborts on a server error; it returns one.
//
//   std::unique_ptr<Backend> db = ...;
//   RETURN_IF_ERROR(db->Init());
//   Record out;
//   absl::Status s = db->Read("usertable", "user6284781860667377211", /*fields=*/nullptr, &out);
//
// Scan is optional (memcached has none): a backend without it reports NOT_IMPLEMENTED, as YCSB does.
#ifndef FATHOM_BENCH_YCSB_BACKEND_H_
#define FATHOM_BENCH_YCSB_BACKEND_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fathom::ycsb {

// A record: field name -> value. Ordered, so encodings and comparisons are deterministic.
using Record = std::map<std::string, std::string>;
// A list of field names to read; nullptr means all fields.
using FieldList = std::vector<std::string>;

class Backend {
 public:
  virtual ~Backend() = default;

  virtual absl::Status Init() { return absl::OkStatus(); }
  virtual absl::Status Cleanup() { return absl::OkStatus(); }

  // Fills `result` with the requested fields of `key` (all of them when `fields` is null).
  // NotFound if the key does not exist.
  virtual absl::Status Read(const std::string& table, const std::string& key, const FieldList* fields,
                            Record* result) = 0;
  // Up to `count` records in key order starting at `start_key`. Optional: the default is Unimplemented.
  virtual absl::Status Scan(const std::string& table, const std::string& start_key, int64_t count,
                            const FieldList* fields, std::vector<Record>* result) {
    return absl::UnimplementedError("scan not supported by this backend");
  }
  // Replaces the given fields of an existing record, leaving the others alone.
  virtual absl::Status Update(const std::string& table, const std::string& key, const Record& values) = 0;
  // Writes a whole record (overwriting one with the same key).
  virtual absl::Status Insert(const std::string& table, const std::string& key, const Record& values) = 0;
  virtual absl::Status Delete(const std::string& table, const std::string& key) = 0;
  // The bank's operation (not YCSB's): atomically moves `amount` from the "balance" field of `from` to
  // that of `to` (balances may go negative), leaving their other fields alone. Optional: the default is
  // Unimplemented (memcached has no multi-key transactions).
  virtual absl::Status Transfer(const std::string& table, const std::string& from, const std::string& to,
                                int64_t amount) {
    return absl::UnimplementedError("transfer (a multi-key transaction) not supported by this backend");
  }
};

// The bank's balance field, and the checks every backend's Transfer shares.
inline constexpr char kBalanceField[] = "balance";
// The balance in `record` (DataLoss naming `key` if it has none or it is not an integer).
absl::StatusOr<int64_t> BalanceOf(const Record& record, const std::string& key);
// Moves `amount` between two records' balances (DataLoss if either has no valid balance).
absl::Status ApplyTransfer(Record& from, const std::string& from_key, Record& to, const std::string& to_key,
                           int64_t amount);

// YCSB's Status codes that this driver reports.
enum class ReturnCode { kOk, kNotFound, kNotImplemented, kError };
inline constexpr int kReturnCodeCount = 4;

ReturnCode ReturnCodeOf(const absl::Status& status);

// The fields of `record` named in `fields` (all of them when `fields` is null), for backends that store
// whole records.
Record ProjectFields(Record record, const FieldList* fields);
// "OK", "NOT_FOUND", "NOT_IMPLEMENTED", "ERROR", as YCSB prints them after "Return=".
const char* ReturnCodeName(ReturnCode code);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_BACKEND_H_
