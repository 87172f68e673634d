// Node: start, stop, and joining peers (control path).
#include "platform/node/node.h"

#include <unistd.h>

#include <algorithm>
#include <random>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "platform/base/mutex.h"
#include "platform/base/log.h"
#include "platform/memory/page_size.h"
#include "platform/msg/ring_location.h"
#include "platform/msg/shared_load.h"
#include "platform/node/control/control_client.h"
#include "platform/node/control/control_limits.h"

namespace fathom::node {
namespace {

constexpr uint64_t kSlabBytes = memory::kMaxSlotBytes;  // regions are cut into chunks of this size

absl::Status ValidateOptions(const NodeOptions& o) {
  if (o.node_id == 0 || o.node_id > kMaxNodeId) {
    return absl::InvalidArgumentError(absl::StrCat("node id ", o.node_id, " not in 1..", kMaxNodeId));
  }
  if (o.worker_threads < 1 || o.worker_threads > 64) {
    return absl::InvalidArgumentError(absl::StrCat("worker threads ", o.worker_threads, " not in 1..64"));
  }
  if (o.region_bytes < kSlabBytes || o.region_bytes > memory::kMaxRegionBytes || o.region_bytes % kSlabBytes != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("region size ", o.region_bytes, " must be a multiple of 1 MiB up to 4 GiB"));
  }
  const uint64_t physical = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  if (o.memory_bytes < kSlabBytes || o.memory_bytes > physical) {
    return absl::InvalidArgumentError(absl::StrCat("memory size ", o.memory_bytes, " must be between 1 MiB and ",
                                                   "this machine's ", physical, " bytes of RAM"));
  }
  if (o.max_peers < 1 || o.max_peers > 255) {
    return absl::InvalidArgumentError(absl::StrCat("max peers ", o.max_peers, " not in 1..255"));
  }
  if (o.ring_bytes < 4096 || (o.ring_bytes & (o.ring_bytes - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("ring size ", o.ring_bytes, " must be a power of two >= 4096"));
  }
  for (const PeerAddress& peer : o.peers) {
    if (peer.node_id == o.node_id) return absl::InvalidArgumentError("a node cannot list itself as a peer");
  }
  return absl::OkStatus();
}

uint64_t FreshIncarnation() {
  std::random_device device;
  uint64_t value = 0;
  while (value == 0) value = (uint64_t{device()} << 32) ^ device();
  return value;
}

fabric::FabricKind KindOf(const fabric::Fabric& fabric) {
  return fabric.name() == "sim" ? fabric::FabricKind::kSim : fabric::FabricKind::kUcx;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Node>> Node::Start(NodeOptions options, std::unique_ptr<fabric::Fabric> fabric) {
  if (absl::Status s = ValidateOptions(options); !s.ok()) return s;
  if (fabric == nullptr) return absl::InvalidArgumentError("no fabric");
  // Debian's Abseil is built with mutex deadlock detection on, which serialises every lock of every mutex
  // in the process on one global spin lock; the data path cannot afford that. (TSan runs still find lock
  // order problems.)
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const uint64_t incarnation = options.incarnation != 0 ? options.incarnation : FreshIncarnation();
  std::unique_ptr<Node> node(new Node(std::move(options), std::move(fabric), incarnation));
  if (absl::Status s = node->Init(); !s.ok()) {
    node->Stop();
    return s;
  }
  return node;
}

Node::Node(NodeOptions options, std::unique_ptr<fabric::Fabric> fabric, uint64_t incarnation)
    : options_(std::move(options)),
      fabric_(std::move(fabric)),
      incarnation_(incarnation),
      start_time_(options_.clock->Now()),
      ring_plan_(options_.max_peers, options_.worker_threads, options_.ring_bytes) {}

Node::~Node() { Stop(); }

Node::JoinLock::JoinLock(const Node* node) : mu_(&node->join_mu_) {
  if (Executor* executor = node->options_.executor; executor != nullptr) {
    while (!mu_->TryLock()) executor->RunUntil([] { return false; }, absl::Microseconds(10));
  } else {
    mu_->Lock();
  }
  TsanAcquire(mu_);
}

Node::JoinLock::~JoinLock() {
  TsanRelease(mu_);
  mu_->Unlock();
}

absl::Status Node::Init() {
  auto ring_region = memory::LocalRegion::Allocate(*fabric_, memory::NodeRegionId(options_.node_id, 0),
                                                   options_.node_id, ring_plan_.region_bytes());
  if (!ring_region.ok()) return ring_region.status();
  ring_region_ = std::move(*ring_region);
  std::vector<memory::LocalRegion*> data;
  for (uint64_t offset = 0, index = 1; offset < options_.memory_bytes; offset += options_.region_bytes, ++index) {
    const uint64_t left = options_.memory_bytes - offset;
    const uint64_t size = std::min(options_.region_bytes, (left + kSlabBytes - 1) / kSlabBytes * kSlabBytes);
    auto region = memory::LocalRegion::Allocate(*fabric_, memory::NodeRegionId(options_.node_id, static_cast<uint32_t>(index)),
                                                options_.node_id, size);
    if (!region.ok()) {
      return absl::ResourceExhaustedError(absl::StrCat("cannot allocate region ", index, " of ", size,
                                                       " bytes: ", region.status().ToString()));
    }
    data.push_back(region->get());
    data_regions_.push_back(std::move(*region));
  }
  if (absl::Status s = region_table_.Add(ring_region_->info()); !s.ok()) return s;
  for (auto& region : data_regions_) {
    if (absl::Status s = region_table_.Add(region->info()); !s.ok()) return s;
  }
  slab_source_ = std::make_unique<memory::SlabSource>(data, kSlabBytes);
  CountHugePages();
  region_directory_.Set(memory::RegionMap::ByOwner(0, {options_.node_id}, 0));

  for (int t = 0; t < options_.worker_threads; ++t) {
    NodeThread::Config config;
    config.index = t;
    config.node_id = options_.node_id;
    config.fabric = fabric_.get();
    config.slab_source = slab_source_.get();
    config.data_regions = data;
    config.regions = &region_directory_;
    config.executor = options_.executor;
    config.clock = options_.clock;
    config.idle_wait = options_.idle_wait;
    config.busy_poll_window = options_.busy_poll_window;
    config.busy_yield_interval = options_.busy_yield_interval;
    config.batch_scheduling = options_.batch_scheduling;
    config.on_peer_failed = [this](uint32_t peer) {
      MutexLock lock(&failed_mu_);
      failed_peers_.insert(peer);
    };
    config.register_handlers = [user = options_.register_handlers](msg::Messenger& messenger, int thread) {
      messenger
          .Register(kPingMessage,
                    [](const msg::Message& message, std::string* reply) {
                      reply->assign(message.payload.data(), message.payload.size());
                      return absl::OkStatus();
                    })
          .IgnoreError();
      if (user) user(messenger, thread);
    };
    threads_.push_back(std::make_unique<NodeThread>(std::move(config)));
    if (absl::Status s = threads_.back()->Start(); !s.ok()) return s;
  }

  if (options_.in_process_peers != nullptr) {
    // Peers of this process join it directly: no control server (and no port drawn by the OS, which a
    // replayable run must not depend on).
    in_process_address_ = absl::StrCat("in-process:", options_.node_id);
    options_.in_process_peers->Add(in_process_address_, this);
    return absl::OkStatus();
  }
  control::ControlServerOptions server;
  server.listen_address = options_.listen_address;
  server.cluster_name = options_.cluster_name;
  server.fabric_kind = KindOf(*fabric_);
  server.cluster_token = options_.cluster_token;
  server.tls = options_.tls;
  auto control = control::ControlServer::Start(server, this);
  if (!control.ok()) return control.status();
  control_ = std::move(*control);
  return absl::OkStatus();
}

void Node::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // The control server first: no Join may run against threads that are going away.
  if (options_.in_process_peers != nullptr) options_.in_process_peers->Remove(in_process_address_, this);
  if (control_ != nullptr) control_->Stop();
  for (auto& thread : threads_) thread->Stop();
}

fabric::FabricKind Node::fabric_kind() const { return KindOf(*fabric_); }

void Node::AddCounterSource(std::function<void(std::map<std::string, uint64_t>&)> source) {
  MutexLock lock(&sources_mu_);
  counter_sources_.push_back(std::move(source));
}

std::string Node::control_address() const {
  return control_ != nullptr ? control_->address() : in_process_address_;
}

std::vector<memory::LocalRegion*> Node::data_regions() const {
  std::vector<memory::LocalRegion*> regions;
  for (const auto& region : data_regions_) regions.push_back(region.get());
  return regions;
}

absl::StatusOr<NodeThread*> Node::Thread(int index) {
  if (index < 0 || index >= static_cast<int>(threads_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("thread ", index, " not in 0..", threads_.size() - 1));
  }
  return threads_[index].get();
}

absl::StatusOr<int> Node::SlotFor(uint32_t peer) {
  auto it = peer_slots_.find(peer);
  if (it != peer_slots_.end()) return it->second;
  const int slot = static_cast<int>(peer_slots_.size());
  if (slot >= ring_plan_.max_peers()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("node ", options_.node_id, " already has ", slot, " peers (max_peers)"));
  }
  peer_slots_[peer] = slot;
  return slot;
}

absl::StatusOr<control::NodeInfo> Node::InfoFor(uint32_t peer) {
  control::NodeInfo info;
  info.set_node_id(options_.node_id);
  info.set_cluster_name(options_.cluster_name);
  info.set_protocol_version(control::kControlProtocolVersion);
  info.set_fabric_kind(KindOf(*fabric_) == fabric::FabricKind::kSim ? control::FABRIC_KIND_SIM
                                                                       : control::FABRIC_KIND_UCX);
  info.set_incarnation(incarnation_);
  info.set_start_time_unix_micros(absl::ToUnixMicros(start_time_));
  info.set_configuration_epoch(region_directory_.Current()->epoch());
  info.set_epoch_floor(epoch_floor_);
  for (const auto& thread : threads_) info.add_worker_addresses(thread->worker_address());
  auto add_region = [&](const memory::LocalRegion& region) {
    control::RegionInfo* r = info.add_regions();
    r->set_region_id(region.id());
    r->set_owner_node_id(options_.node_id);
    r->set_size(region.size());
    r->set_region_descriptor(region.info().descriptor.Serialize());
  };
  add_region(*ring_region_);
  for (const auto& region : data_regions_) add_region(*region);
  for (const auto& [id, region] : served_regions_) add_region(*region);
  auto slot = SlotFor(peer);
  if (!slot.ok()) return slot.status();
  for (int t = 0; t < threads(); ++t) {
    // The ring the peer's thread t writes into...
    auto ring = msg::MakeRingLocation(ring_region_->fabric_region(), ring_plan_.ring_offset(*slot, t),
                                      ring_plan_.ring_bytes(),
                                      RingPlan::Session(incarnation_, options_.node_id, peer, t, Generation(peer)));
    if (!ring.ok()) return ring.status();
    control::RingLocation* r = info.add_rings();
    r->set_sender_node_id(peer);
    r->set_sender_thread(t);
    r->set_location(ring->Serialize());
    // ...and the credit word where the peer writes back the head of the ring our thread t writes into.
    auto credit = msg::MakeCreditLocation(ring_region_->fabric_region(), ring_plan_.credit_offset(*slot, t));
    if (!credit.ok()) return credit.status();
    control::RingLocation* c = info.add_rings();
    c->set_sender_node_id(options_.node_id);
    c->set_sender_thread(t);
    c->set_location(credit->Serialize());
  }
  return info;
}

absl::Status Node::Connect(const control::NodeInfo& peer) {
  const uint32_t id = peer.node_id();
  // What the peer published for us: the rings our threads write into (with their sessions).
  std::string rings_for_us;
  for (const control::RingLocation& entry : peer.rings()) {
    if (entry.sender_node_id() == options_.node_id) absl::StrAppend(&rings_for_us, entry.sender_thread(), ":", entry.location());
  }
  if (id == options_.node_id) return absl::InvalidArgumentError("a node cannot join itself");
  // Its own regions, and copies of other nodes' regions it serves as their promoted primary: routing
  // follows the configuration's placement, never the publisher's say-so.
  std::vector<memory::RegionInfo> regions;
  absl::flat_hash_set<uint32_t> region_ids;
  for (const control::RegionInfo& r : peer.regions()) {
    auto descriptor = fabric::RegionDescriptor::Parse(r.region_descriptor());
    if (!descriptor.ok()) return descriptor.status();
    if (memory::OwnerOfRegion(r.region_id()) == 0 || !region_ids.insert(r.region_id()).second) {
      return absl::InvalidArgumentError(absl::StrCat("node ", id, " publishes region ", r.region_id(),
                                                     memory::OwnerOfRegion(r.region_id()) == 0 ? ", which no node owns"
                                                                                               : " twice"));
    }
    if (descriptor->length != r.size()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", id, " publishes region ", r.region_id(), " of ",
                                                     r.size(), " bytes with a descriptor of ", descriptor->length));
    }
    regions.push_back(memory::RegionInfo{r.region_id(), id, r.size(), *descriptor});
  }
  if (auto it = connected_.find(id); it != connected_.end()) {
    // A duplicate, or a republish: the same process and rings, perhaps with regions it serves now.
    if (it->second == peer.incarnation() && peer_rings_[id] == rings_for_us) return UpdatePeerRegions(id, regions);
    // The peer restarted, or dropped its side of the connection: replace ours.
    if (absl::Status s = DisconnectLocked(id); !s.ok()) return s;
  }
  if (peer.worker_addresses_size() != threads()) {
    return absl::FailedPreconditionError(absl::StrCat("node ", id, " runs ", peer.worker_addresses_size(),
                                                      " threads, this node ", threads(), "; they must match"));
  }
  auto slot = SlotFor(id);
  if (!slot.ok()) return slot.status();
  std::vector<std::optional<msg::RingLocation>> rings(threads());
  std::vector<std::optional<msg::CreditLocation>> credits(threads());
  for (const control::RingLocation& entry : peer.rings()) {
    const int t = static_cast<int>(entry.sender_thread());
    if (t >= threads()) return absl::InvalidArgumentError(absl::StrCat("ring entry for thread ", t));
    if (entry.sender_node_id() == options_.node_id) {
      auto ring = msg::RingLocation::Parse(entry.location());
      if (!ring.ok()) return ring.status();
      rings[t] = *ring;
    } else if (entry.sender_node_id() == id) {
      auto credit = msg::CreditLocation::Parse(entry.location());
      if (!credit.ok()) return credit.status();
      credits[t] = *credit;
    }
  }
  for (int t = 0; t < threads(); ++t) {
    if (!rings[t].has_value() || !credits[t].has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", id, " sent no ring or credit for thread ", t));
    }
  }
  for (int t = 0; t < threads(); ++t) {
    const msg::RingLocation ring_to_peer = *rings[t];
    const msg::CreditLocation peer_credit = *credits[t];
    const std::string address = peer.worker_addresses(t);
    auto my_ring = msg::MakeRingLocation(ring_region_->fabric_region(), ring_plan_.ring_offset(*slot, t),
                                         ring_plan_.ring_bytes(),
                                         RingPlan::Session(incarnation_, options_.node_id, id, t, Generation(id)));
    if (!my_ring.ok()) return my_ring.status();
    const uint64_t credit_offset = ring_plan_.credit_offset(*slot, t);
    // By value: if the wait times out, the task may still run after this function has returned.
    NodeThread* target = threads_[t].get();
    fabric::Region* ring_region = &ring_region_->fabric_region();
    absl::Status connected = target->RunAndWait(
        [target, ring_region, id, address, regions, ring_to_peer, peer_credit, my_ring = *my_ring,
         credit_offset]() -> absl::Status {
          NodeThread& thread = *target;
          auto endpoint = thread.worker().Connect(address);
          if (!endpoint.ok()) return endpoint.status();
          PeerConnection& connection = thread.AddPeer(id, std::move(*endpoint));
          for (const memory::RegionInfo& region : regions) {
            auto remote = connection.endpoint->ImportRegion(region.descriptor);
            if (!remote.ok()) return remote.status();
            connection.regions[region.id] = *remote;
          }
          if (absl::Status s =
                  thread.messenger().AddPeer(id, *connection.endpoint, ring_to_peer, *ring_region, credit_offset);
              !s.ok()) {
            return s;
          }
          if (absl::Status s = thread.messenger().AddReceiveRing(id, *ring_region, my_ring, peer_credit); !s.ok()) {
            return s;
          }
          thread.PeerReady(id);  // before the thread's next turn announces its map on this connection
          return absl::OkStatus();
        },
        options_.call_timeout);
    if (!connected.ok()) {
      return absl::Status(connected.code(),
                          absl::StrCat("connecting thread ", t, " to node ", id, ": ", connected.message()));
    }
  }
  std::vector<uint32_t>& known = peer_regions_[id];
  known.clear();
  for (const memory::RegionInfo& region : regions) {
    region_table_.Add(region).IgnoreError();  // a region two peers publish is checked against the first
    known.push_back(region.id);
  }
  connected_[id] = peer.incarnation();
  peer_rings_[id] = std::move(rings_for_us);
  return absl::OkStatus();
}

