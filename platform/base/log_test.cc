#include "platform/base/log.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace fathom {
namespace {

std::string Capture(void (*write)()) {
  ::testing::internal::CaptureStderr();
  write();
  return ::testing::internal::GetCapturedStderr();
}

class LogTest : public ::testing::Test {
 protected:
  void TearDown() override {
    SetLogLevel(LogLevel::kInfo);
    SetLogNode(0);
  }
};

TEST_F(LogTest, OneLineWithTimeLevelNodeConfigurationAndComponent) {
  const std::string out = Capture([] { LogInfo("test", "hello %d", 7); });
  EXPECT_TRUE(std::regex_match(out, std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} I node=- config=- test: hello 7\n)")))
      << out;
}

TEST_F(LogTest, NodeAndConfigurationComeFromTheProcessOrTheThread) {
  SetLogNode(4);
  SetLogConfiguration(4, 9);
  std::string out = Capture([] { LogWarning("lease", "lapsed"); });
  EXPECT_NE(out.find(" W node=4 config=9 lease: lapsed\n"), std::string::npos) << out;
  out = Capture([] {
    ScopedLogNode scoped(2);  // a node thread of node 2, which has applied no configuration yet
    LogError("fabric", "broken");
  });
  EXPECT_NE(out.find(" E node=2 config=- fabric: broken\n"), std::string::npos) << out;
  out = Capture([] { LogLine(LogLevel::kInfo, "fathomd", "back to the process's node"); });
  EXPECT_NE(out.find(" I node=4 config=9 fathomd: back"), std::string::npos) << out;
}

TEST_F(LogTest, LinesBelowTheLevelAreDropped) {
  SetLogLevel(LogLevel::kWarning);
  const std::string out = Capture([] {
    LogDebug("test", "debug");
    LogInfo("test", "info");
    LogWarning("test", "warning");
    LogError("test", "error");
  });
  EXPECT_EQ(out.find("debug"), std::string::npos);
  EXPECT_EQ(out.find("info"), std::string::npos);
  EXPECT_NE(out.find(" W node=- config=- test: warning\n"), std::string::npos) << out;
  EXPECT_NE(out.find(" E node=- config=- test: error\n"), std::string::npos) << out;
  SetLogLevel(LogLevel::kDebug);
  EXPECT_NE(Capture([] { LogDebug("test", "now shown"); }).find(" D node=- config=- test: now shown"), std::string::npos);
}

TEST_F(LogTest, ParsesLevelNames) {
  EXPECT_EQ(*ParseLogLevel("debug"), LogLevel::kDebug);
  EXPECT_EQ(*ParseLogLevel("info"), LogLevel::kInfo);
  EXPECT_EQ(*ParseLogLevel("warning"), LogLevel::kWarning);
  EXPECT_EQ(*ParseLogLevel("error"), LogLevel::kError);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseLogLevel("verbose").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseLogLevel("").status()));
}

}  // namespace
}  // namespace fathom
