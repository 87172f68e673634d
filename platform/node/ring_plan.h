// RingPlan: where a node keeps, in its one ring region, the receive rings its peers write into and the
// credit words its own threads receive heads in. Offsets follow from (peer slot, thread), so the same
// peer always gets the same rings, and both directions of a Join publish identical locations.
//
//   [ring (slot 0, thread 0)] [ring (0, 1)] ... [ring (max_peers-1, threads-1)] [credits, 64 bytes each]
#ifndef FATHOM_PLATFORM_NODE_RING_PLAN_H_
#define FATHOM_PLATFORM_NODE_RING_PLAN_H_

#include <cstdint>

namespace fathom::node {

class RingPlan {
 public:
  RingPlan(int max_peers, int threads, uint32_t ring_bytes)
      : max_peers_(max_peers), threads_(threads), ring_bytes_(ring_bytes) {}

  uint64_t region_bytes() const { return credits_start() + uint64_t(max_peers_) * threads_ * kCreditStride; }
  // The ring that thread `sender_thread` of the peer in `slot` writes into.
  uint64_t ring_offset(int slot, int sender_thread) const {
    return (uint64_t(slot) * threads_ + sender_thread) * ring_bytes_;
  }
  // The credit word where the peer in `slot` writes back the head of the ring our `thread` sends into.
  uint64_t credit_offset(int slot, int thread) const {
    return credits_start() + (uint64_t(slot) * threads_ + thread) * kCreditStride;
  }
  uint32_t ring_bytes() const { return ring_bytes_; }
  int max_peers() const { return max_peers_; }

  // The session seeding a ring's checksums: fresh for every incarnation of the receiver and every
  // connection generation of the slot (so records a previous connection left in the ring never verify),
  // and the same whichever side initiated the Join.
  static uint64_t Session(uint64_t receiver_incarnation, uint32_t receiver, uint32_t sender, int sender_thread,
                          uint64_t generation);

 private:
  static constexpr uint64_t kCreditStride = 64;  // a cache line each: credits are written remotely
  uint64_t credits_start() const { return uint64_t(max_peers_) * threads_ * ring_bytes_; }
  int max_peers_;
  int threads_;
  uint32_t ring_bytes_;
};

}  // namespace fathom::node

#endif  // FATHOM_PLATFORM_NODE_RING_PLAN_H_
