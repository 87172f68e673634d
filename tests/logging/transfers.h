// Bank transfers driven from a test, remembering what they wrote: unlike tests/workloads/bank.h the test
// keeps the accounts (to read them again after a restart) and every balance a transfer tried to write
// (to check that what a restart brings back is a value the account really was given).
//
//   ASSIGN_OR_RETURN(auto accounts, CreateAccounts(service, {1, 2, 3}, 24, 100));
//   TransferClients clients(service, accounts, {.clients = 4, .transfers_each = 100});
//   clients.Join();                                  // or Stop() to end them early
//   ASSIGN_OR_RETURN(std::vector<int64_t> balances, ReadBalances(service, accounts));
#ifndef FATHOM_TESTS_LOGGING_TRANSFERS_H_
#define FATHOM_TESTS_LOGGING_TRANSFERS_H_

#include <atomic>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "txn/txn.h"

namespace fathom::testing {

// `count` accounts of `initial` each, round robin over `nodes`, created by one transaction.
absl::StatusOr<std::vector<object::ObjectRef>> CreateAccounts(txn::TransactionService& service,
                                                              const std::vector<uint32_t>& nodes, int count,
                                                              int64_t initial);
// Every balance, read in one read-only transaction (retried while it aborts).
absl::StatusOr<std::vector<int64_t>> ReadBalances(txn::TransactionService& service,
                                                  const std::vector<object::ObjectRef>& accounts);

struct TransferOptions {
  int clients = 4;
  int transfers_each = 0;  // 0: until Stop
  uint64_t seed = 1;
};

class TransferClients {
 public:
  TransferClients(txn::TransactionService& service, std::vector<object::ObjectRef> accounts, TransferOptions options);
  ~TransferClients();  // Stop
  // Waits until every client has made its transfers (or failed).
  void Join();
  // Asks the clients to stop after their current transfer, and waits for them.
  void Stop();

  uint64_t acknowledged() const { return acknowledged_.load(); }
  // The first error other than Aborted (a client stops at it: the outcome of that transfer is unknown).
  absl::Status first_error() const;
  // Per account, every balance a transfer attempted to write (acknowledged, unknown or aborted).
  std::vector<std::set<int64_t>> attempted_values() const;

 private:
  void Run(int client);

  txn::TransactionService& service_;
  const std::vector<object::ObjectRef> accounts_;
  const TransferOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> acknowledged_{0};
  mutable absl::Mutex mu_;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  std::vector<std::set<int64_t>> attempted_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace fathom::testing

#endif  // FATHOM_TESTS_LOGGING_TRANSFERS_H_
