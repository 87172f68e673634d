// What the SSD log costs and how far it lags:
//   1. log throughput on one node: states appended by one thread, persisted by the writer (sync off/on);
//   2. commit throughput of a 3-node embedded cluster (shm, f = 1, closed loop, read-write transactions
//      of 2 objects) with logging off, async and sync (Durability::kSync: Commit waits for every
//      replica's log), and the lag sampled every millisecond meanwhile.
//
//   bazel run -c opt //logging:log_benchmark -- --commits_per_thread=5000 --rounds=3
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "logging/object_log.h"
#include "logging/testing/logged_cluster.h"
#include "txn/txn_options.h"
#include "tests/workloads/closed_loop.h"
#include "tests/workloads/support.h"

ABSL_FLAG(std::string, dir, "/tmp/fathom_log_benchmark", "where the logs go (wiped first)");
ABSL_FLAG(int, appends, 200000, "states appended in the log throughput run");
ABSL_FLAG(int, sync_appends, 5000, "states appended with sync per batch");
ABSL_FLAG(int, commits_per_thread, 5000, "closed loop: commits per node thread (6 threads)");
ABSL_FLAG(int, depth, 4, "closed loop: transactions in flight per node thread");
ABSL_FLAG(int, rounds, 3, "closed loop runs per mode (alternating off/async/sync)");
ABSL_FLAG(bool, sync, true, "also run sync durability rounds (a tenth of the commits: they wait for the disk)");
ABSL_FLAG(absl::Duration, batch_delay, absl::Milliseconds(1), "ObjectLogOptions::batch_delay");
ABSL_FLAG(bool, raw, true, "run the log throughput part");
ABSL_FLAG(int64_t, fold_bytes, fathom::logging::ObjectLogOptions().fold_bytes, "ObjectLogOptions::fold_bytes");