void Node::CountHugePages() {
  // The simulated fabric's regions are heap memory; only UCX allocates them (and may take huge pages).
  if (KindOf(*fabric_) == fabric::FabricKind::kSim) return;
  std::vector<const void*> starts = {ring_region_->data()};
  std::vector<uint64_t> sizes = {ring_region_->size()};
  for (const auto& region : data_regions_) {
    starts.push_back(region->data());
    sizes.push_back(region->size());
  }
  // Informational: if /proc/self/smaps cannot be read, none are counted.
  auto pages = memory::KernelPageBytes(starts);
  if (!pages.ok()) return;
  // Larger than the base page (4 KiB on x86, 16 or 64 KiB on some arm64 kernels): a huge page.
  const uint64_t base_page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  for (size_t i = 0; i < sizes.size(); ++i) {
    if ((*pages)[i] > base_page) huge_page_bytes_ += sizes[i];
  }
}

uint64_t Node::Generation(uint32_t peer) const {
  auto it = generations_.find(peer);
  return it == generations_.end() ? 0 : it->second;
}

absl::Status Node::UpdatePeerRegions(uint32_t peer, const std::vector<memory::RegionInfo>& regions) {
  std::vector<uint32_t> ids;
  for (const memory::RegionInfo& region : regions) ids.push_back(region.id);
  std::vector<uint32_t>& known = peer_regions_[peer];
  if (known == ids) return absl::OkStatus();
  for (auto& thread : threads_) {
    NodeThread* t = thread.get();
    absl::Status updated = t->RunAndWait(
        [t, peer, regions]() -> absl::Status {
          PeerConnection* connection = t->peer(peer);
          if (connection == nullptr) return absl::NotFoundError(absl::StrCat("not connected to node ", peer));
          absl::flat_hash_map<uint32_t, fabric::RemoteRegion> imported;
          for (const memory::RegionInfo& region : regions) {
            if (auto old = connection->regions.find(region.id); old != connection->regions.end()) {
              imported.emplace(region.id, old->second);  // a region's memory never moves while its process runs
              continue;
            }
            auto remote = connection->endpoint->ImportRegion(region.descriptor);
            if (!remote.ok()) return remote.status();
            imported.emplace(region.id, *remote);
          }
          connection->regions = std::move(imported);
          return absl::OkStatus();
        },
        options_.call_timeout);
    if (!updated.ok()) {
      return absl::Status(updated.code(), absl::StrCat("importing node ", peer, "'s regions: ", updated.message()));
    }
  }
  for (uint32_t region : known) region_table_.Remove(region);
  for (const memory::RegionInfo& region : regions) region_table_.Add(region).IgnoreError();
  known = std::move(ids);
  return absl::OkStatus();
}

