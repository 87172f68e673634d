// The log format of log.h, on spdlog.
#include "platform/base/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "platform/base/mutex.h"

namespace fathom {
namespace {

std::atomic<int> min_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<uint32_t> process_node{0};
thread_local uint32_t thread_node = 0;

struct Epochs {
  absl::Mutex mu;
  absl::flat_hash_map<uint32_t, uint64_t> by_node ABSL_GUARDED_BY(mu);
};
Epochs& NodeEpochs() {
  static Epochs* epochs = new Epochs();
  return *epochs;
}

// One logger for the process: stderr, locked (lines of concurrent threads never interleave), flushed per
// line (a killed process loses nothing it logged).
spdlog::logger& Logger() {
  static spdlog::logger* logger = [] {
    auto* l = new spdlog::logger("fathom", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("%Y-%m-%d %H:%M:%S.%e %L %v");
    l->set_level(spdlog::level::trace);  // the level check is ours (min_level)
    l->flush_on(spdlog::level::trace);
    return l;
  }();
  return *logger;
}

spdlog::level::level_enum SpdLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarning:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::err;
}

void VLogf(LogLevel level, const char* component, const char* format, va_list args) {
  if (!LogEnabled(level)) return;
  char message[4096];
  vsnprintf(message, sizeof message, format, args);
  LogLine(level, component, message);
}

}  // namespace

absl::StatusOr<LogLevel> ParseLogLevel(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warning") return LogLevel::kWarning;
  if (name == "error") return LogLevel::kError;
  return absl::InvalidArgumentError(
      absl::StrCat("log level '", std::string(name), "': expected debug, info, warning or error"));
}

void SetLogLevel(LogLevel level) { min_level.store(static_cast<int>(level), std::memory_order_relaxed); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= min_level.load(std::memory_order_relaxed); }

void SetLogNode(uint32_t node) { process_node.store(node, std::memory_order_relaxed); }

ScopedLogNode::ScopedLogNode(uint32_t node) : previous_(thread_node) { thread_node = node; }
ScopedLogNode::~ScopedLogNode() { thread_node = previous_; }

void SetLogConfiguration(uint32_t node, uint64_t epoch) {
  Epochs& epochs = NodeEpochs();
  fathom::MutexLock lock(&epochs.mu);
  epochs.by_node[node] = epoch;
}

void LogLine(LogLevel level, std::string_view component, std::string_view message) {
  if (!LogEnabled(level)) return;
  const uint32_t node = thread_node != 0 ? thread_node : process_node.load(std::memory_order_relaxed);
  std::string config = "-";
  if (node != 0) {
    Epochs& epochs = NodeEpochs();
    fathom::MutexLock lock(&epochs.mu);
    if (auto it = epochs.by_node.find(node); it != epochs.by_node.end()) config = absl::StrCat(it->second);
  }
  Logger().log(SpdLevel(level), "node={} config={} {}: {}", node == 0 ? std::string("-") : absl::StrCat(node),
               config, component, message);
}

#define FATHOM_LOG_FUNCTION(name, level)                         \
  void name(const char* component, const char* format, ...) { \
    va_list args;                                                \
    va_start(args, format);                                      \
    VLogf(level, component, format, args);                       \
    va_end(args);                                                \
  }
FATHOM_LOG_FUNCTION(LogDebug, LogLevel::kDebug)
FATHOM_LOG_FUNCTION(LogInfo, LogLevel::kInfo)
FATHOM_LOG_FUNCTION(LogWarning, LogLevel::kWarning)
FATHOM_LOG_FUNCTION(LogError, LogLevel::kError)
#undef FATHOM_LOG_FUNCTION

}  // namespace fathom
