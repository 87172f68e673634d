// Single-key operations in the simulation's workload: chains of puts (every value unique) and lock-free
// gets on a few keys that every node thread shares, each operation recorded with its interval of virtual
// time; at the end each key's history must check linearizable (tests/history/register.h). A read that
// sees a value older than one a finished put wrote (a primary serving after its region moved, a lost
// acknowledged put) cannot be placed.
#ifndef FATHOM_TESTS_SIM_SIM_REGISTERS_H_
#define FATHOM_TESTS_SIM_SIM_REGISTERS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kv/kv.h"
#include "platform/base/clock.h"
#include "tests/history/register.h"
#include "txn/txn.h"

namespace fathom::sim {

// Held by a shared_ptr: a chain's callbacks keep it alive (a stopped node's may outlive the workload).
class RegisterHistory : public std::enable_shared_from_this<RegisterHistory> {
 public:
  struct Draw {
    std::string key;
    std::optional<std::string> put;  // the value put; nullopt: a get
  };

  // `clock` (the simulation's virtual one) outlives this.
  explicit RegisterHistory(const Clock* clock) : clock_(clock) {}

  // `count` operations over `keys` keys, half puts (values unique: `who` and the index), half gets.
  static std::vector<Draw> Draws(std::mt19937_64& random, int keys, int count, const std::string& who);

  // Runs `draws` one after another on `thread` (a node thread), recording each; then `done`.
  void RunChain(txn::TxnThread& thread, const kv::Table& table, std::vector<Draw> draws, std::string who,
                std::function<void()> done);

  // A read made outside the chains (the final read-back), with the virtual times around it.
  void RecordRead(const std::string& key, const absl::StatusOr<std::string>& value, absl::Time invoked,
                  absl::Time completed, std::string who);

  std::vector<std::string> keys() const;
  // One entry per key whose history is not linearizable (or could not be checked).
  std::vector<std::string> Check() const;

 private:
  struct Entry {
    history::RegisterOp op;
    bool answered = false;
    bool failed = false;  // a put that ended with an error: it may have happened or not
  };
  // The entry of an operation invoked now; its index in the key's list.
  size_t Invoke(const std::string& key, history::RegisterOp::Kind kind, std::optional<std::string> value,
                std::string who);
  void Answer(const std::string& key, size_t index, absl::Status status, std::optional<std::string> read);

  const Clock* const clock_;
  // Only the simulation's one thread touches this.
  std::map<std::string, std::vector<Entry>> entries_;
};

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_REGISTERS_H_
