#include "bench/ycsb/fathom_backend.h"

#include <algorithm>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "bench/ycsb/record_codec.h"
#include "bench/ycsb/server_memory.h"
#include "kv/table_objects.h"
#include "platform/memory/size_classes.h"
#include "platform/base/mutex.h"
#include "txn/run_async.h"

namespace fathom::ycsb {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// A member failed or left, a connection failed or was replaced (its calls end Cancelled), a reply did not
// come in time, a commit's outcome is unknown; or Aborted once the table's own retries (64, about a
// second) ran out: a conflict that lasted, or a primary still a configuration behind the driver (its
// ZooKeeper watch lags under load, and it refuses LOCKs of a configuration it does not know yet).
bool Transient(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) || absl::IsCancelled(s) || absl::IsAborted(s);
}

}  // namespace

absl::StatusOr<txn::TxnThread*> TxnThreadOf(txn::TransactionService& txns, int thread) {
  txn::TxnThread* found_thread = nullptr;
  fathom::Notification found;
  absl::Status posted = txns.Post(thread, [&](txn::TxnThread& t) {
    found_thread = &t;
    found.Notify();
  });
  if (!posted.ok()) return posted;
  found.WaitForNotification();
  return found_thread;
}

TableShape TableShapeFor(uint64_t records, uint64_t record_bytes) {
  constexpr uint64_t kKeyBytes = 24;  // YCSB's "user" and up to 20 digits
  const kv::TableOptions defaults;
  TableShape shape;
  shape.buckets = std::max<uint64_t>(64, std::max<uint64_t>(records, 1000) / 6);  // 8 slots, 75% full
  if (record_bytes + kKeyBytes > defaults.inline_bytes) shape.inline_bytes = kv::kInlineBytesOfAPointer;
  return shape;
}

absl::StatusOr<std::unique_ptr<FathomCluster>> FathomCluster::Start(const FathomClusterOptions& options) {
  if (options.nodes < options.backups + 1) {
    return absl::InvalidArgumentError(absl::StrCat(options.nodes, " nodes cannot hold ", options.backups + 1,
                                                   " copies of each record"));
  }
  std::unique_ptr<FathomCluster> fathom(new FathomCluster());
  fathom->options_ = options;
  const uint64_t records = std::max<uint64_t>(options.records, 1000);
  const TableShape shape = TableShapeFor(records, options.record_bytes);
  kv::TableOptions table;
  table.buckets = fathom->buckets_ = shape.buckets;
  if (shape.inline_bytes != 0) table.inline_bytes = shape.inline_bytes;
  // Each node's primary copies of the buckets and records, with half again for slabs being filled.
  // A record's object: the record, its key and key length, the object header (under 64 bytes together).
  const uint64_t record_slot = memory::SlotBytes(memory::SizeClassFor(options.record_bytes + 64));
  const uint64_t bytes =
      (fathom->buckets_ * kv::BucketCapacity(table.inline_bytes) + records * record_slot) * 3 / 2 / options.nodes;
  server::EmbeddedClusterOptions cluster;
  cluster.nodes = options.nodes;
  cluster.threads = options.threads_per_node;
  cluster.fabric = options.tcp ? server::EmbeddedFabric::kUcxTcp : server::EmbeddedFabric::kUcxSharedMemory;
  cluster.memory_bytes = std::max<uint64_t>(64 * kMiB, (bytes + kMiB - 1) / kMiB * kMiB);
  cluster.transactions.backups = options.backups;
  cluster.customize = [busy_poll = options.busy_poll](node::NodeOptions& node) { node.busy_poll_window = busy_poll; };
  auto started = server::EmbeddedCluster::Start(cluster);
  if (!started.ok()) return started.status();
  fathom->cluster_ = std::move(*started);
  for (int i = 1; i <= options.nodes; ++i) fathom->services_.push_back(&fathom->cluster_->server(i).transactions());
  auto created = kv::Table::Create(*fathom->services_[0], fathom->catalog_, "usertable", table);
  if (!created.ok()) return created.status();
  for (int i = 0; i < options.nodes; ++i) {
    auto opened = kv::Table::Open(*fathom->services_[i], fathom->catalog_, "usertable");
    if (!opened.ok()) return opened.status();
    fathom->tables_.push_back(std::move(*opened));
  }
  if (absl::Status s = fathom->SetUpLanes(); !s.ok()) return s;
  return fathom;
}