absl::StatusOr<memory::LocalRegion*> Node::AllocateRegionCopy(uint32_t id, uint64_t bytes) {
  auto copy = memory::LocalRegion::Allocate(*fabric_, id, options_.node_id, bytes);
  if (!copy.ok()) return copy.status();
  MutexLock lock(&copies_mu_);
  region_copies_.push_back(std::move(*copy));
  return region_copies_.back().get();
}

absl::Status Node::ServeRegion(memory::LocalRegion* region, const std::vector<memory::Slot>& used) {
  JoinLock lock(this);
  if (served_regions_.contains(region->id())) return absl::OkStatus();
  if (!allocating_in_.contains(region->id())) {
    if (absl::Status s = slab_source_->AddRegion(region, used); !s.ok()) return s;
    allocating_in_.insert(region->id());
  }
  for (auto& thread : threads_) {
    NodeThread* t = thread.get();
    absl::Status added = t->RunAndWait(
        [t, region]() -> absl::Status {
          t->store().AddRegion(region);
          return absl::OkStatus();
        },
        options_.call_timeout);
    if (!added.ok()) {
      return absl::Status(added.code(), absl::StrCat("serving region ", region->id(), ": ", added.message()));
    }
  }
  served_regions_[region->id()] = region;
  return absl::OkStatus();
}

