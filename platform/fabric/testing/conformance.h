// The Fabric conformance suite: one set of tests that every Fabric implementation must pass.
// Each backend's test file defines MakeConformanceEnv() and instantiates the suite:
//
//   std::unique_ptr<ConformanceEnv> MakeConformanceEnv() { return std::make_unique<MyEnv>(); }
//   (link against :conformance, which holds the TESTs)
#ifndef FATHOM_PLATFORM_FABRIC_TESTING_CONFORMANCE_H_
#define FATHOM_PLATFORM_FABRIC_TESTING_CONFORMANCE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "platform/fabric/fabric.h"

namespace fathom::fabric::testing {

// A local fabric plus one peer that serves a region of kPeerRegionBytes filled with PatternByte.
class ConformanceEnv {
 public:
  virtual ~ConformanceEnv() = default;
  virtual absl::Status Start() = 0;
  virtual Fabric& local() = 0;
  virtual std::string peer_address() = 0;
  virtual RegionDescriptor peer_region() = 0;
  // Kills the peer abruptly (SIGKILL, or a simulated crash).
  virtual void KillPeer() = 0;
  // Makes the peer stop answering without dying (SIGSTOP, or a partition). Unimplemented where one-sided
  // operations need no peer CPU (shared memory), which is the point of one-sided access.
  virtual absl::Status SilencePeer() = 0;
  // Lets a silenced peer answer again (SIGCONT, or the partition healed).
  virtual absl::Status ResumePeer() = 0;
  // Performs `count` FetchAdd(1) on the peer's word at `offset` from another process (or node).
  virtual absl::Status RunRemoteAdder(uint64_t offset, int count) = 0;
  // Lets simulated time pass (sim) or does nothing (real fabrics).
  virtual void Advance(absl::Duration d) {}
  // The FabricOptions both sides use.
  virtual const FabricOptions& options() const = 0;
};

std::unique_ptr<ConformanceEnv> MakeConformanceEnv();

}  // namespace fathom::fabric::testing

#endif  // FATHOM_PLATFORM_FABRIC_TESTING_CONFORMANCE_H_
