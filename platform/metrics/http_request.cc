#include "platform/metrics/http_request.h"

#include <vector>

#include "absl/strings/ascii.h"

namespace fathom::metrics {
namespace {

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isupper(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool IsTarget(std::string_view s) {
  if (s.empty() || s[0] != '/') return false;
  for (char c : s) {
    if (!absl::ascii_isgraph(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

RequestState ParseRequest(std::string_view received, RequestLine& line) {
  const size_t line_end = received.find('\n');
  // The request line may already be judged before the headers ended.
  if (line_end != std::string_view::npos) {
    std::string_view first = received.substr(0, line_end);
    if (!first.empty() && first.back() == '\r') first.remove_suffix(1);
    std::vector<std::string_view> parts;
    for (size_t start = 0, space = 0; space != std::string_view::npos; start = space + 1) {
      space = first.find(' ', start);
      parts.push_back(first.substr(start, space == std::string_view::npos ? space : space - start));
    }
    if (parts.size() != 3 || !IsToken(parts[0]) || !IsTarget(parts[1]) ||
        (parts[2] != "HTTP/1.0" && parts[2] != "HTTP/1.1")) {
      return RequestState::kMalformed;
    }
    line.method = std::string(parts[0]);
    line.path = std::string(parts[1].substr(0, parts[1].find('?')));
  }
  if (received.find("\r\n\r\n") == std::string_view::npos && received.find("\n\n") == std::string_view::npos) {
    return RequestState::kIncomplete;
  }
  return RequestState::kComplete;
}

int StatusFor(const RequestLine& line, std::string_view served_path) {
  if (line.method != "GET" && line.method != "HEAD") return 405;
  if (line.path != served_path) return 404;
  return 200;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    default: return "Error";
  }
}

}  // namespace fathom::metrics
