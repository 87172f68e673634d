#include "tests/workloads/list_append.h"

#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "platform/base/mutex.h"
#include "tests/workloads/support.h"

namespace fathom::txn::workloads {
namespace {

// Runs one attempt of `ops`; fills the reads on success.
absl::Status Attempt(TransactionService& service, const std::vector<object::ObjectRef>& keys,
                     std::vector<history::MicroOp>& ops) {
  Transaction tx = service.Begin();
  for (history::MicroOp& op : ops) {
    auto bytes = tx.Read(keys[op.key]);
    if (!bytes.ok()) return bytes.status();
    std::vector<int64_t> list = DecodeList(*bytes);
    ApplyMicroOp(op, list);
    if (op.kind == history::MicroOp::Kind::kRead) continue;
    if (absl::Status s = tx.Write(keys[op.key], EncodeList(list)); !s.ok()) return s;
  }
  return tx.Commit();
}

}  // namespace

std::vector<int64_t> DecodeList(std::string_view bytes) {
  std::vector<int64_t> list(bytes.size() / 8);
  for (size_t i = 0; i < list.size(); ++i) {
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v |= uint64_t{static_cast<uint8_t>(bytes[8 * i + b])} << (8 * b);
    list[i] = static_cast<int64_t>(v);
  }
  return list;
}

std::string EncodeList(const std::vector<int64_t>& list) {
  std::string out;
  for (int64_t value : list) {
    for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>(static_cast<uint64_t>(value) >> (8 * b)));
  }
  return out;
}

void ApplyMicroOp(history::MicroOp& op, std::vector<int64_t>& list) {
  if (op.kind == history::MicroOp::Kind::kRead) {
    op.result = list;
  } else {
    list.push_back(op.value);
  }
}

std::vector<history::MicroOp> ListAppendDraws::Next(std::mt19937_64& random) {
  const int max_appends_per_key = (kListBytes - object::kHeaderBytes) / 8;
  std::vector<history::MicroOp> ops;
  const int count = 1 + static_cast<int>(random() % max_ops_);
  for (int k = 0; k < count; ++k) {
    const int key = static_cast<int>(random() % keys_);
    if (random() % 2 == 0 && appended_[key] < max_appends_per_key) {
      ++appended_[key];
      ops.push_back(history::MicroOp::Append(key, next_value_++));
    } else {
      ops.push_back(history::MicroOp::Read(key));
    }
  }
  return ops;
}

history::EventType OutcomeOf(const absl::Status& status, bool* unexpected) {
  *unexpected = false;
  if (status.ok()) return history::EventType::kOk;
  if (MayHaveCommitted(status)) return history::EventType::kInfo;
  // Certainly not committed (the checker holds the layer to that).
  if (absl::IsAborted(status) || absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status)) {
    return history::EventType::kFail;
  }
  *unexpected = true;
  return history::EventType::kInfo;
}

absl::StatusOr<ListAppendResult> RunListAppend(const std::vector<TransactionService*>& services,
                                               const ListAppendOptions& options) {
  std::vector<object::ObjectRef> keys;
  {
    Transaction tx = services[0]->Begin();
    for (int i = 0; i < options.keys; ++i) {
      auto ref = tx.Alloc(kListBytes, {.node = DataNode(services, options.data_nodes, i)});
      if (!ref.ok()) return ref.status();
      keys.push_back(*ref);  // an allocated object starts with an empty payload: the empty list
    }
    if (absl::Status s = tx.Commit(); !s.ok()) return s;
  }
  history::HistoryRecorder recorder;
  absl::Mutex mu;
  ListAppendResult result;
  absl::Status failure;
  ListAppendDraws draws(options.keys, options.max_ops);  // guarded by mu
  std::vector<std::thread> threads;
  int process = 0;
  for (size_t node = 0; node < services.size(); ++node) {
    for (int c = 0; c < options.clients_per_node; ++c, ++process) {
      threads.emplace_back([&, node, process] {
        std::mt19937_64 random(options.seed * 15485863 + process);
        for (int i = 0; i < options.transactions_per_client; ++i) {
          std::vector<history::MicroOp> ops;
          {
            MutexLock lock(&mu);
            ops = draws.Next(random);
          }
          recorder.Invoke(process, ops);
          std::vector<history::MicroOp> done = ops;
          absl::Status s = Attempt(*services[node], keys, done);
          MutexLock lock(&mu);
          bool unexpected = false;
          const history::EventType outcome = OutcomeOf(s, &unexpected);
          recorder.Complete(process, outcome, outcome == history::EventType::kOk ? done : ops);
          if (unexpected) {
            if (failure.ok()) failure = s;
            return;
          }
          if (outcome == history::EventType::kOk) {
            ++result.ok;
          } else if (outcome == history::EventType::kFail) {
            ++result.failed;
          } else {
            ++result.info;
          }
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  if (!failure.ok()) return failure;
  result.history = recorder.Text();
  auto parsed = history::ParseHistory(result.history);
  if (!parsed.ok()) return parsed.status();
  result.check = history::CheckHistory(*parsed);
  return result;
}

}  // namespace fathom::txn::workloads