absl::Status FathomCluster::SetUpLanes() {
  const int nodes = options_.nodes;
  for (int lane = 0; lane < nodes * options_.threads_per_node; ++lane) {
    const int node = lane % nodes;
    auto thread = TxnThreadOf(*services_[static_cast<size_t>(node)], lane / nodes);
    if (!thread.ok()) return thread.status();
    lanes_.push_back(std::make_unique<FathomAsyncBackend>(*thread, tables_[static_cast<size_t>(node)],
                                                          0x9E3779B97F4A7C15ULL * (static_cast<uint64_t>(lane) + 1),
                                                          options_.retry_deadline));
  }
  return absl::OkStatus();
}

absl::Status FathomCluster::Post(int lane, std::function<void()> task) {
  if (lane < 0 || lane >= lanes()) return absl::InvalidArgumentError(absl::StrCat("no lane ", lane));
  const int nodes = options_.nodes;
  return services_[static_cast<size_t>(lane % nodes)]->Post(lane / nodes,
                                                              [task = std::move(task)](txn::TxnThread&) { task(); });
}

FathomCluster::~FathomCluster() {
  // The nodes stop first: their threads use the transaction layer and the lanes.
  if (cluster_ != nullptr) cluster_->Stop();
  lanes_.clear();
  tables_.clear();
  services_.clear();
  cluster_.reset();
}

absl::StatusOr<ServerMemory> FathomCluster::ObjectMemory() {
  std::vector<MemberCounters> members;
  for (int i = 1; i <= options_.nodes; ++i) {
    const control::StatsResponse stats = cluster_->node(static_cast<uint32_t>(i)).OnStats();
    members.push_back({stats.node_id(), std::map<std::string, uint64_t>(stats.counters().begin(), stats.counters().end())});
  }
  return ClusterObjectMemory(members);
}

std::unique_ptr<Backend> FathomCluster::NewBackend() {
  const size_t node = next_.fetch_add(1) % tables_.size();
  return std::make_unique<FathomBackend>(services_[node], tables_[node], options_.retry_deadline, node + 1);
}

std::string FathomCluster::Describe() const {
  return absl::StrCat(options_.nodes, " nodes x ", options_.threads_per_node, " threads over UCX ",
                      options_.tcp ? "tcp" : "shared memory", ", f=", options_.backups, ", table of ", buckets_,
                      " buckets");
}

absl::Status FathomBackend::Retried(const std::function<absl::Status()>& attempt) {
  absl::Status s = attempt();
  if (!Transient(s) || retry_deadline_ <= absl::ZeroDuration()) return s;
  const absl::Time give_up = clock_->Now() + retry_deadline_;
  absl::Duration backoff = absl::Milliseconds(1);
  while (Transient(s) && clock_->Now() < give_up) {
    absl::SleepFor(backoff * std::uniform_real_distribution<double>(0.5, 1.5)(random_));
    backoff = std::min(backoff * 2, absl::Milliseconds(100));
    s = attempt();
  }
  return s;
}

absl::Status FathomBackend::Read(const std::string& table, const std::string& key, const FieldList* fields,
                                 Record* result) {
  return Retried([&] { return ReadOnce(key, fields, result); });
}

absl::Status FathomBackend::ReadOnce(const std::string& key, const FieldList* fields, Record* result) {
  auto bytes = table_.Get(key);
  if (!bytes.ok()) return bytes.status();
  auto record = DecodeRecord(*bytes);
  if (!record.ok()) return record.status();
  *result = ProjectFields(std::move(*record), fields);
  return absl::OkStatus();
}

absl::Status FathomBackend::Update(const std::string& table, const std::string& key, const Record& values) {
  return Retried([&] { return UpdateOnce(key, values); });
}

absl::Status FathomBackend::UpdateOnce(const std::string& key, const Record& values) {
  // Read, merge, write back, atomically: YCSB's update changes some fields and keeps the others.
  return txn::RunTransaction(*txns_, [&](txn::Transaction& tx) -> absl::Status {
    auto bytes = table_.Get(tx, key);
    if (!bytes.ok()) return bytes.status();
    auto record = DecodeRecord(*bytes);
    if (!record.ok()) return record.status();
    for (const auto& [name, value] : values) (*record)[name] = value;
    return table_.Put(tx, key, EncodeRecord(*record));
  });
}

absl::Status FathomBackend::Insert(const std::string& table, const std::string& key, const Record& values) {
  return Retried([&] { return table_.Put(key, EncodeRecord(values)); });
}

