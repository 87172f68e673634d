#include "resp/request_parser.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fathom::resp {
namespace {

absl::Status ProtocolError(std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("Protocol error: ", std::string(what)));
}

// A decimal length: digits only (a leading '-' only for -1), no more than 18 of them.
bool ParseLength(std::string_view text, int64_t& value) {
  if (text == "-1") {
    value = -1;
    return true;
  }
  if (text.empty() || text.size() > 18) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return true;
}

}  // namespace

absl::StatusOr<std::optional<std::string_view>> RequestParser::Line(size_t at, size_t& next,
                                                                    bool allow_bare_lf) const {
  const std::string_view rest = std::string_view(buffer_).substr(at);
  const size_t lf = rest.find('\n');
  if (lf == std::string_view::npos) {
    if (rest.size() > limits_.max_inline_bytes) return ProtocolError("too big inline request");
    return std::nullopt;
  }
  if (lf > limits_.max_inline_bytes) return ProtocolError("too big inline request");
  std::string_view line = rest.substr(0, lf);
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  } else if (!allow_bare_lf) {
    return ProtocolError("expected CRLF at the end of a line");
  }
  next = at + lf + 1;
  return line;
}

void RequestParser::Consume(size_t to) {
  consumed_ = to;
  // Keep the buffer from growing with what is done: compact once more than half of it is.
  if (consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  } else if (consumed_ > buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
}

absl::StatusOr<std::optional<Command>> RequestParser::Next() {
  while (consumed_ < buffer_.size()) {
    absl::StatusOr<std::optional<Command>> command =
        buffer_[consumed_] == '*' ? NextArray() : NextInline();
    if (!command.ok() || !command->has_value() || !(*command)->empty()) return command;
    // An empty array or line: skipped (it was consumed); look at what follows.
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<Command>> RequestParser::NextArray() {
  size_t at = 0;
  absl::StatusOr<std::optional<std::string_view>> header = Line(consumed_, at, /*allow_bare_lf=*/false);
  if (!header.ok()) return header.status();
  if (!header->has_value()) return std::nullopt;
  int64_t count = 0;
  if (!ParseLength((*header)->substr(1), count)) return ProtocolError("invalid multibulk length");
  if (count > static_cast<int64_t>(limits_.max_args)) return ProtocolError("invalid multibulk length");
  Command command;
  if (count <= 0) {
    Consume(at);
    return command;  // empty: skipped by Next
  }
  command.reserve(static_cast<size_t>(std::min<int64_t>(count, 1024)));
  for (int64_t i = 0; i < count; ++i) {
    if (at >= buffer_.size()) return std::nullopt;
    if (buffer_[at] != '$') {
      return ProtocolError(absl::StrCat("expected '$', got '", std::string(1, buffer_[at]), "'"));
    }
    size_t data = 0;
    absl::StatusOr<std::optional<std::string_view>> length_line = Line(at, data, /*allow_bare_lf=*/false);
    if (!length_line.ok()) return length_line.status();
    if (!length_line->has_value()) return std::nullopt;
    int64_t length = 0;
    if (!ParseLength((*length_line)->substr(1), length) || length < 0 ||
        length > static_cast<int64_t>(limits_.max_bulk_bytes)) {
      return ProtocolError("invalid bulk length");
    }
    const size_t end = data + static_cast<size_t>(length);
    if (buffer_.size() < end + 2) return std::nullopt;
    if (buffer_[end] != '\r' || buffer_[end + 1] != '\n') return ProtocolError("bulk string not followed by CRLF");
    command.emplace_back(buffer_, data, static_cast<size_t>(length));
    at = end + 2;
  }
  Consume(at);
  return command;
}

absl::StatusOr<std::optional<Command>> RequestParser::NextInline() {
  size_t next = 0;
  absl::StatusOr<std::optional<std::string_view>> line = Line(consumed_, next, /*allow_bare_lf=*/true);
  if (!line.ok()) return line.status();
  if (!line->has_value()) return std::nullopt;
  Command command;
  const std::string_view text = **line;
  size_t start = 0;
  while (start < text.size()) {
    if (text[start] == ' ' || text[start] == '\t') {
      ++start;
      continue;
    }
    size_t end = start;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t') ++end;
    command.emplace_back(text.substr(start, end - start));
    start = end;
  }
  Consume(next);
  return command;
}

}  // namespace fathom::resp
