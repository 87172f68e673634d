#include "tests/history/json.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "platform/base/status_macros.h"

namespace fathom::history {

absl::string_view JsonKindName(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::kNull:
      return "null";
    case JsonValue::Kind::kBool:
      return "boolean";
    case JsonValue::Kind::kNumber:
      return "number";
    case JsonValue::Kind::kString:
      return "string";
    case JsonValue::Kind::kArray:
      return "array";
    case JsonValue::Kind::kObject:
      return "object";
  }
  return "?";
}

namespace {

// Recursive descent over one line. Every error names the column of the offending byte.
class Reader {
 public:
  explicit Reader(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> Document() {
    SkipSpace();
    ASSIGN_OR_RETURN(JsonValue value, Value(/*depth=*/1));
    SkipSpace();
    if (pos_ < text_.size()) return Error(absl::StrCat("unexpected ", Describe(pos_), " after the value"));
    return value;
  }

 private:
  absl::Status Error(absl::string_view what) const { return ErrorAt(pos_, what); }
  static absl::Status ErrorAt(size_t pos, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("column ", pos + 1, ": ", what));
  }

  // The byte at `pos` for a message: 'x', byte 0xC3, or end of line.
  std::string Describe(size_t pos) const {
    if (pos >= text_.size()) return "end of line";
    const unsigned char c = text_[pos];
    if (c >= 0x20 && c < 0x7f) return absl::StrCat("'", text_.substr(pos, 1), "'");
    return absl::StrFormat("byte 0x%02X", c);
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r' || text_[pos_] == '\n')) {
      ++pos_;
    }
  }

  bool Consume(absl::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }

  absl::StatusOr<JsonValue> Value(int depth) {
    if (depth > kMaxJsonDepth) return Error(absl::StrCat("nesting deeper than ", kMaxJsonDepth));
    JsonValue value;
    value.column = static_cast<int>(pos_) + 1;
    if (pos_ >= text_.size()) return Error("expected a value, got end of line");
    const char c = text_[pos_];
    if (c == '{') {
      RETURN_IF_ERROR(Object(depth, &value));
    } else if (c == '[') {
      RETURN_IF_ERROR(Array(depth, &value));
    } else if (c == '"') {
      value.kind = JsonValue::Kind::kString;
      RETURN_IF_ERROR(String(&value.text));
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      RETURN_IF_ERROR(Number(&value));
    } else if (Consume("null")) {
      value.kind = JsonValue::Kind::kNull;
    } else if (Consume("true")) {
      value.kind = JsonValue::Kind::kBool;
      value.boolean = true;
    } else if (Consume("false")) {
      value.kind = JsonValue::Kind::kBool;
    } else {
      return Error(absl::StrCat("expected a value, got ", Describe(pos_)));
    }
    return value;
  }

