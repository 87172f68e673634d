#include "tests/workloads/list_append.h"

#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "platform/base/mutex.h"
#include "tests/workloads/support.h"

namespace fathom::txn::workloads {
namespace {

constexpr uint32_t kListBytes = 2048;  // room for 256 elements per key

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

// Runs one attempt of `ops`; fills the reads on success.
absl::Status Attempt(TransactionService& service, const std::vector<object::ObjectRef>& keys,
                     std::vector<history::MicroOp>& ops) {
  Transaction tx = service.Begin();
  for (history::MicroOp& op : ops) {
    auto bytes = tx.Read(keys[op.key]);
    if (!bytes.ok()) return bytes.status();
    std::vector<int64_t> list = DecodeList(*bytes);
    if (op.kind == history::MicroOp::Kind::kRead) {
      op.result = list;
      continue;
    }
    list.push_back(op.value);
    if (absl::Status s = tx.Write(keys[op.key], EncodeList(list)); !s.ok()) return s;
  }
  return tx.Commit();
}

}  // namespace

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
  const int max_appends_per_key = (kListBytes - object::kHeaderBytes) / 8;
  history::HistoryRecorder recorder;
  absl::Mutex mu;
  ListAppendResult result;
  absl::Status failure;
  std::vector<int> appended(options.keys, 0);  // guarded by mu: a key's list must never overflow
  int64_t next_value = 1;                      // guarded by mu: unique across the run
  std::vector<std::thread> threads;
  int process = 0;
  for (size_t node = 0; node < services.size(); ++node) {
    for (int c = 0; c < options.clients_per_node; ++c, ++process) {
      threads.emplace_back([&, node, process] {
        std::mt19937_64 random(options.seed * 15485863 + process);
        for (int i = 0; i < options.transactions_per_client; ++i) {
          std::vector<history::MicroOp> ops;
          const int count = 1 + static_cast<int>(random() % options.max_ops);
          {
            MutexLock lock(&mu);
            for (int k = 0; k < count; ++k) {
              const int key = static_cast<int>(random() % options.keys);
              if (random() % 2 == 0 && appended[key] < max_appends_per_key) {
                ++appended[key];  // counted even if the attempt fails: room is never overcommitted
                ops.push_back(history::MicroOp::Append(key, next_value++));
              } else {
                ops.push_back(history::MicroOp::Read(key));
              }
            }
          }
          recorder.Invoke(process, ops);
          std::vector<history::MicroOp> done = ops;
          absl::Status s = Attempt(*services[node], keys, done);
          MutexLock lock(&mu);
          if (s.ok()) {
            recorder.Complete(process, history::EventType::kOk, done);
            ++result.ok;
          } else if (MayHaveCommitted(s)) {
            recorder.Complete(process, history::EventType::kInfo, ops);
            ++result.info;
          } else if (absl::IsAborted(s) || absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)) {
            // Certainly not committed (the checker holds the layer to that).
            recorder.Complete(process, history::EventType::kFail, ops);
            ++result.failed;
          } else {
            recorder.Complete(process, history::EventType::kInfo, ops);
            if (failure.ok()) failure = s;
            return;
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
