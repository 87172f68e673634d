#include "bench/ycsb/async_runner.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/ycsb/runner_support.h"
#include "platform/base/mutex.h"

namespace fathom::ycsb {
namespace {

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// Starts `op` on `db` and calls `done` once it finished, recording its latency (as CoreWorkload::Execute
// does for the synchronous driver) unless `measurements` is null.
void StartOperation(AsyncBackend& db, const std::string& table, const PlannedOperation& op,
                    Measurements* measurements, std::function<void()> done) {
  const uint64_t start = NowNs();
  auto record = [measurements, start](Operation type, const absl::Status& status) {
    if (measurements != nullptr) measurements->Record(type, NowNs() - start, status);
  };
  switch (op.op) {
    case Operation::kRead:
      return db.Read(table, op.key, op.fields.get(), [record, done](absl::StatusOr<Record> r) {
        record(Operation::kRead, r.status());
        done();
      });
    case Operation::kUpdate:
      return db.Update(table, op.key, op.values, [record, done](absl::Status s) {
        record(Operation::kUpdate, s);
        done();
      });
    case Operation::kInsert:
      return db.Insert(table, op.key, op.values, [record, done](absl::Status s) {
        record(Operation::kInsert, s);
        done();
      });
    case Operation::kScan:
      return db.Scan(table, op.key, op.scan_length, op.fields.get(), [record, done](absl::Status s) {
        record(Operation::kScan, s);
        done();
      });
    case Operation::kReadModifyWrite:
      // As YCSB: the read and the update are measured on their own, and the pair as READ-MODIFY-WRITE.
      return db.Read(table, op.key, op.fields.get(),
                     [&db, &table, &op, measurements, record, done](absl::StatusOr<Record> r) {
                       record(Operation::kRead, r.status());
                       const uint64_t update_start = NowNs();
                       absl::Status read = r.status();
                       db.Update(table, op.key, op.values,
                                 [measurements, record, done, update_start, read](absl::Status s) {
                                   if (measurements != nullptr) {
                                     measurements->Record(Operation::kUpdate, NowNs() - update_start, s);
                                   }
                                   record(Operation::kReadModifyWrite, read.ok() ? s : read);
                                   done();
                                 });
                     });
    case Operation::kTransfer:
      return db.Transfer(table, op.key, op.to_key, op.amount, [record, done](absl::Status s) {
        record(Operation::kTransfer, s);
        done();
      });
    case Operation::kDelete:
      return done();
  }
}

// Budget slots a lane takes at once: its clients run them on one thread, so a lane that took the last
// ones finishes them within a fraction of a millisecond of the others.
constexpr int64_t kLaneChunk = 32;

// What every client of one pass shares.
struct Pass {
  CoreWorkload* workload = nullptr;
  bool load = false;
  bool measure = false;
  // Per lane: its clients' share of the budget and of the operations done (they all run on its thread).
  std::vector<std::unique_ptr<ThreadShare>> lane_shares;
  std::atomic<int> clients_left{0};
  fathom::Notification finished;

  void ClientFinished() {
    if (clients_left.fetch_sub(1, std::memory_order_acq_rel) == 1) finished.Notify();
  }
};

// One closed-loop client: on its lane's thread, takes an operation from the budget, starts it, and takes
// the next when it finished. An operation that completes inside the call that started it does not recurse:
// the loop in Run() goes on instead.
class Client {
 public:
  Client(int lane, AsyncBackend* db, Measurements* measurements, std::unique_ptr<CoreWorkload::ThreadState> state)
      : lane_(lane), db_(db), measurements_(measurements), state_(std::move(state)) {}

  void Start(Pass* pass) {
    pass_ = pass;
    share_ = pass->lane_shares[static_cast<size_t>(lane_)].get();
    Run();
  }

 private:
  void Run() {
    while (share_->Take()) {
      auto op = std::make_shared<PlannedOperation>(pass_->load ? pass_->workload->PlanInsert(*state_)
                                                               : pass_->workload->PlanTransaction(*state_));
      in_flight_ = true;
      starting_ = true;
      StartOperation(*db_, pass_->workload->config().table, *op, pass_->measure ? measurements_ : nullptr,
                     [this, op] { Finished(*op); });
      starting_ = false;
      if (in_flight_) return;  // Finished() continues the loop
    }
    share_->Flush();  // before the pass can end: the count is read once every client finished
    pass_->ClientFinished();
  }

