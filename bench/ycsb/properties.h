// Properties: YCSB's configuration, a flat string map read from Java-style .properties files and
// overridden by `-p key=value`. Typed getters return an error (never a silent default) when a value is
// present but malformed.
//
//   Properties props;
//   RETURN_IF_ERROR(props.LoadFile("bench/workloads/workloada"));
//   RETURN_IF_ERROR(props.SetFromAssignment("recordcount=5000"));
//   ASSIGN_OR_RETURN(int64_t records, props.GetInt("recordcount", 0));
#ifndef FATHOM_BENCH_YCSB_PROPERTIES_H_
#define FATHOM_BENCH_YCSB_PROPERTIES_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fathom::ycsb {

class Properties {
 public:
  // Parses .properties text: one `key=value` (or `key:value`, or `key value`) per line; blank lines and
  // lines starting with '#' or '!' are ignored; key and value are trimmed. Later lines win.
  // Java's backslash line continuations and escapes are not supported (YCSB's workload files use none).
  absl::Status ParseText(std::string_view text);
  absl::Status LoadFile(const std::string& path);
  // "key=value", as given to `-p`.
  absl::Status SetFromAssignment(std::string_view assignment);

  void Set(const std::string& key, const std::string& value) { values_[key] = value; }
  bool Has(const std::string& key) const { return values_.count(key) > 0; }

  std::string GetString(const std::string& key, const std::string& default_value) const;
  absl::StatusOr<int64_t> GetInt(const std::string& key, int64_t default_value) const;
  absl::StatusOr<double> GetDouble(const std::string& key, double default_value) const;
  // Accepts true/false (any case), like Java's Boolean.parseBoolean but strict about anything else.
  absl::StatusOr<bool> GetBool(const std::string& key, bool default_value) const;

  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_PROPERTIES_H_