memory::LocalRegion* Node::ServedRegion(uint32_t region) const {
  for (const auto& own : data_regions_) {
    if (own->id() == region) return own.get();
  }
  JoinLock lock(this);
  auto it = served_regions_.find(region);
  return it == served_regions_.end() ? nullptr : it->second;
}

bool Node::Serves(uint32_t region) const {
  JoinLock lock(this);
  return served_regions_.contains(region);
}

absl::Status Node::Disconnect(uint32_t peer) {
  JoinLock lock(this);
  return DisconnectLocked(peer);
}

absl::Status Node::DisconnectLocked(uint32_t peer) {
  if (!connected_.contains(peer)) return absl::NotFoundError(absl::StrCat("not connected to node ", peer));
  absl::Status result = absl::OkStatus();
  for (auto& thread : threads_) {
    NodeThread* t = thread.get();
    // The messenger forgets the peer before the endpoint it sends through is destroyed.
    result.Update(t->RunAndWait(
        [t, peer]() -> absl::Status {
          absl::Status removed = t->messenger().RemovePeer(peer);
          t->RemovePeer(peer);
          return absl::IsNotFound(removed) ? absl::OkStatus() : removed;
        },
        options_.call_timeout));
  }
  for (uint32_t region : peer_regions_[peer]) region_table_.Remove(region);
  {
    MutexLock lock(&failed_mu_);
    failed_peers_.erase(peer);
  }
  // The next connection reuses the slot's rings. Records this one left must not stay: they never verify
  // under the new session, but one at the start of a ring looks like the new connection's first record
  // being written, and a ring its new sender keeps silent for the receiver's corrupt_after would be
  // declared bad (and again after every reconnection, since nothing overwrites it).
  if (auto slot = peer_slots_.find(peer); slot != peer_slots_.end()) {
    for (int t = 0; t < threads(); ++t) {
      msg::ClearShared(ring_region_->fabric_region().data() + ring_plan_.ring_offset(slot->second, t),
                       ring_plan_.ring_bytes());
    }
  }
  peer_regions_.erase(peer);
  peer_rings_.erase(peer);
  connected_.erase(peer);
  ++generations_[peer];  // the slot's rings get new sessions: what the old connection left never verifies
  return result;
}

