// Node: the blocking data-path helpers (objects, RPC, ping) and counters.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "platform/base/mutex.h"
#include "platform/node/node.h"

namespace fathom::node {
namespace {

std::string ToString(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::span<const std::byte> AsBytes(std::string_view s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

}  // namespace

absl::Status Node::RunOnThread(int index, absl::AnyInvocable<absl::Status(NodeThread&)> task) {
  auto thread = Thread(index);
  if (!thread.ok()) return thread.status();
  NodeThread* t = *thread;
  return t->RunAndWait([t, task = std::move(task)]() mutable { return task(*t); }, options_.call_timeout);
}

absl::StatusOr<object::ObjectRef> Node::AllocateObject(std::string_view payload, int index) {
  auto thread = Thread(index);
  if (!thread.ok()) return thread.status();
  NodeThread* t = *thread;
  const std::string bytes(payload);
  return t->RunAndWait<object::ObjectRef>(
      [t, bytes]() -> absl::StatusOr<object::ObjectRef> {
        auto ref = t->store().Allocate(static_cast<uint32_t>(std::max<size_t>(bytes.size(), 1)));
        if (!ref.ok()) return ref.status();
        if (absl::Status s = t->store().Write(*ref, AsBytes(bytes)); !s.ok()) return s;
        return *ref;
      },
      options_.call_timeout);
}

absl::Status Node::WriteObject(const object::ObjectRef& ref, std::string_view payload, int index) {
  if (!IsLocal(ref)) {
    return absl::InvalidArgumentError(absl::StrCat(ref.address.ToString(), " belongs to node ",
                                                   memory::OwnerOfRegion(ref.address.region), ": only its owner writes it"));
  }
  auto thread = Thread(index);
  if (!thread.ok()) return thread.status();
  NodeThread* t = *thread;
  const std::string bytes(payload);
  return t->RunAndWait([t, ref, bytes]() { return t->store().Write(ref, AsBytes(bytes)); }, options_.call_timeout);
}

absl::StatusOr<std::string> Node::ReadObject(const object::ObjectRef& ref, int index) {
  auto thread = Thread(index);
  if (!thread.ok()) return thread.status();
  NodeThread* t = *thread;
  const bool local = IsLocal(ref);
  return t->StartAndWait<std::string>([t, ref, local](std::function<void(absl::StatusOr<std::string>)> done) {
    if (local) {
      std::vector<std::byte> buffer;
      auto payload = t->store().Read(ref, buffer);
      done(payload.ok() ? absl::StatusOr<std::string>(ToString(*payload)) : payload.status());
      return;
    }
    auto route = t->RouteTo(ref.address.region);
    if (!route.ok()) {
      done(absl::Status(route.status().code(), absl::StrCat(route.status().message(), " (reading ", ref.address.ToString(), ")")));
      return;
    }
    absl::Status started = t->reader().Read(*route->endpoint, *route->region, ref,
                                            [done](absl::StatusOr<std::span<const std::byte>> payload) {
                                              done(payload.ok() ? absl::StatusOr<std::string>(ToString(*payload))
                                                                : payload.status());
                                            });
    if (!started.ok()) done(started);
  }, options_.call_timeout);
}

absl::StatusOr<std::string> Node::Call(uint32_t peer, msg::MessageType type, std::string_view request, int index,
                                       absl::Duration timeout) {
  if (timeout == absl::ZeroDuration()) timeout = options_.call_timeout;
  auto thread = Thread(index);
  if (!thread.ok()) return thread.status();
  NodeThread* t = *thread;
  const std::string bytes(request);
  return t->StartAndWait<std::string>([t, peer, type, bytes, timeout](std::function<void(absl::StatusOr<std::string>)> done) {
    absl::Status posted = t->messenger().Call(peer, type, bytes, timeout, [done](absl::StatusOr<std::string_view> r) {
      done(r.ok() ? absl::StatusOr<std::string>(std::string(*r)) : r.status());
    });
    if (!posted.ok()) done(posted);
  }, timeout + absl::Seconds(1));
}

absl::StatusOr<PingStats> Node::PingPeer(uint32_t peer, int index, int count, size_t payload_bytes,
                                         absl::Duration timeout_each) {
  auto thread = Thread(index);
  if (!thread.ok()) return thread.status();
  NodeThread* t = *thread;
  const Clock* clock = options_.clock;
  // A chain on the node thread: each reply sends the next ping, so no other thread is involved per round trip.
  struct Chain {
    NodeThread* thread;
    uint32_t peer;
    int left;
    std::string payload;
    absl::Duration timeout;
    const Clock* clock;
    std::vector<absl::Duration> latencies;
    PingStats stats;
    std::function<void(absl::StatusOr<PingStats>)> done;
    void Next(std::shared_ptr<Chain> self) {
      if (left-- == 0) {
        std::sort(latencies.begin(), latencies.end());
        if (!latencies.empty()) {
          stats.p50 = latencies[latencies.size() / 2];
          stats.max = latencies.back();
        }
        done(stats);
        return;
      }
      const absl::Time start = clock->Now();
      absl::Status posted = thread->messenger().Call(
          peer, kPingMessage, payload, timeout, [self, start](absl::StatusOr<std::string_view> reply) {
            if (reply.ok() && *reply == self->payload) {
              ++self->stats.ok;
              self->latencies.push_back(self->clock->Now() - start);
            } else {
              ++self->stats.failed;
              if (self->stats.first_error.ok()) {
                self->stats.first_error = reply.ok() ? absl::DataLossError("ping reply differs") : reply.status();
              }
            }
            self->Next(self);
          });
      if (!posted.ok()) {
        // Nothing in flight: count the rest as failed at once.
        stats.failed += left + 1;
        if (stats.first_error.ok()) stats.first_error = posted;
        left = 0;
        Next(self);
      }
    }
  };
  const absl::Duration overall = timeout_each * (count + 1) + absl::Seconds(1);
  return t->StartAndWait<PingStats>([=](std::function<void(absl::StatusOr<PingStats>)> done) {
    auto chain = std::make_shared<Chain>();
    chain->thread = t;
    chain->peer = peer;
    chain->left = count;
    chain->payload = std::string(payload_bytes, 'p');
    chain->timeout = timeout_each;
    chain->clock = clock;
    chain->done = done;
    chain->Next(chain);
  }, overall);
}

std::map<std::string, uint64_t> Node::Counters() {
  std::map<std::string, uint64_t> counters;
  for (auto& thread : threads_) {
    NodeThread* t = thread.get();
    auto collected = t->RunAndWait<std::map<std::string, uint64_t>>(
        [t]() -> absl::StatusOr<std::map<std::string, uint64_t>> {
          std::map<std::string, uint64_t> c;
          const msg::MsgCounters m = t->messenger().counters();
          c["msg.messages"] = m.messages;
          c["msg.bytes"] = m.bytes;
          c["msg.rejected"] = m.rejected_total();
          const msg::Messenger::Stats& s = t->messenger().stats();
          c["msg.calls"] = s.calls;
          c["msg.one_way_sent"] = s.one_way_sent;
          c["msg.replies_sent"] = s.replies_sent;
          c["msg.timeouts"] = s.timeouts;
          c["msg.peer_failures"] = s.peer_failures;
          c["msg.owed_wakes"] = s.owed_wakes;
          c["msg.owed_wakes_rung"] = s.owed_wakes_rung;
          const msg::Messenger::RingOccupancy rings = t->messenger().send_ring_occupancy();
          c["msg.send_ring_used_bytes"] = rings.used_bytes;
          c["msg.send_ring_bytes"] = rings.capacity_bytes;
          const object::ReadStats& r = t->reader().stats();
          c["object.remote_reads"] = r.reads;
          c["object.remote_copies"] = r.copies;
          c["object.torn_retries"] = r.torn_retries;
          c["object.locked_retries"] = r.locked_retries;
          const fabric::MessageCounts f = t->worker().message_counts();
          c["fabric.batches_sent"] = f.batches_sent;
          c["fabric.records_sent"] = f.records_sent;
          c["fabric.batches_served"] = f.batches_served;
          c["fabric.replies_sent"] = f.replies_sent;
          c["fabric.replies_with_requests"] = f.replies_with_requests;
          c["node.unrouted_completions"] = t->unrouted_completions();
          c["node.retired_endpoints"] = t->retired_endpoints();
          const memory::SlabAllocator::Stats& a = t->allocator().stats();
          c["memory.slot_bytes_allocated"] = a.allocated_bytes;
          c["memory.slot_bytes_freed"] = a.freed_bytes;
          return c;
        },
        options_.call_timeout);
    if (!collected.ok()) continue;
    for (const auto& [name, value] : *collected) counters[name] += value;
  }
  return counters;
}

void Node::SetReplicaDigestSource(ReplicaDigestSource source) {
  MutexLock lock(&sources_mu_);
  replica_digests_ = std::move(source);
}

absl::StatusOr<std::vector<control::ReplicaDigest>> Node::OnReplicaDigests() {
  ReplicaDigestSource source;
  {
    MutexLock lock(&sources_mu_);
    source = replica_digests_;
  }
  if (!source) return std::vector<control::ReplicaDigest>{};
  return source();
}

control::StatsResponse Node::OnStats() {
  control::StatsResponse response;
  response.set_node_id(options_.node_id);
  response.set_incarnation(incarnation_);
  response.set_uptime_micros(absl::ToInt64Microseconds(options_.clock->Now() - start_time_));
  for (const auto& [name, value] : Counters()) (*response.mutable_counters())[name] = value;
  (*response.mutable_counters())["node.peers"] = connected_peers().size();
  // Gauges of the memory it serves objects from (its own regions and promoted copies) and of the copies it
  // holds as a backup: docs/formats/control.md.
  if (slab_source_ != nullptr) {
    (*response.mutable_counters())["memory.region_bytes"] = slab_source_->region_bytes();
    (*response.mutable_counters())["memory.carved_bytes"] = slab_source_->carved_bytes();
  }
  (*response.mutable_counters())["memory.huge_page_bytes"] = huge_page_bytes_;
  {
    MutexLock lock(&copies_mu_);
    uint64_t copies = 0;
    for (const auto& copy : region_copies_) copies += copy->size();
    (*response.mutable_counters())["memory.region_copy_bytes"] = copies;
  }
  std::map<std::string, uint64_t> extra;
  {
    MutexLock lock(&sources_mu_);
    for (const auto& source : counter_sources_) source(extra);
  }
  for (const auto& [name, value] : extra) (*response.mutable_counters())[name] = value;
  return response;
}

}  // namespace fathom::node
