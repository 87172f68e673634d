#include "platform/fabric/testing/ucx_env.h"

#include <signal.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "platform/base/hex.h"
#include "platform/base/runfiles.h"

namespace fathom::fabric::testing {

namespace {
std::string FabricPeerBinary() { return fathom::RunfilePath("platform/fabric/testing/fabric_peer"); }
}  // namespace

UcxPeerEnv::UcxPeerEnv(std::string transports, std::string peer_binary, std::vector<std::string> peer_args)
    : transports_(std::move(transports)),
      peer_binary_(fathom::RunfilePath(peer_binary)),
      peer_args_(std::move(peer_args)) {
  options_.transports = transports_;
  options_.fabric.operation_timeout = absl::Seconds(2);
  options_.fabric.keepalive_interval = absl::Milliseconds(200);
}

absl::Status UcxPeerEnv::Start() {
  auto fabric = CreateUcxFabric(options_);
  if (!fabric.ok()) return fabric.status();
  fabric_ = std::move(*fabric);
  std::vector<std::string> argv = {peer_binary_, "--mode=serve", absl::StrCat("--transports=", transports_)};
  argv.insert(argv.end(), peer_args_.begin(), peer_args_.end());
  auto peer = fathom::testing::Subprocess::Start(argv);
  if (!peer.ok()) return peer.status();
  peer_ = std::move(*peer);
  auto line = peer_->ReadLine(absl::Seconds(30));
  if (!line.ok()) return line.status();
  std::vector<std::string> words = absl::StrSplit(*line, ' ');
  std::string descriptor;
  if (words.size() < 3 || words[0] != "READY" || !fathom::HexToBytes(words[1], &peer_address_) ||
      !fathom::HexToBytes(words[2], &descriptor)) {
    return absl::InternalError(absl::StrCat("unexpected line from fabric_peer: ", *line));
  }
  auto parsed = RegionDescriptor::Parse(descriptor);
  if (!parsed.ok()) return parsed.status();
  peer_region_ = *parsed;
  ready_extra_.assign(words.begin() + 3, words.end());
  return absl::OkStatus();
}

absl::StatusOr<PeerLink> UcxPeerEnv::ConnectToPeer() {
  PeerLink link;
  auto worker = fabric_->CreateWorker();
  if (!worker.ok()) return worker.status();
  link.worker = std::move(*worker);
  auto endpoint = link.worker->Connect(peer_address_);
  if (!endpoint.ok()) return endpoint.status();
  link.endpoint = std::move(*endpoint);
  auto remote = link.endpoint->ImportRegion(peer_region_);
  if (!remote.ok()) return remote.status();
  link.remote = *remote;
  return link;
}

void UcxPeerEnv::KillPeer() {
  peer_->Signal(SIGKILL);
  peer_->Wait(absl::Seconds(10)).IgnoreError();
}

absl::Status UcxPeerEnv::SilencePeer() {
  if (transports_ != "tcp") {
    return absl::UnimplementedError(absl::StrCat("one-sided operations over '", transports_,
                                                 "' need no peer CPU: a stopped peer still serves them"));
  }
  peer_->Signal(SIGSTOP);
  return absl::OkStatus();
}

absl::Status UcxPeerEnv::ResumePeer() {
  peer_->Signal(SIGCONT);
  return absl::OkStatus();
}

absl::Status UcxPeerEnv::RunRemoteAdder(uint64_t offset, int count) {
  auto adder = fathom::testing::Subprocess::Start(
      {FabricPeerBinary(), "--mode=add", absl::StrCat("--transports=", transports_),
       absl::StrCat("--target=", absl::BytesToHexString(peer_address_)),
       absl::StrCat("--region=", absl::BytesToHexString(peer_region_.Serialize())),
       absl::StrCat("--offset=", offset), absl::StrCat("--count=", count)});
  if (!adder.ok()) return adder.status();
  auto line = (*adder)->ReadLine(absl::Seconds(120));
  if (!line.ok()) return line.status();
  if (*line != "DONE 0") return absl::InternalError(absl::StrCat("remote adder: ", *line));
  return absl::OkStatus();
}

}  // namespace fathom::fabric::testing