std::string Node::Describe() {
  std::string out = absl::StrCat("node ", options_.node_id, " incarnation ", incarnation_, "\n");
  for (auto& thread : threads_) {
    NodeThread* t = thread.get();
    auto described = t->RunAndWait<std::string>([t]() -> absl::StatusOr<std::string> { return t->Describe(); },
                                                options_.call_timeout);
    absl::StrAppend(&out, described.ok() ? *described : described.status().ToString(), "\n");
  }
  return out;
}

absl::Status Node::JoinPeer(const PeerAddress& peer) { return JoinThroughControl(peer, /*again=*/false); }
absl::Status Node::Republish(const PeerAddress& peer) { return JoinThroughControl(peer, /*again=*/true); }
absl::Status Node::JoinInProcess(Node& peer) { return JoinDirectly(peer, /*again=*/false); }
absl::Status Node::RepublishInProcess(Node& peer) { return JoinDirectly(peer, /*again=*/true); }

absl::Status Node::JoinThroughControl(const PeerAddress& peer, bool again) {
  if (options_.in_process_peers != nullptr) {
    Node* found = options_.in_process_peers->Find(peer.control_address);
    if (found == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("joining node ", peer.node_id, ": no node of this process at ", peer.control_address));
    }
    return JoinDirectly(*found, again);
  }
  return JoinWith(
      peer.node_id, peer.control_address,
      [&](const control::NodeInfo& mine) {
        control::ControlClientOptions client_options;
        client_options.target = peer.control_address;
        client_options.cluster_token = options_.cluster_token;
        client_options.tls_ca_path = options_.tls_ca_path;
        client_options.call_timeout = options_.call_timeout;
        auto client = control::ControlClient::Create(client_options);
        if (!client.ok()) return absl::StatusOr<control::NodeInfo>(client.status());
        return (*client)->Join(mine);
      },
      again);
}

