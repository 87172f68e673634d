// Fathom's one log format, for every process (fathomd, the tools, the YCSB driver, tests): one line per
// event on stderr, written through spdlog (docs/formats/log-lines.md):
//
//   2026-11-28 03:37:05.739 W node=1 config=5 lease: node 1's lease lapsed (granted by node 2)
//   ^ local time, ms        ^ level: D debug, I info, W warning, E error
//                             ^ the node the line is about, and the configuration it last applied
//                                               ^ component: message
//
//   LogInfo("coordinator", "node %u is the configuration manager", id);   // printf-style
//   LogLine(LogLevel::kWarning, "fabric", status.ToString());            // a finished message
//
// Lines below the level (SetLogLevel, fathomd --log_level) are dropped before they are formatted.
// node= is the thread's node (ScopedLogNode: node threads), else the process's (SetLogNode: fathomd),
// else "-"; config= is the last configuration that node applied (SetLogConfiguration), else "-".
#ifndef FATHOM_PLATFORM_BASE_LOG_H_
#define FATHOM_PLATFORM_BASE_LOG_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fathom {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// "debug", "info", "warning" or "error"; InvalidArgument otherwise.
absl::StatusOr<LogLevel> ParseLogLevel(std::string_view name);
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// The node this process is (fathomd); 0 for none.
void SetLogNode(uint32_t node);
// Lines this thread writes while it lives are about `node` (a node thread of an embedded cluster).
class ScopedLogNode {
 public:
  explicit ScopedLogNode(uint32_t node);
  ~ScopedLogNode();
  ScopedLogNode(const ScopedLogNode&) = delete;
  ScopedLogNode& operator=(const ScopedLogNode&) = delete;

 private:
  uint32_t previous_;
};
// `node` has applied configuration `epoch`.
void SetLogConfiguration(uint32_t node, uint64_t epoch);

// One line; `message` may hold newlines (a state dump): they are kept, the prefix goes on the first.
void LogLine(LogLevel level, std::string_view component, std::string_view message);

// printf-style, format checked by the compiler. Arguments are evaluated even for a dropped line.
__attribute__((format(printf, 2, 3))) void LogDebug(const char* component, const char* format, ...);
__attribute__((format(printf, 2, 3))) void LogInfo(const char* component, const char* format, ...);
__attribute__((format(printf, 2, 3))) void LogWarning(const char* component, const char* format, ...);
__attribute__((format(printf, 2, 3))) void LogError(const char* component, const char* format, ...);

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_LOG_H_