  void Finished(const PlannedOperation& op) {
    if (absl::Status finished = pass_->workload->Finish(op); !finished.ok() && pass_->measure) {
      measurements_->Record(Operation::kInsert, 0,
                 absl::InternalError(absl::StrCat("acknowledging the insert: ", finished.ToString())));
    }
    if (pass_->measure) share_->CountDone();
    in_flight_ = false;
    if (!starting_) Run();
  }

  const int lane_;
  AsyncBackend* const db_;
  Measurements* const measurements_;  // the lane's (only its thread records)
  const std::unique_ptr<CoreWorkload::ThreadState> state_;
  Pass* pass_ = nullptr;
  ThreadShare* share_ = nullptr;  // the lane's
  bool in_flight_ = false;
  bool starting_ = false;
};

}  // namespace

absl::StatusOr<PhaseResult> RunPhaseAsync(CoreWorkload& workload, AsyncLanes& lanes, const RunOptions& options) {
  if (options.target_ops_per_sec > 0) {
    return absl::InvalidArgumentError("a target rate is not supported with asynchronous clients");
  }
  if (workload.config().insertion_retry_limit > 0) {
    return absl::InvalidArgumentError(
        "core_workload_insertion_retry_limit > 0 is not supported with asynchronous clients");
  }
  if (lanes.lanes() < 1) return absl::InvalidArgumentError("no lanes to run clients on");
  const bool load = options.phase == Phase::kLoad;
  const int clients = std::max(1, options.threads);
  std::vector<Measurements> measurements(static_cast<size_t>(lanes.lanes()));
  std::vector<std::unique_ptr<Client>> all;
  for (int c = 0; c < clients; ++c) {
    const int lane = c % lanes.lanes();
    all.push_back(std::make_unique<Client>(lane, &lanes.backend(lane), &measurements[static_cast<size_t>(lane)],
                                           workload.NewThreadState(ClientSeed(options.seed, load, c))));
  }
  std::atomic<int64_t> operations_done{0};

  // Runs every client until `budget` is spent.
  auto run_pass = [&](Budget& budget, bool measure) -> absl::Status {
    Pass pass;
    pass.workload = &workload;
    pass.load = load;
    pass.measure = measure;
    for (int lane = 0; lane < lanes.lanes(); ++lane) {
      pass.lane_shares.push_back(std::make_unique<ThreadShare>(budget, operations_done, kLaneChunk));
    }
    pass.clients_left = clients;
    absl::Status posted;
    for (int c = 0; c < clients; ++c) {
      Client* client = all[static_cast<size_t>(c)].get();
      absl::Status s = lanes.Post(c % lanes.lanes(), [client, &pass] { client->Start(&pass); });
      if (!s.ok()) {
        posted = s;
        pass.ClientFinished();
      }
    }
    pass.finished.WaitForNotification();
    return posted;
  };

  if (!load && options.warmup_ops > 0) {
    Budget warmup(options.warmup_ops);
    if (absl::Status s = run_pass(warmup, false); !s.ok()) return s;
  }
  const absl::Time start = absl::Now();
  Budget budget(load ? workload.config().insert_count : workload.config().operation_count,
                load ? absl::InfiniteFuture() : start + options.max_execution_time);
  absl::Status posted;
  {
    ProgressReporter progress(load ? "load" : "run", options.status_interval, &operations_done,
                              load ? Timeline{} : options.timeline, [&lanes] { return lanes.StallReport(); });
    posted = run_pass(budget, true);
  }
  PhaseResult result;
  result.phase = load ? "load" : "run";
  result.runtime = absl::Now() - start;
  if (!posted.ok()) return absl::Status(posted.code(), absl::StrCat("starting clients: ", posted.message()));
  result.operations = static_cast<uint64_t>(operations_done.load());
  for (const Measurements& m : measurements) result.measurements.Merge(m);
  return result;
}

}  // namespace fathom::ycsb