absl::Status Node::JoinDirectly(Node& peer, bool again) {
  return JoinWith(
      peer.id(), "(in process)",
      [&](const control::NodeInfo& mine) {
        control::JoinRequest request;
        *request.mutable_caller() = mine;
        return peer.OnJoin(request);
      },
      again);
}

absl::Status Node::JoinWith(uint32_t peer_id, const std::string& where,
                            const std::function<absl::StatusOr<control::NodeInfo>(const control::NodeInfo&)>& join,
                            bool again) {
  control::NodeInfo mine;
  uint64_t published = 0;  // the generation of the ring sessions `mine` gives the peer
  {
    JoinLock lock(this);
    if (!again && connected_.contains(peer_id)) return absl::OkStatus();
    auto info = InfoFor(peer_id);
    if (!info.ok()) return info.status();
    mine = std::move(*info);
    published = Generation(peer_id);
    ++joins_under_way_;
  }
  // Not under join_mu_: the peer may be joining us at the same moment, and its Join needs the lock.
  auto theirs = join(mine);
  JoinLock lock(this);
  --joins_under_way_;
  if (!theirs.ok()) {
    return absl::Status(theirs.status().code(),
                        absl::StrCat("joining node ", peer_id, " at ", where, ": ", theirs.status().message()));
  }
  if (theirs->node_id() != peer_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("expected node ", peer_id, " at ", where, ", found node ", theirs->node_id()));
  }
  absl::Status connected = Connect(*theirs);
  // The peer writes into the rings `mine` named. If this node's rings for it got new sessions meanwhile
  // (Connect replaced a connection, or the peer's own join replaced it here), the peer's records would
  // never verify: the ring would go bad after its timeout, and the repair would race the same way again.
  // Drop the connection and let the next join, made from a clean slate, publish what is current.
  if (Generation(peer_id) != published) {
    LogWarning("node", "node %u: the connection to node %u changed while joining it: joining again", options_.node_id, peer_id);
    if (connected_.contains(peer_id)) DisconnectLocked(peer_id).IgnoreError();
    return absl::UnavailableError(absl::StrCat("node ", peer_id, "'s connection changed while joining it (",
                                               connected.ok() ? "replaced" : connected.message(),
                                               "): join again"));
  }
  return connected;
}

