#include "tests/history/format.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "platform/base/mutex.h"

namespace fathom::history {

std::string FormatEvent(const Event& event) {
  std::string out = absl::StrCat("{\"process\":", event.process, ",\"type\":\"", EventTypeName(event.type),
                                 "\",\"f\":\"txn\",\"value\":[");
  for (size_t i = 0; i < event.ops.size(); ++i) {
    const MicroOp& op = event.ops[i];
    if (i > 0) out += ",";
    if (op.kind == MicroOp::Kind::kAppend) {
      absl::StrAppend(&out, "[\":append\",", op.key, ",", op.value, "]");
    } else if (!op.result.has_value()) {
      absl::StrAppend(&out, "[\":r\",", op.key, ",null]");
    } else {
      absl::StrAppend(&out, "[\":r\",", op.key, ",[", absl::StrJoin(*op.result, ","), "]]");
    }
  }
  absl::StrAppend(&out, "],\"time\":", event.time, "}");
  return out;
}

void HistoryRecorder::Record(int64_t process, EventType type, std::vector<MicroOp> ops) {
  Event event{process, type, std::move(ops), 0};
  MutexLock lock(&mu_);
  last_time_ = std::max(last_time_, absl::ToUnixNanos(clock_->Now()));
  event.time = last_time_;
  absl::StrAppend(&text_, FormatEvent(event), "\n");
}

std::string HistoryRecorder::Text() const {
  MutexLock lock(&mu_);
  return text_;
}

absl::Status HistoryRecorder::WriteFile(const std::string& path) const {
  const std::string text = Text();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) return absl::DataLossError(absl::StrCat("error writing ", path));
  return absl::OkStatus();
}

}  // namespace fathom::history
