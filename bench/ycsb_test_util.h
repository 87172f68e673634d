// Test helpers: runs the //bench:ycsb binary (from the runfiles) and reads its YCSB-format report.
#ifndef FATHOM_BENCH_YCSB_TEST_UTIL_H_
#define FATHOM_BENCH_YCSB_TEST_UTIL_H_

#include <sys/wait.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "platform/base/runfiles.h"
#include "tests/util/subprocess.h"

namespace fathom::testing {

struct Output {
  int exit_code = -1;
  // "<phase> <[SECTION], Metric>" -> value, e.g. "run [READ], Return=OK" -> "503".
  std::map<std::string, std::string> values;
  std::string text;
};

// Runs the driver with `args` and parses its stdout; a 60 s silence ends the wait.
inline Output RunYcsb(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {RunfilePath("bench/ycsb")};
  argv.insert(argv.end(), args.begin(), args.end());
  Output output;
  auto child = Subprocess::Start(argv);
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return output;
  std::string phase;
  while (true) {
    absl::StatusOr<std::string> line = (*child)->ReadLine(absl::Seconds(60));
    if (!line.ok()) break;  // stdout closed: the driver is done (or a 60 s stall, which fails below)
    output.text += *line + "\n";
    if (absl::StartsWith(*line, "# ")) {
      phase = std::vector<std::string>(absl::StrSplit(*line, ' '))[1];
      continue;
    }
    const size_t last_comma = line->rfind(", ");
    if (last_comma != std::string::npos) output.values[phase + " " + line->substr(0, last_comma)] = line->substr(last_comma + 2);
  }
  absl::StatusOr<int> status = (*child)->Wait(absl::Seconds(30));
  EXPECT_TRUE(status.ok()) << status.status();
  if (status.ok() && WIFEXITED(*status)) output.exit_code = WEXITSTATUS(*status);
  return output;
}

inline int64_t Count(const Output& output, const std::string& key) {
  auto it = output.values.find(key);
  if (it == output.values.end()) return 0;
  int64_t n = 0;
  EXPECT_TRUE(absl::SimpleAtoi(it->second, &n)) << key << " = " << it->second;
  return n;
}

}  // namespace fathom::testing

#endif  // FATHOM_BENCH_YCSB_TEST_UTIL_H_
