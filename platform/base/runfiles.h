// The path of a file in this binary's Bazel runfiles (a data dependency: a workload file, a binary a
// test starts), found by Bazel's runfiles library: under `bazel test` (TEST_SRCDIR), `bazel run`
// (RUNFILES_DIR), or beside the binary (<binary>.runfiles) when started by hand.
//
//   std::string fathomd = RunfilePath("server/fathomd");
#ifndef FATHOM_PLATFORM_BASE_RUNFILES_H_
#define FATHOM_PLATFORM_BASE_RUNFILES_H_

#include <string>

namespace fathom {

// `workspace_relative` (e.g. "bench/workloads/workloada") inside the runfiles; the path as given when
// there are no runfiles to be found (a relative path then resolves from the working directory).
std::string RunfilePath(const std::string& workspace_relative);

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_RUNFILES_H_
