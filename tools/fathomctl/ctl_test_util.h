// Test helper: runs the fathomctl binary (from the runfiles) and captures its exit code and output.
#ifndef FATHOM_TOOLS_FATHOMCTL_CTL_TEST_UTIL_H_
#define FATHOM_TOOLS_FATHOMCTL_CTL_TEST_UTIL_H_

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/util/subprocess.h"

namespace fathom::fathomctl::testing {

struct CtlResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs fathomctl with `args` through /bin/sh so that stderr is captured too.
inline CtlResult RunCtl(const std::vector<std::string>& args, absl::Duration timeout = absl::Seconds(30)) {
  std::string command = absl::StrCat("'", ::fathom::testing::RunfilePath("tools/fathomctl/fathomctl"), "'");
  for (const std::string& a : args) absl::StrAppend(&command, " '", a, "'");
  absl::StrAppend(&command, " 2>&1; echo \"EXIT=$?\"");
  CtlResult result;
  auto process = ::fathom::testing::Subprocess::Start({"/bin/sh", "-c", command});
  if (!process.ok()) {
    result.output = process.status().ToString();
    return result;
  }
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    auto line = (*process)->ReadLine(deadline - absl::Now());
    if (!line.ok()) {
      absl::StrAppend(&result.output, "[", line.status().ToString(), "]");
      break;
    }
    if (line->rfind("EXIT=", 0) == 0) {
      result.exit_code = std::stoi(line->substr(5));
      break;
    }
    absl::StrAppend(&result.output, *line, "\n");
  }
  (*process)->Wait(absl::Seconds(5)).IgnoreError();
  return result;
}

struct CtlSplitResult {
  int exit_code = -1;
  std::string out;  // stdout, byte for byte
  std::string err;  // stderr
};

// Runs fathomctl with `args`, standard input from `stdin_path` (/dev/null if empty), and keeps standard
// output and standard error apart (in files under `scratch_dir`).
inline CtlSplitResult RunCtlSplit(const std::vector<std::string>& args, const std::string& scratch_dir,
                                  const std::string& stdin_path = "", absl::Duration timeout = absl::Seconds(60)) {
  const std::string out_path = scratch_dir + "/ctl.out", err_path = scratch_dir + "/ctl.err";
  std::string command = absl::StrCat("'", ::fathom::testing::RunfilePath("tools/fathomctl/fathomctl"), "'");
  for (const std::string& a : args) absl::StrAppend(&command, " '", a, "'");
  absl::StrAppend(&command, " <'", stdin_path.empty() ? "/dev/null" : stdin_path, "' >'", out_path, "' 2>'", err_path,
                  "'; echo \"EXIT=$?\"");
  CtlSplitResult result;
  auto process = ::fathom::testing::Subprocess::Start({"/bin/sh", "-c", command});
  if (!process.ok()) {
    result.err = process.status().ToString();
    return result;
  }
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    auto line = (*process)->ReadLine(deadline - absl::Now());
    if (!line.ok()) {
      result.err = absl::StrCat("[", line.status().ToString(), "]");
      return result;
    }
    if (line->rfind("EXIT=", 0) == 0) {
      result.exit_code = std::stoi(line->substr(5));
      break;
    }
  }
  (*process)->Wait(absl::Seconds(5)).IgnoreError();
  auto slurp = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

}  // namespace fathom::fathomctl::testing

#endif  // FATHOM_TOOLS_FATHOMCTL_CTL_TEST_UTIL_H_
