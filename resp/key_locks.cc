#include "resp/key_locks.h"

#include <algorithm>
#include <functional>
#include <string>

#include "platform/base/mutex.h"

namespace fathom::resp {

KeyLocks::Held KeyLocks::Lock(const std::vector<std::string_view>& keys) {
  std::vector<size_t> stripes;
  stripes.reserve(keys.size());
  for (std::string_view key : keys) stripes.push_back(std::hash<std::string_view>()(key) % stripes_);
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  Held held;
  for (size_t stripe : stripes) {
    mutexes_[stripe].Lock();
    TsanAcquire(&mutexes_[stripe]);  // Debian's Abseil is not visible to TSan (platform/base/mutex.h)
    held.held_.push_back(&mutexes_[stripe]);
  }
  return held;
}

}  // namespace fathom::resp
