// RequestParser: commands of the Redis protocol (RESP2) as a client sends them, read incrementally from a
// connection's bytes: arrays of bulk strings (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`), which redis-cli and
// redis-benchmark send, and inline commands (`PING\r\n`, words separated by spaces) for telnet users.
// docs/formats/resp.md.
//
//   RequestParser parser;
//   parser.Feed(bytes_received);
//   while (true) {
//     absl::StatusOr<std::optional<Command>> next = parser.Next();
//     if (!next.ok()) { reply "-ERR " + message; close the connection; }
//     if (!next->has_value()) break;  // read more
//     Execute(**next);
//   }
//
// Malformed input (a length that is not a number or over its limit, a bulk string not followed by CRLF,
// an array element that is not a bulk string) is an InvalidArgument error starting "Protocol error": the
// connection cannot be read further, so the caller answers and closes it. Lengths are never trusted: a
// bulk longer than max_bulk_bytes is refused before its bytes arrive.
#ifndef FATHOM_RESP_REQUEST_PARSER_H_
#define FATHOM_RESP_REQUEST_PARSER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace fathom::resp {

using Command = std::vector<std::string>;

struct ParserLimits {
  size_t max_args = 1 << 20;               // elements of one array
  size_t max_bulk_bytes = 16 << 20;        // one bulk string
  size_t max_inline_bytes = 64 << 10;      // one inline command line (also: a header line)
};

class RequestParser {
 public:
  explicit RequestParser(ParserLimits limits = {}) : limits_(limits) {}

  void Feed(std::string_view bytes) { buffer_.append(bytes.data(), bytes.size()); }
  // The next whole command, nullopt if more bytes are needed, or a protocol error. An empty array or an
  // empty inline line is skipped (as Redis does).
  absl::StatusOr<std::optional<Command>> Next();
  // Bytes received and not yet returned as commands.
  size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  // A line ending in CRLF (or LF, inline only) at `at`: the line without its end, and where the next
  // starts; nullopt if incomplete. Error if longer than max_inline_bytes.
  absl::StatusOr<std::optional<std::string_view>> Line(size_t at, size_t& next, bool allow_bare_lf) const;
  absl::StatusOr<std::optional<Command>> NextArray();
  absl::StatusOr<std::optional<Command>> NextInline();
  void Consume(size_t to);

  ParserLimits limits_;
  std::string buffer_;
  size_t consumed_ = 0;  // buffer_ before this is done with
};

}  // namespace fathom::resp

#endif  // FATHOM_RESP_REQUEST_PARSER_H_
