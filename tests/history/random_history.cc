#include "tests/history/random_history.h"

#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "tests/history/format.h"

namespace fathom::history::testing {
namespace {

struct Client {
  enum class State { kIdle, kRunning, kCommitted };
  State state = State::kIdle;
  std::vector<MicroOp> ops;  // as invoked; after the commit point, with reads filled
};

}  // namespace

std::vector<Event> RandomHistory(uint64_t seed, const RandomHistoryOptions& options) {
  std::mt19937_64 rng(seed);
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };

  std::map<int64_t, std::vector<int64_t>> state;  // the store, changed only at commit points
  std::map<int64_t, int64_t> next_value;          // appended values are unique per key
  std::vector<Client> clients(options.processes);
  std::vector<Event> events;
  int64_t time = 0;
  int started = 0;
  int busy = 0;

  auto emit = [&](int process, EventType type, std::vector<MicroOp> ops) {
    time += 1 + pick(1000);
    events.push_back({process, type, std::move(ops), time});
  };
  // The serial execution: the transaction takes effect now, atomically.
  auto commit = [&](Client& c) {
    for (MicroOp& op : c.ops) {
      if (op.kind == MicroOp::Kind::kAppend) {
        state[op.key].push_back(op.value);
      } else {
        op.result = state[op.key];
      }
    }
  };

  while (started < options.txns || busy > 0) {
    const int p = pick(options.processes);
    Client& c = clients[p];
    switch (c.state) {
      case Client::State::kIdle: {
        if (started == options.txns) break;
        ++started;
        ++busy;
        c.ops.clear();
        const int n = 1 + pick(options.max_ops);
        for (int i = 0; i < n; ++i) {
          const int64_t key = pick(options.keys);
          c.ops.push_back(chance(0.5) ? MicroOp::Append(key, ++next_value[key]) : MicroOp::Read(key));
        }
        emit(p, EventType::kInvoke, c.ops);
        c.state = Client::State::kRunning;
        break;
      }
      case Client::State::kRunning: {
        if (chance(options.fail_probability)) {
          emit(p, EventType::kFail, c.ops);
        } else if (chance(options.info_probability)) {
          if (chance(0.5)) {
            std::vector<MicroOp> invoked = c.ops;
            commit(c);
            emit(p, EventType::kInfo, std::move(invoked));
          } else {
            emit(p, EventType::kInfo, c.ops);
          }
        } else {
          commit(c);
          c.state = Client::State::kCommitted;
          break;
        }
        c.state = Client::State::kIdle;
        --busy;
        break;
      }
      case Client::State::kCommitted:
        emit(p, EventType::kOk, c.ops);
        c.state = Client::State::kIdle;
        --busy;
        break;
    }
  }
  return events;
}

std::string ToText(const std::vector<Event>& events) {
  std::string text;
  for (const Event& e : events) absl::StrAppend(&text, FormatEvent(e), "\n");
  return text;
}

}  // namespace fathom::history::testing
