// Progress lines for calls that can take long (table create, resize, drop: a create writes every bucket,
// 18 s for 120,000 buckets here). The member does the work inside one call and cannot say how far it
// is, so the line says that the call is still running and for how long; scripts read stdout, which
// these lines (stderr) leave alone.
//
//   auto table = WithProgress("creating table users", std::cerr, [&] { return server::CreateTable(...); });
#ifndef FATHOM_TOOLS_FATHOMCTL_PROGRESS_H_
#define FATHOM_TOOLS_FATHOMCTL_PROGRESS_H_

#include <chrono>
#include <future>
#include <ostream>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fathom::fathomctl {

// Runs `call` on a thread of its own and, while it runs, writes "fathomctl: <what>: still running (Ns)"
// every `every`; once done, if that took longer than `every`, "fathomctl: <what>: done in X s".
template <typename Call>
auto WithProgress(const std::string& what, std::ostream& out, Call call,
                  absl::Duration every = absl::Seconds(5)) -> decltype(call()) {
  const absl::Time start = absl::Now();
  std::future<decltype(call())> result = std::async(std::launch::async, std::move(call));
  bool reported = false;
  while (result.wait_for(absl::ToChronoMilliseconds(every)) != std::future_status::ready) {
    out << "fathomctl: " << what << ": still running ("
        << absl::StrFormat("%.0f", absl::ToDoubleSeconds(absl::Now() - start)) << " s)" << std::endl;
    reported = true;
  }
  if (reported) {
    out << "fathomctl: " << what << ": done in "
        << absl::StrFormat("%.1f", absl::ToDoubleSeconds(absl::Now() - start)) << " s" << std::endl;
  }
  return result.get();
}

}  // namespace fathom::fathomctl

#endif  // FATHOM_TOOLS_FATHOMCTL_PROGRESS_H_
