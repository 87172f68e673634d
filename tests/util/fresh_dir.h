// A directory for a test's files under the test's TEST_TMPDIR (or /tmp), emptied first: an earlier run's
// leftovers (logs, databases) must not leak into this one.
//
//   const std::string dir = testing::FreshTestDir("object_log_test", "reopen");  // removed, not created
#ifndef FATHOM_TESTS_UTIL_FRESH_DIR_H_
#define FATHOM_TESTS_UTIL_FRESH_DIR_H_

#include <string>

namespace fathom::testing {

// <TEST_TMPDIR or /tmp>/<suite>/<name>, with anything already there removed. Not created.
std::string FreshTestDir(const std::string& suite, const std::string& name);

}  // namespace fathom::testing

#endif  // FATHOM_TESTS_UTIL_FRESH_DIR_H_
