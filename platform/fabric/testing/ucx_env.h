// ConformanceEnv for UcxFabric: the peer is a fabric_peer process on this machine.
#ifndef FATHOM_PLATFORM_FABRIC_TESTING_UCX_ENV_H_
#define FATHOM_PLATFORM_FABRIC_TESTING_UCX_ENV_H_

#include <memory>
#include <string>
#include <vector>

#include "platform/fabric/testing/conformance.h"
#include "platform/fabric/ucx/ucx_fabric.h"
#include "tests/util/subprocess.h"

namespace fathom::fabric::testing {

// A worker of this process connected to the peer, with the peer's region imported.
struct PeerLink {
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Endpoint> endpoint;  // destroyed before the worker
  RemoteRegion remote;
};

class UcxPeerEnv : public ConformanceEnv {
 public:
  // `transports` in UCX_TLS syntax, used by this process and the peer ("sm" or "tcp"). The peer is
  // `peer_binary` (a runfiles path; default fabric_peer) started with `peer_args` after the standard ones;
  // it must print "READY <address hex> <region descriptor hex> [more words]".
  explicit UcxPeerEnv(std::string transports, std::string peer_binary = "platform/fabric/testing/fabric_peer",
                      std::vector<std::string> peer_args = {});
  absl::Status Start() override;
  Fabric& local() override { return *fabric_; }
  std::string peer_address() override { return peer_address_; }
  RegionDescriptor peer_region() override { return peer_region_; }
  void KillPeer() override;
  absl::Status SilencePeer() override;
  absl::Status ResumePeer() override;
  absl::Status RunRemoteAdder(uint64_t offset, int count) override;
  const FabricOptions& options() const override { return options_.fabric; }

  fathom::testing::Subprocess& peer() { return *peer_; }
  // The words the peer printed after the region descriptor on its READY line.
  const std::vector<std::string>& ready_extra() const { return ready_extra_; }
  // Creates a worker on the calling thread and connects it to the peer. REQUIRES: Start() succeeded.
  absl::StatusOr<PeerLink> ConnectToPeer();

 private:
  std::string transports_;
  std::string peer_binary_;
  std::vector<std::string> peer_args_;
  std::vector<std::string> ready_extra_;
  UcxOptions options_;
  std::unique_ptr<Fabric> fabric_;
  std::unique_ptr<fathom::testing::Subprocess> peer_;
  std::string peer_address_;
  RegionDescriptor peer_region_;
};

}  // namespace fathom::fabric::testing

#endif  // FATHOM_PLATFORM_FABRIC_TESTING_UCX_ENV_H_
