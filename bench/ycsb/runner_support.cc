#include "bench/ycsb/runner_support.h"

#include <algorithm>
#include <cstdio>

#include "absl/time/clock.h"
#include "platform/base/mutex.h"

namespace fathom::ycsb {
namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t ClientSeed(uint64_t seed, bool load, int client) {
  return Mix(seed ^ Mix((load ? 0x10000 : 0x20000) + static_cast<uint64_t>(client)));
}

ProgressReporter::ProgressReporter(const char* phase, absl::Duration interval, const std::atomic<int64_t>* done,
                                   Timeline timeline, std::function<std::string()> stall_report)
    : phase_(phase),
      interval_(interval),
      done_(done),
      timeline_(std::move(timeline)),
      stall_report_(std::move(stall_report)),
      thread_([this] { Loop(); }) {}

ProgressReporter::~ProgressReporter() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.Signal();
  thread_.join();
}

void ProgressReporter::Loop() {
  const absl::Time start = absl::Now();
  absl::Time last_time = start;
  int64_t last_done = 0;
  FILE* timeline = nullptr;
  if (!timeline_.path.empty()) {
    timeline = std::fopen(timeline_.path.c_str(), "w");
    if (timeline == nullptr) std::fprintf(stderr, "cannot write the timeline to %s\n", timeline_.path.c_str());
  }
  const absl::Duration tick = timeline != nullptr ? std::min(interval_, timeline_.interval) : interval_;
  absl::Time next_tick = start + tick;
  int64_t progress_done = 0;                       // done at the last time it changed
  absl::Time progress_at = start;                  // ... which was then
  absl::Time reported_at = absl::InfinitePast();   // the last stall report
  MutexLock lock(&mu_);
  while (true) {
    while (!stop_ && !WaitWithDeadline(&cv_, &mu_, next_tick)) {
    }
    const absl::Time now = absl::Now();
    const int64_t done = done_->load(std::memory_order_relaxed);
    if (timeline != nullptr) {
      std::fprintf(timeline, "%lld %lld\n", static_cast<long long>(absl::ToUnixMillis(now)),
                   static_cast<long long>(done));
    }
    if (stop_) break;
    next_tick += tick;
    if (done != progress_done) {
      progress_done = done;
      progress_at = now;
    } else if (stall_report_ && now - progress_at >= kStallAfter && now - reported_at >= kStallAgain) {
      reported_at = now;
      const std::string report = stall_report_();
      std::fprintf(stderr, "[STALL] no operation completed for %s:\n%s", absl::FormatDuration(now - progress_at).c_str(),
                   report.c_str());
    }
    if (now - last_time < interval_) continue;
    const double rate = static_cast<double>(done - last_done) / absl::ToDoubleSeconds(now - last_time);
    std::fprintf(stderr, "%s %lld sec: %lld operations; %.1f current ops/sec\n", phase_,
                 static_cast<long long>(absl::ToInt64Seconds(now - start)), static_cast<long long>(done), rate);
    last_time = now;
    last_done = done;
  }
  if (timeline != nullptr) std::fclose(timeline);
}

}  // namespace fathom::ycsb