absl::Status FathomBackend::Transfer(const std::string& table, const std::string& from, const std::string& to,
                                     int64_t amount) {
  return Retried([&] { return TransferOnce(from, to, amount); });
}

absl::Status FathomBackend::TransferOnce(const std::string& from, const std::string& to, int64_t amount) {
  return txn::RunTransaction(*txns_, [&](txn::Transaction& tx) -> absl::Status {
    auto from_bytes = table_.Get(tx, from);
    if (!from_bytes.ok()) return from_bytes.status();
    auto to_bytes = table_.Get(tx, to);
    if (!to_bytes.ok()) return to_bytes.status();
    auto a = DecodeRecord(*from_bytes);
    if (!a.ok()) return a.status();
    auto b = DecodeRecord(*to_bytes);
    if (!b.ok()) return b.status();
    if (absl::Status s = ApplyTransfer(*a, from, *b, to, amount); !s.ok()) return s;
    if (absl::Status s = table_.Put(tx, from, EncodeRecord(*a)); !s.ok()) return s;
    return table_.Put(tx, to, EncodeRecord(*b));
  });
}

absl::Status FathomBackend::Delete(const std::string& table, const std::string& key) {
  return Retried([&] { return table_.Delete(key); });
}

namespace {

const absl::Status& StatusOf(const absl::Status& s) { return s; }
const absl::Status& StatusOf(const absl::StatusOr<Record>& r) { return r.status(); }

absl::StatusOr<Record> ReadResult(kv::GetResult r, const FieldList* fields) {
  if (!r.value.ok()) return r.value.status();
  auto record = DecodeRecord(*r.value);
  if (!record.ok()) return record.status();
  return ProjectFields(std::move(*record), fields);
}

// The attempts of one operation after its first failed transiently; kept alive by the callbacks of its
// current attempt. Made only then: a clock reading and a seeded generator cost more than a GET.
template <typename Result>
class Retrying : public std::enable_shared_from_this<Retrying<Result>> {
 public:
  using Attempt = std::function<void(std::function<void(Result)>)>;
  Retrying(txn::TxnThread& thread, absl::Duration deadline, uint64_t seed, Attempt attempt,
           std::function<void(Result)> done)
      : thread_(thread),
        give_up_(thread.clock().Now() + deadline),
        random_(seed),
        attempt_(std::move(attempt)),
        done_(std::move(done)) {}

  // After the first failure: the next attempt after a backoff.
  void Start() { Later(); }

 private:
  void Run() {
    auto self = this->shared_from_this();
    attempt_([self](Result r) { self->Finished(std::move(r)); });
  }
  void Finished(Result r) {
    if (!Transient(StatusOf(r)) || thread_.clock().Now() >= give_up_) return done_(std::move(r));
    Later();
  }
  void Later() {
    const absl::Duration wait = backoff_ * std::uniform_real_distribution<double>(0.5, 1.5)(random_);
    backoff_ = std::min(backoff_ * 2, absl::Milliseconds(100));
    auto self = this->shared_from_this();
    thread_.After(wait, [self] { self->Run(); });
  }

  txn::TxnThread& thread_;
  const absl::Time give_up_;
  std::mt19937_64 random_;
  const Attempt attempt_;
  const std::function<void(Result)> done_;
  absl::Duration backoff_ = absl::Milliseconds(1);
};

}  // namespace

template <typename Result>
void FathomAsyncBackend::RetryLater(std::function<void(std::function<void(Result)>)> attempt,
                                    std::function<void(Result)> done) {
  std::make_shared<Retrying<Result>>(*thread_, retry_deadline_, seed_++, std::move(attempt), std::move(done))
      ->Start();
}

template <typename Start>
void FathomAsyncBackend::WithRetries(Start start, Done done) {
  if (retry_deadline_ <= absl::ZeroDuration()) return start(std::move(done));
  // `start` is small (it names the operation's arguments): copying it costs less than keeping retry state.
  start([this, start, done = std::move(done)](absl::Status s) mutable {
    if (!Transient(s)) return done(std::move(s));
    RetryLater<absl::Status>(std::move(start), std::move(done));
  });
}

