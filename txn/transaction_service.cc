// TransactionService: attaching the layer to a node, configuration, counters.
#include <atomic>

#include "absl/strings/str_cat.h"
#include "txn/shared.h"
#include "txn/txn.h"

namespace fathom::txn {

absl::StatusOr<std::unique_ptr<TransactionService>> TransactionService::Attach(node::Node* node, TxnOptions options) {
  if (options.backups < 0) return absl::InvalidArgumentError("backups must not be negative");
  const bool epochs = static_cast<bool>(options.epoch_log.close);
  if (epochs && (!options.epoch_log.persisted || options.first_log_epoch == 0 ||
                 options.log_epoch_interval <= absl::ZeroDuration())) {
    return absl::InvalidArgumentError(
        "log epochs need epoch_log.close and .persisted, a first epoch >= 1 and a positive interval");
  }
  auto shared = std::make_shared<Transaction::Shared>(node, options);
  // Backup copies in registered memory: a backup promoted to primary serves its copy (promotion.cc).
  shared->backups.set_allocator(
      [node](uint32_t region, uint64_t bytes) { return node->AllocateRegionCopy(region, bytes); });
  if (epochs) shared->log_epochs = std::make_unique<LogEpochs>(options.first_log_epoch, options.join_log_epochs);
  std::vector<uint32_t> members = node->connected_peers();
  members.push_back(node->id());
  // A static cluster's rule until the caller sets a configuration's (a restart may have set it already).
  node->region_directory().SetIfUnset(memory::RegionMap::ByOwner(1, members, options.backups));
  if (options.restore_backups) {
    if (absl::Status s = options.restore_backups(shared->backups); !s.ok()) return s;
  }
  for (int i = 0; i < node->threads(); ++i) {
    auto thread = node->Thread(i);
    if (!thread.ok()) return thread.status();
    node::NodeThread* t = *thread;
    shared->threads.push_back(std::make_unique<TxnThread>(t, node->id(), &shared->backups,
                                                          shared->log_epochs.get(), options, node->options().clock));
    TxnThread* txn_thread = shared->threads.back().get();
    txn_thread->participant().set_install_observer(options.on_install);
    absl::Status installed = t->RunAndWait(
        [t, txn_thread, shared]() -> absl::Status {
          if (absl::Status s = txn_thread->Install(); !s.ok()) return s;
          // The node thread keeps the layer alive until it stops (its handlers point into it).
          t->AddPoller([shared] { return size_t{0}; });
          return absl::OkStatus();
        },
        node->options().call_timeout);
    if (!installed.ok()) {
      return absl::Status(installed.code(), absl::StrCat("attaching transactions to thread ", i, ": ",
                                                         installed.message()));
    }
  }
  if (epochs && options.start_log_epochs) shared->log_epochs->StartDriving();
  return std::unique_ptr<TransactionService>(new TransactionService(std::move(shared)));
}

void TransactionService::StartLogEpochs() {
  if (shared_->log_epochs != nullptr) shared_->log_epochs->StartDriving();
}

void TransactionService::SetLogEpochDriver(uint32_t node) {
  if (shared_->log_epochs != nullptr) shared_->log_epochs->SetDriver(node);
}

const LogEpochs* TransactionService::log_epochs() const { return shared_->log_epochs.get(); }

TransactionService::~TransactionService() = default;

int TransactionService::NextThread() {
  const uint64_t n = shared_->threads.size();
  return static_cast<int>(shared_->next_thread.fetch_add(1, std::memory_order_relaxed) % n);
}

Transaction TransactionService::Begin() { return Begin(NextThread()); }

Transaction TransactionService::Begin(int thread) { return Transaction(shared_, thread); }

std::shared_ptr<const memory::RegionMap> TransactionService::replicas() const {
  return shared_->node->region_directory().Current();
}
const BackupStore& TransactionService::backups() const { return shared_->backups; }
int TransactionService::threads() const { return static_cast<int>(shared_->threads.size()); }
node::Node& TransactionService::node() { return *shared_->node; }

absl::StatusOr<TxnThread*> TransactionService::Thread(int thread) {
  if (thread < 0 || thread >= threads()) return absl::InvalidArgumentError(absl::StrCat("no thread ", thread));
  return shared_->threads[thread].get();
}

absl::Status TransactionService::Post(int thread, absl::AnyInvocable<void(TxnThread&)> task) {
  if (thread < 0 || thread >= threads()) return absl::InvalidArgumentError(absl::StrCat("no thread ", thread));
  TxnThread* t = shared_->threads[thread].get();
  if (!t->thread().Post([t, task = std::move(task)]() mutable { task(*t); })) {
    return absl::UnavailableError("the node is stopped");
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> TransactionService::SumOverThreads(const std::function<size_t(TxnThread&)>& of) {
  size_t sum = 0;
  for (auto& t : shared_->threads) {
    TxnThread* thread = t.get();
    absl::Status s = thread->thread().RunAndWait(
        [thread, &of, &sum]() -> absl::Status {
          sum += of(*thread);
          return absl::OkStatus();
        },
        shared_->node->options().call_timeout);
    if (!s.ok()) return s;
  }
  return sum;
}

absl::StatusOr<TxnStats> TransactionService::Stats() {
  TxnStats total;
  for (auto& t : shared_->threads) {
    TxnThread* thread = t.get();
    absl::Status s = thread->thread().RunAndWait(
        [thread, &total]() -> absl::Status {
          total.coordinator += thread->stats();
          total.participant += thread->participant().stats();
          total.log_entries += thread->participant().log_entries();
          total.truncations_owed += thread->truncator().pending();
          total.reserved_slots += thread->participant().reserved();
          return absl::OkStatus();
        },
        shared_->node->options().call_timeout);
    if (!s.ok()) return s;
  }
  return total;
}

}  // namespace fathom::txn
