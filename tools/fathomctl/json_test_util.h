// Test helpers for fathomctl's JSON output: parse it into a google.protobuf.Struct to check its shape.
#ifndef FATHOM_TOOLS_FATHOMCTL_JSON_TEST_UTIL_H_
#define FATHOM_TOOLS_FATHOMCTL_JSON_TEST_UTIL_H_

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <string>

#include "gtest/gtest.h"

// Under ThreadSanitizer, protobuf's Map is built with PROTOBUF_TSAN in header code but without it inside
// Debian's libprotobuf, so a Struct parsed by the library and read by inlined code crashes (an ABI
// mismatch, not a race). The JSON checks run in normal and asan builds.
#if defined(__SANITIZE_THREAD__)
#define SKIP_JSON_CHECKS_UNDER_TSAN() \
  GTEST_SKIP() << "JSON Struct checks need a protobuf built with the same sanitizer"
#else
#define SKIP_JSON_CHECKS_UNDER_TSAN() static_cast<void>(0)
#endif

namespace fathom::fathomctl::testing {

// `json` parsed as a Struct; a parse error fails the test.
inline google::protobuf::Struct ParseJson(const std::string& json) {
  google::protobuf::Struct parsed;
  auto status = google::protobuf::util::JsonStringToMessage(json, &parsed);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << json;
  return parsed;
}

}  // namespace fathom::fathomctl::testing

#endif  // FATHOM_TOOLS_FATHOMCTL_JSON_TEST_UTIL_H_
