#include "tests/sim/sim_workload.h"

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kv/kv.h"
#include "platform/memory/global_address.h"
#include "tests/history/check.h"
#include "tests/history/format.h"
#include "tests/history/parse.h"
#include "tests/sim/sim_registers.h"
#include "tests/workloads/list_append.h"
#include "tests/workloads/support.h"
#include "txn/run_async.h"

namespace fathom::sim {
namespace {

using txn::workloads::DecodeInt;
using txn::workloads::EncodeInt;

struct Transfer {
  object::ObjectRef from, to;
  int64_t amount = 0;
};

// One transfer as an asynchronous transaction on `thread`: both balances read together, moved if the
// source has enough.
void RunTransfer(txn::TxnThread& thread, const Transfer& t, txn::DoneCallback done) {
  txn::RetryOptions retry;
  retry.seed = t.from.address.raw() ^ t.to.address.raw();
  retry.max_attempts = 16;
  retry.max_backoff = absl::Milliseconds(2);
  txn::RunTransactionAsync(
      thread,
      [&thread, t](std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
        thread.ReadMany(tx, {t.from, t.to}, [&thread, tx, t, body_done](absl::StatusOr<std::vector<std::string>> v) {
          if (!v.ok()) return body_done(v.status());
          absl::StatusOr<int64_t> from = DecodeInt((*v)[0]);
          absl::StatusOr<int64_t> to = DecodeInt((*v)[1]);
          if (!from.ok()) return body_done(from.status());
          if (!to.ok()) return body_done(to.status());
          if (*from < t.amount) return body_done(absl::OkStatus());  // commits, moves nothing
          absl::Status s = thread.Write(*tx, t.from, EncodeInt(*from - t.amount));
          if (s.ok()) s = thread.Write(*tx, t.to, EncodeInt(*to + t.amount));
          body_done(s);
        });
      },
      std::move(done), retry);
}

// One list-append transaction as an asynchronous transaction on `thread`: the lists of the keys `ops`
// name read together, the micro-ops applied in order, the lists they changed written. `*done` holds the
// last attempt's micro-ops (reads filled in).
void RunListAppend(txn::TxnThread& thread, const std::vector<object::ObjectRef>& lists,
                   const std::vector<history::MicroOp>& ops, std::shared_ptr<std::vector<history::MicroOp>> done,
                   txn::DoneCallback finished) {
  txn::RetryOptions retry;
  retry.seed = static_cast<uint64_t>(ops.front().value) * 7919 + static_cast<uint64_t>(ops.front().key);
  retry.max_attempts = 16;
  retry.max_backoff = absl::Milliseconds(2);
  txn::RunTransactionAsync(
      thread,
      [&thread, lists, ops, done](std::shared_ptr<txn::TxState> tx, txn::DoneCallback body_done) {
        std::vector<int> keys;
        for (const history::MicroOp& op : ops) {
          if (std::find(keys.begin(), keys.end(), op.key) == keys.end()) keys.push_back(static_cast<int>(op.key));
        }
        std::vector<object::ObjectRef> refs;
        for (int key : keys) refs.push_back(lists[key]);
        thread.ReadMany(tx, refs, [&thread, tx, lists, ops, done, keys, body_done](
                                      absl::StatusOr<std::vector<std::string>> read) {
          if (!read.ok()) return body_done(read.status());
          std::map<int, std::vector<int64_t>> values;
          for (size_t i = 0; i < keys.size(); ++i) values[keys[i]] = txn::workloads::DecodeList((*read)[i]);
          *done = ops;
          std::set<int> changed;
          for (history::MicroOp& op : *done) {
            txn::workloads::ApplyMicroOp(op, values[static_cast<int>(op.key)]);
            if (op.kind == history::MicroOp::Kind::kAppend) changed.insert(static_cast<int>(op.key));
          }
          for (int key : changed) {
            if (absl::Status s = thread.Write(*tx, lists[key], txn::workloads::EncodeList(values[key])); !s.ok()) {
              return body_done(s);
            }
          }
          body_done(absl::OkStatus());
        });
      },
      std::move(finished), retry);
}

// A blocking step of the harness, tried again (in virtual time) while it fails as a client would retry:
// a conflict (Aborted) or an operation the fabric dropped (Unavailable). Each retry is in the history.
absl::Status Retried(SimCluster& cluster, const std::string& what, const std::function<absl::Status()>& step) {
  for (int attempt = 1;; ++attempt) {
    absl::Status s = step();
    if (s.ok()) return s;
    cluster.Record(absl::StrCat(what, " attempt ", attempt, ": ", s.ToString()));
    if ((!absl::IsAborted(s) && !absl::IsUnavailable(s)) || attempt == 20) {
      return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
    }
    cluster.scheduler().RunFor(absl::Milliseconds(1));
  }
}

}  // namespace

absl::StatusOr<SimWorkloadResult> RunSimWorkload(SimCluster& cluster, const SimWorkloadOptions& options,
                                                 uint64_t seed) {
  std::mt19937_64 random(seed);
  SimWorkloadResult result;
  std::vector<uint32_t> account_nodes = options.account_nodes;
  if (account_nodes.empty()) {
    // Every running node not idle that serves its own memory (one that joined again after a removal
    // finds its region given to another, and cannot allocate there).
    const coordinator::Configuration configuration = cluster.configuration();
    for (const coordinator::RegionPlacement& r : configuration.regions()) {
      const uint32_t owner = memory::OwnerOfRegion(r.region_id());
      if (r.primary() != owner || options.idle_nodes.contains(owner) || cluster.stopped(owner)) continue;
      if (std::find(account_nodes.begin(), account_nodes.end(), owner) == account_nodes.end()) {
        account_nodes.push_back(owner);
      }
    }
    if (account_nodes.empty()) return absl::FailedPreconditionError("no running node serves its own memory");
  }

  const uint32_t via = options.through != 0 ? options.through : account_nodes.front();

  // Accounts, through `via` (a blocking transaction: the scheduler runs while it waits).
  std::vector<object::ObjectRef> accounts;
  absl::Status created = Retried(cluster, "creating the accounts", [&]() -> absl::Status {
    accounts.clear();
    txn::Transaction tx = cluster.txns(via).Begin(0);
    for (int i = 0; i < options.accounts; ++i) {
      auto ref = tx.Alloc(8, {.node = account_nodes[i % account_nodes.size()]});
      if (!ref.ok()) return ref.status();
      if (absl::Status s = tx.Write(*ref, EncodeInt(options.initial_balance)); !s.ok()) return s;
      accounts.push_back(*ref);
    }
    return tx.Commit();
  });
  if (!created.ok()) return created;

  // The list-append keys, through `via`, before the table (whose creation makes a new configuration a
  // member may learn of late): an allocated object's empty payload is the empty list.
  std::vector<object::ObjectRef> lists;
  absl::Status listed = Retried(cluster, "creating the lists", [&]() -> absl::Status {
    lists.clear();
    txn::Transaction tx = cluster.txns(via).Begin(0);
    for (int i = 0; i < options.list_keys; ++i) {
      auto ref = tx.Alloc(txn::workloads::kListBytes, {.node = account_nodes[i % account_nodes.size()]});
      if (!ref.ok()) return ref.status();
      lists.push_back(*ref);
    }
    return tx.Commit();
  });
  if (!listed.ok()) return listed;

  // A KV table, through `via`.
  absl::StatusOr<kv::Table> table = absl::UnknownError("not created");
  created = Retried(cluster, "creating the table", [&]() -> absl::Status {
    table = kv::Table::Create(cluster.txns(via), cluster.catalog(via), "sim", {.buckets = 64});
    return table.status();
  });
  if (!created.ok()) return created;

  auto recorder = std::make_shared<history::HistoryRecorder>(&cluster.network().clock());
  auto registers = std::make_shared<RegisterHistory>(&cluster.network().clock());
  txn::workloads::ListAppendDraws draws(options.list_keys, /*max_ops=*/3);

  // Transfers, puts and list-appends: every active node thread runs its own chains, all at once.
  struct Outcomes {
    std::map<uint32_t, int> pending;  // operation chains still running, by node
    std::vector<std::string> events;  // in completion order
    std::set<std::string> acknowledged_puts;
  };
  auto outcomes = std::make_shared<Outcomes>();
  for (int n = 1; n <= cluster.size(); ++n) {
    const uint32_t node = static_cast<uint32_t>(n);
    if (options.idle_nodes.contains(node)) continue;
    auto opened = kv::Table::Open(cluster.txns(node), cluster.catalog(via), "sim");
    if (!opened.ok()) return opened.status();
    const kv::Table node_table = *opened;
    for (int t = 0; t < cluster.txns(node).threads(); ++t) {
      std::vector<Transfer> chain;
      for (int i = 0; i < options.transfers_per_thread; ++i) {
        const size_t from = random() % accounts.size();
        size_t to = random() % accounts.size();
        if (to == from) to = (to + 1) % accounts.size();
        chain.push_back({accounts[from], accounts[to], static_cast<int64_t>(1 + random() % 30)});
      }
      std::vector<std::pair<std::string, std::string>> puts;
      for (int k = 0; k < options.kv_keys; ++k) {
        puts.emplace_back(absl::StrCat("key-", node, "-", t, "-", k), absl::StrCat("value-", random() % 1000));
      }
      std::vector<std::vector<history::MicroOp>> appends;
      if (!lists.empty()) {
        for (int i = 0; i < options.list_appends_per_thread; ++i) appends.push_back(draws.Next(random));
      }
      const int64_t process = node * 100 + t;
      outcomes->pending[node] += 4;
      const std::string who = absl::StrCat("node ", node, " thread ", t);
      std::vector<RegisterHistory::Draw> register_draws =
          RegisterHistory::Draws(random, options.register_keys, options.register_ops_per_thread, who);
      absl::Status posted = cluster.txns(node).Post(t, [node, chain, puts, who, outcomes, node_table, appends, process,
                                                        lists, recorder, registers,
                                                        register_draws](txn::TxnThread& thread) {
        // Transfers one after another; each outcome recorded as it comes. A step holds itself only weakly:
        // the callback in flight keeps it alive, and the chain is freed when it ends.
        auto next = std::make_shared<std::function<void(size_t)>>();
        *next = [&thread, node, chain, who, outcomes, weak = std::weak_ptr(next)](size_t i) {
          if (i == chain.size()) {
            --outcomes->pending[node];
            return;
          }
          RunTransfer(thread, chain[i], [who, outcomes, next = weak.lock(), i](absl::Status s) {
            outcomes->events.push_back(absl::StrCat(who, " transfer ", i, ": ", s.ToString()));
            (*next)(i + 1);
          });
        };
        (*next)(0);
        // Puts, then each key read back lock-free.
        auto put = std::make_shared<std::function<void(size_t)>>();
        *put = [&thread, node, puts, who, outcomes, node_table, weak = std::weak_ptr(put)](size_t i) {
          if (i == puts.size()) {
            --outcomes->pending[node];
            return;
          }
          std::shared_ptr<std::function<void(size_t)>> put = weak.lock();
          node_table.PutAsync(thread, puts[i].first, puts[i].second,
                              [&thread, puts, who, outcomes, node_table, put, i](absl::Status s) {
                                outcomes->events.push_back(absl::StrCat(who, " put ", puts[i].first, ": ", s.ToString()));
                                if (s.ok()) outcomes->acknowledged_puts.insert(puts[i].first + "=" + puts[i].second);
                                node_table.GetAsync(thread, puts[i].first, [who, outcomes, put, puts, i](kv::GetResult r) {
                                  outcomes->events.push_back(absl::StrCat(
                                      who, " get ", puts[i].first, ": ",
                                      r.value.ok() ? *r.value : r.value.status().ToString()));
                                  if (r.value.ok() && *r.value != puts[i].second) {
                                    outcomes->events.push_back("VIOLATION: a get read another value");
                                  }
                                  (*put)(i + 1);
                                });
                              });
        };
        (*put)(0);
        // List-appends, one after another, each recorded in the history as it is invoked and completes.
        auto append = std::make_shared<std::function<void(size_t)>>();
        *append = [&thread, node, appends, process, lists, recorder, who, outcomes,
                   weak = std::weak_ptr(append)](size_t i) {
          if (i == appends.size()) {
            --outcomes->pending[node];
            return;
          }
          recorder->Invoke(process, appends[i]);
          auto done = std::make_shared<std::vector<history::MicroOp>>(appends[i]);
          RunListAppend(thread, lists, appends[i], done,
                        [appends, process, recorder, who, outcomes, done, next = weak.lock(), i](absl::Status s) {
                          bool unexpected = false;
                          const history::EventType outcome = txn::workloads::OutcomeOf(s, &unexpected);
                          recorder->Complete(process, outcome, outcome == history::EventType::kOk ? *done : appends[i]);
                          outcomes->events.push_back(absl::StrCat(who, " list-append ", i, ": ", s.ToString()));
                          if (unexpected) outcomes->events.push_back("VIOLATION: a list-append failed unexpectedly");
                          (*next)(i + 1);
                        });
        };
        (*append)(0);
        // Single-key operations on the shared keys.
        registers->RunChain(thread, node_table, register_draws, who, [node, outcomes] { --outcomes->pending[node]; });
      });
      if (!posted.ok()) return posted;
    }
  }
  if (options.on_started) options.on_started();
  // Done when every node still running has finished its chains (a stopped node's never finish).
  auto running = [&] {
    int chains = 0;
    for (const auto& [node, pending] : outcomes->pending) chains += cluster.stopped(node) ? 0 : pending;
    return chains;
  };
  if (!cluster.scheduler().RunUntil([&] { return running() == 0; }, options.timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(running(), " operation chains still running after ",
                                                    absl::FormatDuration(options.timeout), " of virtual time"));
  }
  for (const std::string& event : outcomes->events) {
    cluster.Record(event);
    if (absl::StrContains(event, "VIOLATION")) result.violations.push_back(event);
    if (absl::StrContains(event, " transfer ")) {
      if (absl::StrContains(event, ": OK")) {
        ++result.committed;
      } else {
        ++result.failed;
      }
    }
  }

  // The list-append history: strictly serializable, as far as the checker can tell (a chain a crash cut
  // short leaves its last transaction open: indeterminate).
  if (!lists.empty()) {
    const std::string text = recorder->Text();
    cluster.Record(text);
    absl::StatusOr<history::History> parsed = history::ParseHistory(text);
    if (!parsed.ok()) return parsed.status();
    const history::CheckResult check = history::CheckHistory(*parsed);
    if (!check.valid()) result.violations.push_back(absl::StrCat("list-append history: ", check.ToString()));
  }

  if (options.before_audit) options.before_audit();
  // Each shared key read once more through `via`, the cluster settled; then every key's history checked.
  for (const std::string& key : registers->keys()) {
    absl::StatusOr<std::string> value = absl::UnknownError("not read");
    const absl::Time invoked = cluster.network().clock().Now();
    absl::Status read = Retried(cluster, "reading a shared key", [&]() -> absl::Status {
      value = table->Get(key);
      return value.ok() || absl::IsNotFound(value.status()) ? absl::OkStatus() : value.status();
    });
    cluster.Record(absl::StrCat("final read ", key, ": ", value.ok() ? *value : value.status().ToString()));
    if (read.ok()) registers->RecordRead(key, value, invoked, cluster.network().clock().Now(), "the final read");
  }
  for (std::string& violation : registers->Check()) result.violations.push_back(std::move(violation));
  // The audit, through `via`: one snapshot of every account.
  std::vector<int64_t> balances;
  absl::Status audited = Retried(cluster, "the audit", [&]() -> absl::Status {
    balances.clear();
    txn::Transaction tx = cluster.txns(via).Begin(0);
    for (const object::ObjectRef& ref : accounts) {
      absl::StatusOr<std::string> bytes = tx.Read(ref);
      if (!bytes.ok()) return bytes.status();
      absl::StatusOr<int64_t> balance = DecodeInt(*bytes);
      if (!balance.ok()) return balance.status();
      balances.push_back(*balance);
    }
    return tx.Commit();
  });
  if (!audited.ok()) {
    // Locks a stopped coordinator left behind stay until recovery (not built): say so, do not fail the run.
    if (!absl::IsAborted(audited)) return audited;
    result.audit_blocked = std::string(audited.message());
    cluster.Record(absl::StrCat("audit blocked: ", audited.message()));
    return result;
  }
  for (int64_t balance : balances) {
    if (balance < 0) result.violations.push_back(absl::StrCat("negative balance ", balance));
    result.total += balance;
  }
  cluster.Record(absl::StrCat("audit total ", result.total));
  const int64_t expected = options.initial_balance * options.accounts;
  if (result.total != expected) {
    result.violations.push_back(absl::StrCat("total ", result.total, ", expected ", expected));
  }
  // Every acknowledged put reads back (blocking, through `via`).
  for (const std::string& entry : outcomes->acknowledged_puts) {
    const size_t eq = entry.find('=');
    absl::StatusOr<std::string> value = absl::UnknownError("not read");
    absl::Status read = Retried(cluster, "reading back", [&]() -> absl::Status {
      value = table->Get(entry.substr(0, eq));
      return value.ok() || absl::IsNotFound(value.status()) ? absl::OkStatus() : value.status();
    });
    if (!read.ok()) return read;
    cluster.Record(absl::StrCat("read back ", entry.substr(0, eq), ": ", value.ok() ? *value : value.status().ToString()));
    if (!value.ok() || *value != entry.substr(eq + 1)) {
      result.violations.push_back(absl::StrCat("acknowledged ", entry, " reads back as ",
                                               value.ok() ? *value : value.status().ToString()));
    }
  }
  return result;
}

}  // namespace fathom::sim
