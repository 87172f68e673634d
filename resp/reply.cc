#include "resp/reply.h"

#include "absl/strings/str_cat.h"

namespace fathom::resp {

void AppendSimple(std::string& out, std::string_view text) {
  out += '+';
  out.append(text.data(), text.size());
  out += "\r\n";
}

void AppendError(std::string& out, std::string_view text) {
  out += '-';
  for (char c : text) out += (c == '\r' || c == '\n') ? ' ' : c;
  out += "\r\n";
}

void AppendInteger(std::string& out, int64_t value) { absl::StrAppend(&out, ":", value, "\r\n"); }

void AppendBulk(std::string& out, std::string_view bytes) {
  absl::StrAppend(&out, "$", bytes.size(), "\r\n");
  out.append(bytes.data(), bytes.size());
  out += "\r\n";
}

void AppendNull(std::string& out) { out += "$-1\r\n"; }

void AppendNullArray(std::string& out) { out += "*-1\r\n"; }

void AppendArrayHeader(std::string& out, size_t elements) { absl::StrAppend(&out, "*", elements, "\r\n"); }

}  // namespace fathom::resp
