// Adaptive progress: an idle peer sleeps on its worker's event fd (no CPU) and still serves one-sided
// operations over tcp, which UCX emulates with the target's progress, promptly when they arrive.
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/testing/ucx_env.h"

namespace fathom::fabric::testing {
namespace {

// User plus system CPU time of `pid` so far.
absl::Duration CpuTime(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  std::getline(in, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15; ++i) {
    fields >> field;
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return absl::Seconds(static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK));
}

TEST(UcxProgressTest, IdlePeerSleepsAndStillServesTcp) {
  UcxPeerEnv env("tcp");
  ASSERT_TRUE(env.Start().ok());
  auto link = env.ConnectToPeer();
  ASSERT_TRUE(link.ok()) << link.status();
  Worker* worker = link->worker.get();
  Endpoint* ep = link->endpoint.get();
  const RemoteRegion remote = link->remote;
  uint64_t word = 0;
  auto read_once = [&]() -> absl::Duration {
    const absl::Time start = absl::Now();
    EXPECT_TRUE(ep->PostRead(remote, 0, &word, 8, 1).ok());
    EXPECT_TRUE(ep->Flush().ok());
    std::vector<Completion> done;
    EXPECT_TRUE(WaitForCompletions(*worker, 1, done, absl::Seconds(10)).ok());
    EXPECT_TRUE(!done.empty() && done[0].status.ok());
    return absl::Now() - start;
  };
  read_once();  // connection established

  const absl::Duration before = CpuTime(env.peer().pid());
  absl::SleepFor(absl::Seconds(2));
  const absl::Duration idle_cpu = CpuTime(env.peer().pid()) - before;
  std::cerr << "[ info ] idle peer used " << idle_cpu << " CPU in 2s\n";
  // Busy polling would burn about 2s here; sleeping on the event fd costs a few wake-ups.
  EXPECT_LT(idle_cpu, absl::Milliseconds(300));

  // The sleeping peer wakes for the request: a read after idleness is served well within a second.
  const absl::Duration first = read_once();
  std::cerr << "[ info ] first read after idle took " << first << "\n";
  EXPECT_LT(first, absl::Seconds(1));
}

}  // namespace
}  // namespace fathom::fabric::testing
