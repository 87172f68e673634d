// KeyLocks: the gateway's own writers of one key take turns. Fathom's transactions are optimistic: many
// clients writing one hot key through one gateway (redis-benchmark's default: every client writes
// "key:__rand_int__") would mostly abort each other and retry until they give up. Holding a stripe per
// key while a write runs turns that into a queue; writers of other keys (other stripes) are unaffected,
// and readers never wait (GET stays a one-sided read). Writers in other processes still conflict
// optimistically as usual.
#ifndef FATHOM_RESP_KEY_LOCKS_H_
#define FATHOM_RESP_KEY_LOCKS_H_

#include <memory>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "platform/base/mutex.h"

namespace fathom::resp {

class KeyLocks {
 public:
  explicit KeyLocks(size_t stripes = 4096) : stripes_(stripes), mutexes_(new absl::Mutex[stripes]) {}

  // Holds the stripes of its keys until destroyed.
  class Held {
   public:
    Held() = default;
    Held(Held&& other) noexcept : held_(std::move(other.held_)) {}
    Held& operator=(Held&&) = delete;
    ~Held() {
      for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
        TsanRelease(*it);
        (*it)->Unlock();
      }
    }

   private:
    friend class KeyLocks;
    std::vector<absl::Mutex*> held_;
  };

  // Takes each key's stripe once, in stripe order (so two callers never wait for each other in a cycle).
  Held Lock(const std::vector<std::string_view>& keys) ABSL_NO_THREAD_SAFETY_ANALYSIS;

 private:
  const size_t stripes_;
  std::unique_ptr<absl::Mutex[]> mutexes_;
};

}  // namespace fathom::resp

#endif  // FATHOM_RESP_KEY_LOCKS_H_
