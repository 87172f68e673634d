#include "tests/logging/transfers.h"

#include <random>

#include "platform/base/mutex.h"
#include "tests/workloads/support.h"

namespace fathom::testing {

using txn::workloads::DecodeInt;
using txn::workloads::EncodeInt;

absl::StatusOr<std::vector<object::ObjectRef>> CreateAccounts(txn::TransactionService& service,
                                                              const std::vector<uint32_t>& nodes, int count,
                                                              int64_t initial) {
  std::vector<object::ObjectRef> accounts;
  txn::Transaction tx = service.Begin();
  for (int i = 0; i < count; ++i) {
    auto ref = tx.Alloc(8, {.node = nodes[i % nodes.size()]});
    if (!ref.ok()) return ref.status();
    if (absl::Status s = tx.Write(*ref, EncodeInt(initial)); !s.ok()) return s;
    accounts.push_back(*ref);
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return accounts;
}

absl::StatusOr<std::vector<int64_t>> ReadBalances(txn::TransactionService& service,
                                                  const std::vector<object::ObjectRef>& accounts) {
  std::vector<int64_t> balances;
  txn::RetryOptions retry;
  retry.max_attempts = 1000;
  absl::Status s = txn::RunTransaction(service, [&](txn::Transaction& tx) -> absl::Status {
    balances.clear();
    auto all = tx.ReadMany(accounts);
    if (!all.ok()) return all.status();
    for (const std::string& bytes : *all) {
      auto balance = DecodeInt(bytes);
      if (!balance.ok()) return balance.status();
      balances.push_back(*balance);
    }
    return absl::OkStatus();
  }, retry);
  if (!s.ok()) return s;
  return balances;
}

TransferClients::TransferClients(txn::TransactionService& service, std::vector<object::ObjectRef> accounts,
                                 TransferOptions options)
    : service_(service), accounts_(std::move(accounts)), options_(options), attempted_(accounts_.size()) {
  for (int c = 0; c < options_.clients; ++c) threads_.emplace_back([this, c] { Run(c); });
}

TransferClients::~TransferClients() { Stop(); }

void TransferClients::Join() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void TransferClients::Stop() {
  stop_ = true;
  Join();
}

absl::Status TransferClients::first_error() const {
  MutexLock lock(&mu_);
  return first_error_;
}

std::vector<std::set<int64_t>> TransferClients::attempted_values() const {
  MutexLock lock(&mu_);
  return attempted_;
}

void TransferClients::Run(int client) {
  std::mt19937_64 random(options_.seed * 7919 + client);
  const int n = static_cast<int>(accounts_.size());
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::uniform_int_distribution<int64_t> amount_of(1, 40);
  txn::RetryOptions retry;
  retry.max_attempts = 1000;
  retry.seed = random();
  for (int i = 0; !stop_.load() && (options_.transfers_each == 0 || i < options_.transfers_each); ++i) {
    const int from = pick(random);
    const int to = (from + 1 + pick(random) % (n - 1)) % n;
    const int64_t amount = amount_of(random);
    bool moved = false;
    absl::Status s = txn::RunTransaction(service_, [&](txn::Transaction& tx) -> absl::Status {
      moved = false;
      auto a = tx.Read(accounts_[from]);
      if (!a.ok()) return a.status();
      auto b = tx.Read(accounts_[to]);
      if (!b.ok()) return b.status();
      auto balance_a = DecodeInt(*a), balance_b = DecodeInt(*b);
      if (!balance_a.ok()) return balance_a.status();
      if (!balance_b.ok()) return balance_b.status();
      if (*balance_a < amount) return absl::OkStatus();
      {
        // Before Commit: if the outcome turns out unknown, the value may still have been installed.
        MutexLock lock(&mu_);
        attempted_[from].insert(*balance_a - amount);
        attempted_[to].insert(*balance_b + amount);
      }
      moved = true;
      if (absl::Status w = tx.Write(accounts_[from], EncodeInt(*balance_a - amount)); !w.ok()) return w;
      return tx.Write(accounts_[to], EncodeInt(*balance_b + amount));
    }, retry);
    if (s.ok()) {
      if (moved) ++acknowledged_;
    } else if (!absl::IsAborted(s)) {
      MutexLock lock(&mu_);
      if (first_error_.ok()) first_error_ = s;
      return;
    }
  }
}

}  // namespace fathom::testing
