#include "platform/node/ring_plan.h"

#include <xxhash.h>

namespace fathom::node {

uint64_t RingPlan::Session(uint64_t receiver_incarnation, uint32_t receiver, uint32_t sender, int sender_thread,
                           uint64_t generation) {
  const uint64_t words[5] = {receiver_incarnation, receiver, sender, static_cast<uint64_t>(sender_thread),
                             generation};
  return XXH3_64bits(words, sizeof words) | 1;  // never 0
}

}  // namespace fathom::node
