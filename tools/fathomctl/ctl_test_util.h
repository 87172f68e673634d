// Test helper: runs the fathomctl binary (from the runfiles) and captures its exit code and output.
#ifndef FATHOM_TOOLS_FATHOMCTL_CTL_TEST_UTIL_H_
#define FATHOM_TOOLS_FATHOMCTL_CTL_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "platform/base/runfiles.h"
#include "tests/util/subprocess.h"

namespace fathom::fathomctl::testing {

struct CtlResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs fathomctl with `args` through /bin/sh so that stderr is captured too.
inline CtlResult RunCtl(const std::vector<std::string>& args, absl::Duration timeout = absl::Seconds(30)) {
  std::string command = absl::StrCat("'", ::fathom::RunfilePath("tools/fathomctl/fathomctl"), "'");
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

}  // namespace fathom::fathomctl::testing

#endif  // FATHOM_TOOLS_FATHOMCTL_CTL_TEST_UTIL_H_
