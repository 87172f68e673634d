// Shows that one-sided reads over UCX shared memory can return torn copies: a peer process rewrites a
// buffer with whole-buffer patterns (every byte the same value) while this process reads it. A read
// holding two different byte values saw parts of two writes. The object layer must detect these
// (self-verifying objects); this test only proves they happen and counts them.
#include <cstring>
#include <iostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/fabric/testing/ucx_env.h"

namespace fathom::fabric::testing {
namespace {

// Returns true if `data` does not hold a single repeated byte value.
bool Torn(const uint8_t* data, size_t size) {
  for (size_t i = 1; i < size; ++i) {
    if (data[i] != data[0]) return true;
  }
  return false;
}

TEST(UcxTornReadTest, ConcurrentRewritesProduceTornCopies) {
  UcxPeerEnv env("sm");
  ASSERT_TRUE(env.Start().ok());
  auto link = env.ConnectToPeer();
  ASSERT_TRUE(link.ok()) << link.status();
  Worker* worker = link->worker.get();
  Endpoint* ep = link->endpoint.get();
  const RemoteRegion remote = link->remote;

  constexpr uint64_t kOffset = 1 << 20;
  constexpr size_t kSize = 64 * 1024;
  ASSERT_TRUE(env.peer().WriteLine(absl::StrCat("scribble ", kOffset, " ", kSize)).ok());
  ASSERT_EQ(*env.peer().ReadLine(absl::Seconds(10)), "SCRIBBLING");

  std::vector<uint8_t> buffer(kSize);
  uint64_t reads = 0, torn = 0;
  const absl::Time end = absl::Now() + absl::Seconds(3);
  while (absl::Now() < end && torn < 100) {
    ASSERT_TRUE(ep->PostRead(remote, kOffset, buffer.data(), kSize, reads).ok());
    ASSERT_TRUE(ep->Flush().ok());
    std::vector<Completion> done;
    ASSERT_TRUE(WaitForCompletions(*worker, 1, done, absl::Seconds(10)).ok());
    ASSERT_TRUE(done[0].status.ok()) << done[0].status;
    ++reads;
    torn += Torn(buffer.data(), kSize) ? 1 : 0;
  }
  ASSERT_TRUE(env.peer().WriteLine("stop").ok());
  std::cerr << "[ info ] UCX shm: " << torn << " torn copies in " << reads << " reads of " << kSize
            << " bytes\n";
  EXPECT_GT(torn, 0u) << "no torn copy seen: the layers above still must not assume atomic reads";
}

}  // namespace
}  // namespace fathom::fabric::testing
