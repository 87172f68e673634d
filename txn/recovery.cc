#include "txn/recovery.h"

#include <cstdio>
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "platform/base/log.h"
#include "platform/base/status_macros.h"
#include "txn/shared.h"
#include "txn/txn.h"
#include "txn/txn_thread.h"

namespace fathom::txn {
namespace {

// Room a reply keeps free of holds in a ring message (its header and slack).
constexpr size_t kReplySlack = 64;
// Holds answered to our own decider, which needs no ring.
constexpr size_t kLocalReplyBytes = 16 << 10;

}  // namespace

absl::Status OrphanRecovery::CheckAsked(uint32_t from, uint64_t epoch) {
  const memory::RegionMap& map = thread_.replicas();
  const uint64_t fenced = thread_.thread().fenced_epoch();
  if (map.epoch() < epoch || fenced < epoch) {
    return absl::UnavailableError(absl::StrCat("node ", thread_.node_id(), " has not fenced configuration ", epoch,
                                               " yet (it knows ", map.epoch(), ", fenced ", fenced, ")"));
  }
  if (epoch < map.epoch()) {
    return absl::FailedPreconditionError(absl::StrCat("recovery in configuration ", epoch, " is stale: node ",
                                                      thread_.node_id(), " is at configuration ", map.epoch()));
  }
  if (map.manager() != from) {
    return absl::FailedPreconditionError(absl::StrCat("node ", from, " is not the configuration manager of configuration ",
                                                      map.epoch(), " (node ", map.manager(), " is)"));
  }
  return absl::OkStatus();
}

bool OrphanRecovery::Gone(const TxnId& id) { return thread_.replicas().CoordinatorGone(id.node, id.epoch); }

absl::StatusOr<OrphansReply> OrphanRecovery::Holds(uint32_t from, uint64_t epoch) {
  RETURN_IF_ERROR(CheckAsked(from, epoch));
  size_t budget = kLocalReplyBytes;
  if (from != thread_.node_id()) {
    ASSIGN_OR_RETURN(budget, thread_.messenger().max_payload(from));
  }
  std::vector<ThreadMark> marks = thread_.participant().MarksOf(
      [this](uint32_t node, uint64_t incarnation) { return thread_.replicas().CoordinatorGone(node, incarnation); });
  if (marks.size() > kMaxMarksPerReply) {
    // Leaving some out could turn a commit that only a mark shows into an abort: refuse instead.
    return absl::ResourceExhaustedError(absl::StrCat("node ", thread_.node_id(), " holds marks of ", marks.size(),
                                                     " gone coordinator threads, more than one reply takes (",
                                                     kMaxMarksPerReply, ")"));
  }
  const size_t used = kReplySlack + kMarkBytes * marks.size();
  budget = budget > used ? budget - used : 0;
  ASSIGN_OR_RETURN(OrphansReply reply,
                   FillOrphansReply(thread_.participant().HeldFor([this](const TxnId& id) { return Gone(id); },
                                                                  std::numeric_limits<size_t>::max()),
                                    budget));
  reply.marks = std::move(marks);
  return reply;
}

absl::Status OrphanRecovery::Resolve(uint32_t from, const ResolveRequest& request) {
  RETURN_IF_ERROR(CheckAsked(from, request.epoch));
  if (!Gone(request.id)) {
    return absl::FailedPreconditionError(absl::StrCat("the coordinator of ", request.id.ToString(),
                                                      " is a member of configuration ", request.epoch));
  }
  switch (request.action) {
    case ResolveAction::kCommit: return thread_.participant().Resolve(request.id, /*commit=*/true);
    case ResolveAction::kAbort: return thread_.participant().Resolve(request.id, /*commit=*/false);
    case ResolveAction::kForget: return thread_.participant().Forget(request.id);
  }
  return absl::InvalidArgumentError("unknown resolve action");
}

absl::Status TxnThread::OnOrphans(const msg::Message& message, std::string* reply) {
  if (reply == nullptr) return absl::InvalidArgumentError("ORPHANS is a request, sent one-way");
  ASSIGN_OR_RETURN(OrphansRequest request, DecodeOrphansRequest(message.payload));
  ASSIGN_OR_RETURN(OrphansReply holds, recovery_.Holds(message.peer, request.epoch));
  *reply = EncodeOrphansReply(holds);
  return absl::OkStatus();
}

absl::Status TxnThread::OnResolve(const msg::Message& message, std::string* reply) {
  if (reply == nullptr) return absl::InvalidArgumentError("RESOLVE is a request, sent one-way");
  ASSIGN_OR_RETURN(ResolveRequest request, DecodeResolveRequest(message.payload));
  return recovery_.Resolve(message.peer, request);
}

void OrphanRecovery::Start(uint64_t epoch) {
  if (round_ != nullptr) return;
  auto round = std::make_shared<Round>();
  round->epoch = epoch;
  round_ = round;
  const std::vector<uint32_t> members = thread_.replicas().members();
  round->outstanding = members.size() + 1;  // + 1 until every ask is out (a local answer comes at once)
  for (uint32_t node : members) {
    if (node == thread_.node_id()) {
      Gather(node, Holds(node, epoch));
      continue;
    }
    absl::Status called = thread_.messenger().Call(
        node, kOrphansMessage, EncodeOrphansRequest({epoch}), thread_.options().rpc_timeout,
        [this, round, node](absl::StatusOr<std::string_view> reply) {
          if (round_ != round) return;
          Gather(node, reply.ok() ? DecodeOrphansReply(*reply) : absl::StatusOr<OrphansReply>(reply.status()));
        });
    if (!called.ok()) Gather(node, called);
  }
  thread_.messenger().Flush().IgnoreError();
  Gather(0, OrphansReply{});
}

void OrphanRecovery::Gather(uint32_t node, absl::StatusOr<OrphansReply> reply) {
  Round& r = *round_;
  if (!reply.ok()) {
    if (r.error.ok()) {
      r.error = absl::Status(reply.status().code(), absl::StrCat("node ", node, ": ", reply.status().message()));
    }
  } else {
    if (reply->more && !reply->holds.empty()) {
      // This member's holds beyond its last one are not known yet: nothing past it is decided now.
      const Key last = KeyOf(reply->holds.back().id);
      r.decide_through = r.more ? std::min(r.decide_through, last) : last;
      r.more = true;
    }
    for (const ThreadMark& m : reply->marks) r.marks.push_back({node, m});
    for (Hold& hold : reply->holds) {
      auto& [id, holders] = r.found[KeyOf(hold.id)];
      id = hold.id;
      holders.push_back(Holder{node, hold.kind, std::move(hold.regions), std::move(hold.written)});
    }
  }
  if (--r.outstanding > 0) return;
  if (!r.error.ok()) return Finish();
  Decide();
}

void OrphanRecovery::Decide() {
  Round& r = *round_;
  if (r.more) r.found.erase(r.found.upper_bound(r.decide_through), r.found.end());
  const memory::RegionMap& map = thread_.replicas();
  // A member whose marks from the coordinator's thread settle a transaction holds it as truncated.
  std::map<std::tuple<uint32_t, uint32_t, uint16_t>, std::vector<CoordinatorMark>> marks;  // (member, node, thread)
  for (const auto& [member, m] : r.marks) marks[{member, m.node, m.thread}].push_back(m.mark);
  for (auto& [who, known] : marks) {
    std::sort(known.begin(), known.end(),
              [](const CoordinatorMark& a, const CoordinatorMark& b) { return a.incarnation < b.incarnation; });
  }
  for (auto& [key, found] : r.found) {
    const TxnId& id = found.first;
    for (const auto& [who, known] : marks) {
      const auto& [member, node, thread] = who;
      if (node == id.node && thread == id.thread && SettledBy(known, id)) {
        found.second.push_back(Holder{member, HoldKind::kTruncated, {}, {}});
      }
    }
  }
  for (const auto& [key, found] : r.found) {
    const Verdict verdict = DecideOrphan(found.second, map);
    r.verdicts[key] = verdict;
    std::string holders;
    for (const Holder& h : found.second) absl::StrAppend(&holders, holders.empty() ? "" : ", ", h.node, " ", HoldKindName(h.kind));
    LogInfo("txn recovery", "node %u decides %s %s in configuration %llu (held: %s)", thread_.node_id(),
            found.first.ToString().c_str(), verdict == Verdict::kCommit ? "commit" : "abort",
            static_cast<unsigned long long>(r.epoch), holders.c_str());
  }
  ResolveAll(/*forget=*/false);
}

void OrphanRecovery::ResolveAll(bool forget) {
  std::shared_ptr<Round> round = round_;
  round->outstanding = 1;  // until every request is out
  for (const auto& [key, found] : round->found) {
    ResolveRequest request;
    request.action = forget ? ResolveAction::kForget
                            : (round->verdicts[key] == Verdict::kCommit ? ResolveAction::kCommit : ResolveAction::kAbort);
    request.epoch = round->epoch;
    request.id = found.first;
    std::set<uint32_t> nodes;
    for (const Holder& h : found.second) nodes.insert(h.node);
    for (uint32_t node : nodes) {
      ++round->outstanding;
      if (node == thread_.node_id()) {
        Resolved(Resolve(node, request), forget);
        continue;
      }
      absl::Status called = thread_.messenger().Call(
          node, kResolveMessage, EncodeResolveRequest(request), thread_.options().rpc_timeout,
          [this, round, node, forget](absl::StatusOr<std::string_view> reply) {
            if (round_ != round) return;
            Resolved(reply.ok() ? absl::OkStatus()
                                : absl::Status(reply.status().code(),
                                               absl::StrCat("node ", node, ": ", reply.status().message())),
                     forget);
          });
      if (!called.ok()) Resolved(called, forget);
    }
  }
  thread_.messenger().Flush().IgnoreError();
  Resolved(absl::OkStatus(), forget);
}

void OrphanRecovery::Resolved(absl::Status status, bool forget) {
  Round& r = *round_;
  if (!status.ok() && r.error.ok()) r.error = std::move(status);
  if (--r.outstanding > 0) return;
  if (!r.error.ok() || forget) return Finish();
  ResolveAll(/*forget=*/true);
}

void OrphanRecovery::Finish() {
  Round& r = *round_;
  RecoveryRoundResult result;
  result.epoch = r.epoch;
  result.found = r.found.size();
  for (const auto& [key, verdict] : r.verdicts) ++(verdict == Verdict::kCommit ? result.committed : result.aborted);
  result.settled = r.error.ok() && !r.more;
  if (!r.error.ok()) result.error = r.error.ToString();
  last_ = std::move(result);
  round_.reset();
}

absl::StatusOr<TransactionService::OrphanProgress> TransactionService::RecoverOrphans() {
  node::Node& node = *shared_->node;
  OrphanProgress progress;
  if (node.region_directory().Current()->manager() != node.id()) return progress;
  for (size_t i = 0; i < shared_->threads.size(); ++i) {
    TxnThread* t = shared_->threads[i].get();
    RETURN_IF_ERROR(node.RunOnThread(static_cast<int>(i), [t, &progress](node::NodeThread&) -> absl::Status {
      OrphanRecovery& recovery = t->recovery();
      const uint64_t epoch = t->replicas().epoch();
      const RecoveryRoundResult& last = recovery.last();
      const bool settled = last.epoch == epoch && last.settled;
      if (!settled) {
        progress.settled = false;
        if (!last.error.empty() && progress.error.empty()) progress.error = last.error;
        recovery.Start(epoch);
      }
      if (last.epoch == epoch) {
        progress.committed += last.committed;
        progress.aborted += last.aborted;
      }
      return absl::OkStatus();
    }));
  }
  return progress;
}

}  // namespace fathom::txn