namespace fathom::logging {
namespace {

void Die(const absl::Status& s) {
  fprintf(stderr, "%s\n", s.ToString().c_str());
  std::exit(1);
}

// CPU seconds this process used so far (every thread: node threads, log writers, RocksDB's own). On a
// shared machine this is steadier than throughput: other agents' load takes wall time, not our CPU time.
double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void LogThroughput(bool sync, int appends) {
  const std::string dir = absl::StrCat(absl::GetFlag(FLAGS_dir), "/raw", sync ? "_sync" : "");
  std::filesystem::remove_all(dir);
  ObjectLogOptions options{.dir = dir, .node_id = 1, .sync = sync};
  options.fold_bytes = absl::GetFlag(FLAGS_fold_bytes);
  auto log = ObjectLog::Open(options);
  if (!log.ok()) Die(log.status());
  const absl::Time start = absl::Now();
  const double cpu_start = ProcessCpuSeconds();
  for (int i = 0; i < appends; ++i) {
    ObjectState s;
    s.address = memory::GlobalAddress{1 << 16, static_cast<uint32_t>(64 * (i % 10000))};
    s.capacity = 64;
    s.flags = 1;
    s.version = 1 + i / 10000;
    s.payload = std::string(8, 'x');
    (*log)->Append(std::move(s));
  }
  const absl::Duration enqueued = absl::Now() - start;
  if (absl::Status s = (*log)->WaitForPersisted(absl::Minutes(5)); !s.ok()) Die(s);
  const absl::Duration persisted = absl::Now() - start;
  const double cpu = ProcessCpuSeconds() - cpu_start;
  const ObjectLogStats stats = (*log)->Stats();
  printf("log throughput, sync=%d: %d states (8-byte payloads, 10000 objects): enqueue %.0f/s, persisted %.0f/s, "
         "CPU %.2f us/state, %lu batches (%.0f states each), %lu folds, %.1f MB values\n",
         sync, appends, appends / absl::ToDoubleSeconds(enqueued), appends / absl::ToDoubleSeconds(persisted),
         cpu * 1e6 / appends, stats.batches, double(stats.persisted) / std::max<uint64_t>(1, stats.batches),
         stats.folds, stats.bytes / 1e6);
}

// Commits per second of one closed-loop run. (Process CPU per commit says little here: node threads poll
// while they wait, so it tracks 1 / throughput.)
enum class Mode { kOff, kAsync, kSync };
const char* ModeName(Mode mode) { return mode == Mode::kOff ? "off" : mode == Mode::kAsync ? "async" : "sync"; }

double CommitThroughput(Mode mode, int round) {
  const bool logging = mode != Mode::kOff;
  testing::LoggedClusterOptions options;
  options.cluster.nodes = 3;
  options.cluster.threads = 2;
  options.cluster.memory_bytes = 16 << 20;
  options.root = absl::StrCat(absl::GetFlag(FLAGS_dir), "/cluster");
  std::filesystem::remove_all(options.root);
  options.logging = logging;
  options.log.batch_delay = absl::GetFlag(FLAGS_batch_delay);
  options.log.fold_bytes = absl::GetFlag(FLAGS_fold_bytes);
  options.txn.durability = mode == Mode::kSync ? txn::Durability::kSync : txn::Durability::kAsync;
  // Sync durability is for surviving a power cut, so its logs fsync every batch as they would in use.
  options.log.sync = mode == Mode::kSync;
  auto cluster = testing::LoggedCluster::Start(options);
  if (!cluster.ok()) Die(cluster.status());
  std::vector<object::ObjectRef> objects;
  for (int made = 0; made < 1000;) {
    txn::Transaction tx = (*cluster)->service(1).Begin();
    for (int i = 0; i < 50 && made < 1000; ++i, ++made) {
      auto ref = tx.Alloc(8, {.node = static_cast<uint32_t>(1 + made % 3)});
      if (!ref.ok()) Die(ref.status());
      if (absl::Status s = tx.Write(*ref, txn::workloads::EncodeInt(1000)); !s.ok()) Die(s);
      objects.push_back(*ref);
    }
    if (absl::Status s = tx.Commit(); !s.ok()) Die(s);
  }
  // The lag, sampled every millisecond on every node.
  std::atomic<bool> done{false};
  uint64_t max_lag_records = 0, max_lag_micros = 0, samples = 0, sum_lag_micros = 0;
  std::thread sampler([&] {
    while (!done.load()) {
      for (int i = 1; i <= 3 && logging; ++i) {
        const ObjectLogStats s = (*cluster)->log(i)->Stats();
        max_lag_records = std::max(max_lag_records, s.lag_records);
        max_lag_micros = std::max(max_lag_micros, s.lag_micros);
        sum_lag_micros += s.lag_micros;
        ++samples;
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
  });
  txn::workloads::LoadSpec spec;
  spec.kind = txn::workloads::TxnKind::kReadWrite;
  spec.objects = 2;
  spec.depth = absl::GetFlag(FLAGS_depth);
  spec.commits_per_thread = absl::GetFlag(FLAGS_commits_per_thread) / (mode == Mode::kSync ? 10 : 1);
  spec.seed = round + 1;
  auto result = txn::workloads::RunClosedLoop((*cluster)->services(), objects, spec);
  done = true;
  sampler.join();
  if (!result.ok()) Die(result.status());
  std::string lag = "-";
  if (logging) {
    if (absl::Status s = (*cluster)->WaitForQuiescence(); !s.ok()) Die(s);
    const absl::Time start = absl::Now();
    if (absl::Status s = (*cluster)->WaitForLogs(); !s.ok()) Die(s);
    uint64_t persisted = 0, batches = 0, folds = 0;
    for (int i = 1; i <= 3; ++i) {
      const ObjectLogStats stats = (*cluster)->log(i)->Stats();
      persisted += stats.persisted;
      batches += stats.batches;
      folds += stats.folds;
    }
    lag = absl::StrFormat(
        "lag max %lu states / %.2f ms, mean %.3f ms; %lu states persisted in %lu batches, %lu folds; drained %.1f ms "
        "after",
        max_lag_records, max_lag_micros / 1e3, samples ? sum_lag_micros / 1e3 / samples : 0.0, persisted, batches, folds,
        absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  printf("commits, logging %-5s round %d: %.0f commits/s, p50 %.0f us, p99 %.0f us, %lu aborted; %s\n",
         ModeName(mode), round, result->commits_per_second(),
         absl::ToDoubleMicroseconds(result->Percentile(0.5)), absl::ToDoubleMicroseconds(result->Percentile(0.99)),
         result->aborted, lag.c_str());
  fflush(stdout);
  return result->commits_per_second();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace
}  // namespace fathom::logging

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_raw)) {
    fathom::logging::LogThroughput(false, absl::GetFlag(FLAGS_appends));
    fathom::logging::LogThroughput(true, absl::GetFlag(FLAGS_sync_appends));
  }
  // Off and async alternate, and each round's ratio compares two runs seconds apart: the machine is
  // shared, so single figures swing; the median ratio is the figure to quote.
  using fathom::logging::Mode;
  std::vector<double> off, async, sync, ratios, sync_ratios;
  for (int round = 1; round <= absl::GetFlag(FLAGS_rounds); ++round) {
    off.push_back(fathom::logging::CommitThroughput(Mode::kOff, round));
    async.push_back(fathom::logging::CommitThroughput(Mode::kAsync, round));
    if (absl::GetFlag(FLAGS_sync)) {
      sync.push_back(fathom::logging::CommitThroughput(Mode::kSync, round));
      sync_ratios.push_back(sync.back() / off.back());
    }
    ratios.push_back(async.back() / off.back());
  }
  if (!ratios.empty()) {
    printf("commits, %zu rounds: median off %.0f/s, median async %.0f/s, median async/off %.3f (min %.3f, max %.3f)\n",
           ratios.size(), fathom::logging::Median(off), fathom::logging::Median(async),
           fathom::logging::Median(ratios), *std::min_element(ratios.begin(), ratios.end()),
           *std::max_element(ratios.begin(), ratios.end()));
  }
  if (!sync_ratios.empty()) {
    printf("commits, %zu rounds: median sync %.0f/s, median sync/off %.3f (min %.3f, max %.3f)\n", sync_ratios.size(),
           fathom::logging::Median(sync), fathom::logging::Median(sync_ratios),
           *std::min_element(sync_ratios.begin(), sync_ratios.end()),
           *std::max_element(sync_ratios.begin(), sync_ratios.end()));
  }
  return 0;
}