  absl::Status Object(int depth, JsonValue* value) {
    value->kind = JsonValue::Kind::kObject;
    ++pos_;  // '{'
    SkipSpace();
    if (Consume("}")) return absl::OkStatus();
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return Error(absl::StrCat("expected a field name in quotes, got ", Describe(pos_)));
      }
      const size_t name_pos = pos_;
      std::string name;
      RETURN_IF_ERROR(String(&name));
      for (const auto& member : value->members) {
        if (member.first == name) return ErrorAt(name_pos, absl::StrCat("duplicate field \"", name, "\""));
      }
      SkipSpace();
      if (!Consume(":")) return Error(absl::StrCat("expected ':' after a field name, got ", Describe(pos_)));
      SkipSpace();
      ASSIGN_OR_RETURN(JsonValue member, Value(depth + 1));
      value->members.emplace_back(std::move(name), std::move(member));
      SkipSpace();
      if (Consume("}")) return absl::OkStatus();
      if (!Consume(",")) return Error(absl::StrCat("expected ',' or '}' in an object, got ", Describe(pos_)));
    }
  }

  absl::Status Array(int depth, JsonValue* value) {
    value->kind = JsonValue::Kind::kArray;
    ++pos_;  // '['
    SkipSpace();
    if (Consume("]")) return absl::OkStatus();
    while (true) {
      SkipSpace();
      ASSIGN_OR_RETURN(JsonValue item, Value(depth + 1));
      value->items.push_back(std::move(item));
      SkipSpace();
      if (Consume("]")) return absl::OkStatus();
      if (!Consume(",")) return Error(absl::StrCat("expected ',' or ']' in an array, got ", Describe(pos_)));
    }
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  absl::Status Number(JsonValue* value) {
    value->kind = JsonValue::Kind::kNumber;
    const size_t start = pos_;
    const bool negative = Consume("-");
    auto digit = [&](size_t p) { return p < text_.size() && text_[p] >= '0' && text_[p] <= '9'; };
    if (!digit(pos_)) return Error(absl::StrCat("expected a digit, got ", Describe(pos_)));
    if (text_[pos_] == '0' && digit(pos_ + 1)) return Error("leading zero in a number");
    // Accumulate as a negative number so INT64_MIN is representable.
    int64_t magnitude = 0;
    bool in_range = true;
    while (digit(pos_)) {
      const int d = text_[pos_] - '0';
      if (magnitude < (std::numeric_limits<int64_t>::min() + d) / 10) in_range = false;
      if (in_range) magnitude = magnitude * 10 - d;
      ++pos_;
    }
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      integral = false;
      ++pos_;
      if (!digit(pos_)) return Error(absl::StrCat("expected a digit after '.', got ", Describe(pos_)));
      while (digit(pos_)) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digit(pos_)) return Error(absl::StrCat("expected a digit in the exponent, got ", Describe(pos_)));
      while (digit(pos_)) ++pos_;
    }
    value->text = std::string(text_.substr(start, pos_ - start));
    if (integral && in_range) {
      if (negative) {
        value->integer = magnitude;
      } else if (magnitude != std::numeric_limits<int64_t>::min()) {
        value->integer = -magnitude;
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<uint32_t> Hex4() {
    if (pos_ + 4 > text_.size()) return Error("truncated \\u escape");
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_ + i];
      code <<= 4;
      if (c >= '0' && c <= '9') {
        code |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        code |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        code |= c - 'A' + 10;
      } else {
        return ErrorAt(pos_ + i, absl::StrCat("expected a hex digit in a \\u escape, got ", Describe(pos_ + i)));
      }
    }
    pos_ += 4;
    return code;
  }

  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  absl::Status String(std::string* out) {
    const size_t start = pos_;
    ++pos_;  // '"'
    while (true) {
      if (pos_ >= text_.size()) return ErrorAt(start, "unterminated string");
      const unsigned char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      // History files are ASCII: every string the schema allows is, and refusing other bytes here means
      // a corrupted byte inside a string is reported as such rather than as an odd name.
      if (c < 0x20 || c >= 0x7f) return Error(absl::StrCat(Describe(pos_), " inside a string"));
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= text_.size()) return ErrorAt(start, "unterminated string");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          ASSIGN_OR_RETURN(uint32_t code, Hex4());
          if (code >= 0xDC00 && code <= 0xDFFF) return Error("unpaired low surrogate in a \\u escape");
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (!Consume("\\u")) return Error("high surrogate not followed by a \\u low surrogate");
            ASSIGN_OR_RETURN(uint32_t low, Hex4());
            if (low < 0xDC00 || low > 0xDFFF) return Error("high surrogate not followed by a low surrogate");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(code, out);
          break;
        }
        default:
          return ErrorAt(pos_ - 1, absl::StrCat("invalid escape \\", Describe(pos_ - 1)));
      }
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<JsonValue> ParseJson(absl::string_view text) { return Reader(text).Document(); }

}  // namespace fathom::history