absl::Status Node::JoinPeers() {
  const absl::Time deadline = absl::Now() + options_.join_timeout;
  std::map<uint32_t, absl::Status> failures;
  while (true) {
    failures.clear();
    for (const PeerAddress& peer : options_.peers) {
      if (absl::Status s = JoinPeer(peer); !s.ok()) failures[peer.node_id] = s;
    }
    if (failures.empty()) return absl::OkStatus();
    // Only a peer that is not up yet is worth waiting for.
    for (const auto& [id, status] : failures) {
      if (!absl::IsUnavailable(status) && !absl::IsDeadlineExceeded(status)) return status;
    }
    if (absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  std::vector<std::string> reasons;
  for (const auto& [id, status] : failures) reasons.push_back(status.ToString());
  return absl::UnavailableError(absl::StrCat("peers unreachable after ", absl::FormatDuration(options_.join_timeout),
                                             ": ", absl::StrJoin(reasons, "; ")));
}

std::vector<uint32_t> Node::connected_peers() const {
  JoinLock lock(this);
  std::vector<uint32_t> peers;
  for (const auto& [id, incarnation] : connected_) peers.push_back(id);
  std::sort(peers.begin(), peers.end());
  return peers;
}

std::vector<uint32_t> Node::failed_peers() const {
  MutexLock lock(&failed_mu_);
  return std::vector<uint32_t>(failed_peers_.begin(), failed_peers_.end());
}

std::map<uint32_t, uint64_t> Node::connected_incarnations() const {
  JoinLock lock(this);
  return std::map<uint32_t, uint64_t>(connected_.begin(), connected_.end());
}

bool Node::RaiseEpochFloor(uint64_t epoch) {
  JoinLock lock(this);
  epoch_floor_ = std::max(epoch_floor_, epoch);
  return joins_under_way_ == 0;
}

absl::StatusOr<control::NodeInfo> Node::OnJoin(const control::JoinRequest& request) {
  JoinLock lock(this);
  // Before anything is set up for the caller: refused, it has nothing to write into.
  const control::NodeInfo& caller = request.caller();
  const uint64_t mine = region_directory_.Current()->epoch();
  if (caller.configuration_epoch() < epoch_floor_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node ", caller.node_id(), " works from configuration ", caller.configuration_epoch(), "; node ",
        options_.node_id, " serves regions promoted in configuration ", epoch_floor_, ": apply it first"));
  }
  if (mine < caller.epoch_floor()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node ", options_.node_id, " works from configuration ", mine, "; node ", caller.node_id(),
        " serves regions promoted in configuration ", caller.epoch_floor(), ": join again once it applied it"));
  }
  if (absl::Status s = Connect(caller); !s.ok()) return s;
  return InfoFor(request.caller().node_id());
}

bool Node::shutdown_requested() const {
  MutexLock lock(&shutdown_mu_);
  return shutdown_requested_;
}

bool Node::WaitForShutdownRequest(absl::Duration timeout) {
  MutexLock lock(&shutdown_mu_);
  TsanRelease(&shutdown_mu_);
  shutdown_mu_.AwaitWithTimeout(absl::Condition(&shutdown_requested_), timeout);
  TsanAcquire(&shutdown_mu_);
  return shutdown_requested_;
}

void Node::OnShutdown(std::string_view reason) {
  // Only a signal: the control server waits for handlers, so stopping here would wait for itself.
  MutexLock lock(&shutdown_mu_);
  shutdown_requested_ = true;
}

}  // namespace fathom::node
