#include "tests/workloads/bank.h"

#include <atomic>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "platform/base/mutex.h"
#include "tests/workloads/support.h"

namespace fathom::txn::workloads {
namespace {

// Reads every account in one read-only transaction: the total and whether any is negative.
absl::StatusOr<std::pair<int64_t, bool>> Audit(TransactionService& service, const std::vector<object::ObjectRef>& accounts) {
  Transaction tx = service.Begin();
  int64_t total = 0;
  bool negative = false;
  auto all = tx.ReadMany(accounts);
  if (!all.ok()) return all.status();
  for (const std::string& bytes : *all) {
    auto balance = DecodeInt(bytes);
    if (!balance.ok()) return balance.status();
    total += *balance;
    negative |= *balance < 0;
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return std::make_pair(total, negative);
}

}  // namespace

absl::StatusOr<BankResult> RunBank(const std::vector<TransactionService*>& services, const BankOptions& options) {
  if (services.empty() || options.accounts < 2) return absl::InvalidArgumentError("a bank needs nodes and 2 accounts");
  // Accounts round-robin over the nodes, created by one transaction (retried: e.g. a log epoch closing).
  std::vector<object::ObjectRef> accounts;
  absl::Status created = RunTransaction(*services[0], [&](Transaction& tx) -> absl::Status {
    accounts.clear();
    for (int i = 0; i < options.accounts; ++i) {
      auto ref = tx.Alloc(8, {.node = DataNode(services, options.data_nodes, i)});
      if (!ref.ok()) return ref.status();
      if (absl::Status s = tx.Write(*ref, EncodeInt(options.initial_balance)); !s.ok()) return s;
      accounts.push_back(*ref);
    }
    return absl::OkStatus();
  });
  if (!created.ok()) return created;
  const int64_t expected = options.initial_balance * options.accounts;

  absl::Mutex mu;
  BankResult result;
  absl::Status failure;
  auto fail = [&](const absl::Status& s) {
    MutexLock lock(&mu);
    if (failure.ok()) failure = s;
  };
  std::atomic<int> clients_running{0};
  std::atomic<bool> audited{false};  // a snapshot committed while clients ran
  std::vector<std::thread> threads;
  for (size_t n = 0; n < services.size(); ++n) {
    for (int c = 0; c < options.clients_per_node; ++c) {
      ++clients_running;
      threads.emplace_back([&, n, c] {
        std::mt19937_64 random(options.seed * 7919 + n * 131 + c);
        std::uniform_int_distribution<int> pick(0, options.accounts - 1);
        std::uniform_int_distribution<int64_t> amount_of(1, options.max_amount);
        RetryOptions retry = options.retry;
        retry.seed = random();
        uint64_t moved = 0, insufficient = 0, gave_up = 0;
        const int most = 20 * options.transfers_per_client;
        for (int i = 0; i < options.transfers_per_client || (!audited.load() && i < most); ++i) {
          const int from = pick(random);
          int to = pick(random);
          if (to == from) to = (to + 1) % options.accounts;
          const int64_t amount = amount_of(random);
          bool did_move = false;
          absl::Status s = RunTransaction(*services[n], [&](Transaction& tx) -> absl::Status {
            did_move = false;
            auto a = tx.Read(accounts[from]);
            if (!a.ok()) return a.status();
            auto b = tx.Read(accounts[to]);
            if (!b.ok()) return b.status();
            auto balance_a = DecodeInt(*a), balance_b = DecodeInt(*b);
            if (!balance_a.ok()) return balance_a.status();
            if (!balance_b.ok()) return balance_b.status();
            if (*balance_a < amount) return absl::OkStatus();  // commits as a read-only check
            did_move = true;
            if (absl::Status w = tx.Write(accounts[from], EncodeInt(*balance_a - amount)); !w.ok()) return w;
            return tx.Write(accounts[to], EncodeInt(*balance_b + amount));
          }, retry);
          if (s.ok()) {
            ++(did_move ? moved : insufficient);
          } else if (absl::IsAborted(s)) {
            ++gave_up;
          } else {
            fail(s);
            break;
          }
        }
        MutexLock lock(&mu);
        result.transfers += moved;
        result.insufficient += insufficient;
        result.gave_up += gave_up;
        --clients_running;
      });
    }
  }
  // The auditor, on every node in turn, while the clients run.
  uint64_t audits = 0, audit_aborts = 0;
  std::vector<std::string> violations;
  for (size_t round = 0; clients_running.load() > 0; ++round) {
    auto audit = Audit(*services[round % services.size()], accounts);
    if (!audit.ok()) {
      if (absl::IsAborted(audit.status())) {
        ++audit_aborts;
        continue;
      }
      fail(audit.status());
      break;
    }
    ++audits;
    audited.store(true);
    if (audit->first != expected) violations.push_back(absl::StrCat("a snapshot saw a total of ", audit->first));
    if (audit->second) violations.push_back("a snapshot saw a negative balance");
  }
  for (auto& t : threads) t.join();
  {
    MutexLock lock(&mu);
    if (!failure.ok()) return failure;
  }
  result.audits = audits;
  result.audit_aborts = audit_aborts;
  result.violations = std::move(violations);
  // The last audit, quiet: it must not abort.
  auto last = Audit(*services[0], accounts);
  if (!last.ok()) return last.status();
  result.final_total = last->first;
  if (last->first != expected) result.violations.push_back(absl::StrCat("the final total is ", last->first));
  if (last->second) result.violations.push_back("a final balance is negative");
  return result;
}

}  // namespace fathom::txn::workloads