void FathomAsyncBackend::Read(const std::string& table, const std::string& key, const FieldList* fields,
                              ReadDone done) {
  // `key` and `fields` outlive `done` (async_backend.h), and so every attempt. Every operation takes this
  // path: one GET and one callback, no retry state until a transient failure.
  table_.GetAsync(*thread_, key, [this, &key, fields, done = std::move(done)](kv::GetResult r) mutable {
    absl::StatusOr<Record> result = ReadResult(std::move(r), fields);
    if (!Transient(result.status()) || retry_deadline_ <= absl::ZeroDuration()) return done(std::move(result));
    RetryLater<absl::StatusOr<Record>>(
        [this, &key, fields](std::function<void(absl::StatusOr<Record>)> attempt_done) {
          table_.GetAsync(*thread_, key,
                          [fields, attempt_done](kv::GetResult r) { attempt_done(ReadResult(std::move(r), fields)); });
        },
        std::move(done));
  });
}

void FathomAsyncBackend::Update(const std::string& table, const std::string& key, const Record& values, Done done) {
  // `key` and `values` outlive `done` (async_backend.h), and so every attempt.
  WithRetries([this, &key, &values](Done attempt_done) { StartUpdate(key, values, std::move(attempt_done)); },
              std::move(done));
}

void FathomAsyncBackend::StartUpdate(const std::string& key, const Record& values, Done done) {
  // As the blocking Update: read, merge, write back, in one transaction (retried on conflicts).
  txn::TxnThread& thread = *thread_;
  const kv::Table* kv_table = &table_;
  auto body = [&thread, kv_table, &key, &values](std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
    kv_table->GetAsync(thread, tx, key, [&thread, kv_table, tx, &key, &values, body_done](absl::StatusOr<std::string> bytes) {
      if (!bytes.ok()) return body_done(bytes.status());
      auto record = DecodeRecord(*bytes);
      if (!record.ok()) return body_done(record.status());
      for (const auto& [name, value] : values) (*record)[name] = value;
      kv_table->PutAsync(thread, tx, key, EncodeRecord(*record), body_done);
    });
  };
  txn::RetryOptions retry;
  retry.seed = seed_++;
  txn::RunTransactionAsync(thread, std::move(body), std::move(done), retry);
}

void FathomAsyncBackend::Insert(const std::string& table, const std::string& key, const Record& values, Done done) {
  WithRetries(
      [this, &key, &values](Done attempt_done) {
        table_.PutAsync(*thread_, key, EncodeRecord(values), std::move(attempt_done));
      },
      std::move(done));
}

void FathomAsyncBackend::Transfer(const std::string& table, const std::string& from, const std::string& to,
                                  int64_t amount, Done done) {
  // `from` and `to` outlive `done`, and so every attempt.
  WithRetries([this, &from, &to, amount](Done attempt_done) { StartTransfer(from, to, amount, std::move(attempt_done)); },
              std::move(done));
}

void FathomAsyncBackend::StartTransfer(const std::string& from, const std::string& to, int64_t amount, Done done) {
  // Both records read in the transaction, both written back.
  txn::TxnThread& thread = *thread_;
  const kv::Table* t = &table_;
  auto body = [&thread, t, &from, &to, amount](std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
    t->GetAsync(thread, tx, from, [&thread, t, tx, &from, &to, amount, body_done](absl::StatusOr<std::string> a) {
      if (!a.ok()) return body_done(a.status());
      t->GetAsync(thread, tx, to, [&thread, t, tx, &from, &to, amount, body_done, a](absl::StatusOr<std::string> b) {
        if (!b.ok()) return body_done(b.status());
        auto from_record = DecodeRecord(*a);
        if (!from_record.ok()) return body_done(from_record.status());
        auto to_record = DecodeRecord(*b);
        if (!to_record.ok()) return body_done(to_record.status());
        if (absl::Status s = ApplyTransfer(*from_record, from, *to_record, to, amount); !s.ok()) return body_done(s);
        std::string to_bytes = EncodeRecord(*to_record);
        t->PutAsync(thread, tx, from, EncodeRecord(*from_record),
                    [&thread, t, tx, &to, to_bytes = std::move(to_bytes), body_done](absl::Status s) mutable {
                      if (!s.ok()) return body_done(s);
                      t->PutAsync(thread, tx, to, std::move(to_bytes), body_done);
                    });
      });
    });
  };
  txn::RetryOptions retry;
  retry.seed = seed_++;
  txn::RunTransactionAsync(thread, std::move(body), std::move(done), retry);
}

void FathomAsyncBackend::Delete(const std::string& table, const std::string& key, Done done) {
  WithRetries([this, &key](Done attempt_done) { table_.DeleteAsync(*thread_, key, std::move(attempt_done)); },
              std::move(done));
}

}  // namespace fathom::ycsb
