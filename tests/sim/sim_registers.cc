#include "tests/sim/sim_registers.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fathom::sim {

std::vector<RegisterHistory::Draw> RegisterHistory::Draws(std::mt19937_64& random, int keys, int count,
                                                          const std::string& who) {
  std::vector<Draw> draws;
  for (int i = 0; i < count && keys > 0; ++i) {
    Draw draw{absl::StrCat("register-", random() % keys), std::nullopt};
    if (random() % 2 == 0) draw.put = absl::StrCat(who, " #", i);
    draws.push_back(std::move(draw));
  }
  return draws;
}

size_t RegisterHistory::Invoke(const std::string& key, history::RegisterOp::Kind kind,
                               std::optional<std::string> value, std::string who) {
  std::vector<Entry>& list = entries_[key];
  Entry entry;
  entry.op.kind = kind;
  entry.op.value = std::move(value);
  entry.op.invoked = absl::ToUnixNanos(clock_->Now());
  entry.op.label = std::move(who);
  list.push_back(std::move(entry));
  return list.size() - 1;
}

void RegisterHistory::Answer(const std::string& key, size_t index, absl::Status status,
                             std::optional<std::string> read) {
  Entry& entry = entries_[key][index];
  entry.answered = true;
  entry.op.completed = absl::ToUnixNanos(clock_->Now());
  if (entry.op.kind == history::RegisterOp::Kind::kRead) {
    entry.op.value = std::move(read);
  }
  entry.failed = !status.ok();
  if (!status.ok()) absl::StrAppend(&entry.op.label, " (", status.ToString(), ")");
}

void RegisterHistory::RunChain(txn::TxnThread& thread, const kv::Table& table, std::vector<Draw> draws,
                               std::string who, std::function<void()> done) {
  // Each step holds the next only weakly: the callback in flight keeps the chain alive.
  auto step = std::make_shared<std::function<void(size_t)>>();
  *step = [self = shared_from_this(), &thread, table, draws = std::move(draws), who = std::move(who), done = std::move(done),
           weak = std::weak_ptr(step)](size_t i) {
    if (i == draws.size()) return done();
    std::shared_ptr<std::function<void(size_t)>> next = weak.lock();
    const Draw& draw = draws[i];
    if (draw.put.has_value()) {
      const size_t index = self->Invoke(draw.key, history::RegisterOp::Kind::kWrite, draw.put, who);
      table.PutAsync(thread, draw.key, *draw.put, [self, key = draw.key, index, next, i](absl::Status s) {
        self->Answer(key, index, s, std::nullopt);
        (*next)(i + 1);
      });
      return;
    }
    const size_t index = self->Invoke(draw.key, history::RegisterOp::Kind::kRead, std::nullopt, who);
    table.GetAsync(thread, draw.key, [self, key = draw.key, index, next, i](kv::GetResult r) {
      if (r.value.ok()) {
        self->Answer(key, index, absl::OkStatus(), *r.value);
      } else if (absl::IsNotFound(r.value.status())) {
        self->Answer(key, index, absl::OkStatus(), std::nullopt);
      } else {
        self->Answer(key, index, r.value.status(), std::nullopt);
      }
      (*next)(i + 1);
    });
  };
  (*step)(0);
}

void RegisterHistory::RecordRead(const std::string& key, const absl::StatusOr<std::string>& value,
                                 absl::Time invoked, absl::Time completed, std::string who) {
  if (!value.ok() && !absl::IsNotFound(value.status())) return;  // says nothing
  Entry entry;
  entry.op = history::RegisterOp::Read(value.ok() ? std::optional<std::string>(*value) : std::nullopt,
                                       absl::ToUnixNanos(invoked), absl::ToUnixNanos(completed));
  entry.op.label = std::move(who);
  entry.answered = true;
  entries_[key].push_back(std::move(entry));
}

std::vector<std::string> RegisterHistory::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, unused] : entries_) out.push_back(key);
  return out;
}

std::vector<std::string> RegisterHistory::Check() const {
  std::vector<std::string> violations;
  for (const auto& [key, list] : entries_) {
    std::vector<history::RegisterOp> ops;
    for (const Entry& entry : list) {
      history::RegisterOp op = entry.op;
      if (op.kind == history::RegisterOp::Kind::kRead) {
        if (!entry.answered || entry.failed) continue;  // a read without an answer says nothing
      } else if (!entry.answered || entry.failed) {
        op.completed.reset();  // may have happened or not
      }
      ops.push_back(std::move(op));
    }
    if (absl::Status s = history::CheckRegister(std::move(ops)); !s.ok()) {
      violations.push_back(absl::StrCat("single-key history of ", key, ": ", s.ToString()));
    }
  }
  return violations;
}

}  // namespace fathom::sim
