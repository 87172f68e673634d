#include "tools/fathomctl/progress.h"

#include <atomic>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace fathom::fathomctl {
namespace {

TEST(ProgressTest, AQuickCallPrintsNothing) {
  std::ostringstream out;
  EXPECT_EQ(WithProgress("creating table t", out, [] { return 7; }, absl::Seconds(60)), 7);
  EXPECT_EQ(out.str(), "");
}

// Counts flushed lines (std::endl flushes), so the call can wait for one without reading the stream the
// main thread writes.
class FlushCounter : public std::stringbuf {
 public:
  std::atomic<int> flushes{0};

 protected:
  int sync() override {
    flushes.fetch_add(1);
    return std::stringbuf::sync();
  }
};

TEST(ProgressTest, ALongCallSaysItIsStillRunningAndWhenItIsDone) {
  FlushCounter buffer;
  std::ostream out(&buffer);
  // The call ends only once a progress line was written (no sleeps decide it: the call waits on the line).
  const std::string result = WithProgress(
      "resizing table t", out,
      [&buffer] {
        while (buffer.flushes.load() == 0) absl::SleepFor(absl::Milliseconds(1));
        return std::string("done");
      },
      absl::Milliseconds(10));
  EXPECT_EQ(result, "done");
  const std::string text = buffer.str();  // after the call's thread is joined (WithProgress got its result)
  EXPECT_TRUE(absl::StartsWith(text, "fathomctl: resizing table t: still running (")) << text;
  EXPECT_TRUE(absl::StrContains(text, "fathomctl: resizing table t: done in ")) << text;
}

}  // namespace
}  // namespace fathom::fathomctl
