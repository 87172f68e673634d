#include "platform/metrics/exposition.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fathom::metrics {
namespace {

bool NameChar(char c, bool first, bool colon) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' || (colon && c == ':') ||
         (!first && absl::ascii_isdigit(static_cast<unsigned char>(c)));
}

bool IsName(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!NameChar(name[i], i == 0, colon)) return false;
  }
  return true;
}

// HELP text: backslash and newline escaped. Label values: also the double quote.
std::string Escape(std::string_view text, bool quote) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (quote && c == '"') out += "\\\"";
    else out += c;
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Counters are integers: print them whole while a double holds them exactly.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return absl::StrFormat("%.17g", value);
}

std::string Sample(std::string_view name, const Labels& labels, double value) {
  std::string line(name);
  if (!labels.empty()) {
    std::vector<std::string> parts;
    for (const auto& [label, label_value] : labels) parts.push_back(absl::StrCat(label, "=\"", Escape(label_value, true), "\""));
    absl::StrAppend(&line, "{", absl::StrJoin(parts, ","), "}");
  }
  absl::StrAppend(&line, " ", FormatValue(value));
  return line;
}

}  // namespace

bool IsMetricName(std::string_view name) { return IsName(name, /*colon=*/true); }

bool IsLabelName(std::string_view name) { return IsName(name, /*colon=*/false) && name.substr(0, 2) != "__"; }

std::pair<std::string, Labels> FromDottedName(std::string_view dotted) {
  std::string name = "fathom";
  Labels labels;
  std::string previous = "id";
  size_t start = 0;
  while (start <= dotted.size()) {
    size_t end = dotted.find('.', start);
    if (end == std::string_view::npos) end = dotted.size();
    const std::string_view part = dotted.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    std::string clean;
    for (char c : part) clean += absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    const bool numeric = std::all_of(part.begin(), part.end(), [](char c) { return absl::ascii_isdigit(c); });
    if (numeric) {
      labels.emplace_back(previous, std::string(part));
    } else {
      absl::StrAppend(&name, "_", clean);
      previous = IsLabelName(clean) ? clean : "id";
    }
  }
  return {name, labels};
}

Exposition::Family* Exposition::FamilyFor(std::string_view name, std::string_view type, std::string_view help,
                                          const Labels& labels) {
  for (const auto& [label, value] : labels) {
    if (!IsLabelName(label) || (type == "histogram" && label == "le")) {
      ++refused_;
      return nullptr;
    }
  }
  if (!IsMetricName(name)) {
    ++refused_;
    return nullptr;
  }
  auto [it, added] = families_.try_emplace(std::string(name));
  if (added) {
    it->second.type = std::string(type);
    it->second.help = std::string(help);
    order_.push_back(it->first);
  } else if (it->second.type != type) {
    ++refused_;
    return nullptr;
  }
  return &it->second;
}

void Exposition::Counter(std::string_view name, std::string_view help, const Labels& labels, double value) {
  if (Family* family = FamilyFor(name, "counter", help, labels)) family->samples.push_back(Sample(name, labels, value));
}

void Exposition::Gauge(std::string_view name, std::string_view help, const Labels& labels, double value) {
  if (Family* family = FamilyFor(name, "gauge", help, labels)) family->samples.push_back(Sample(name, labels, value));
}

void Exposition::Untyped(std::string_view name, std::string_view help, const Labels& labels, double value) {
  if (Family* family = FamilyFor(name, "untyped", help, labels)) family->samples.push_back(Sample(name, labels, value));
}

void Exposition::Histogram(std::string_view name, std::string_view help, const Labels& labels,
                           const LatencyHistogram& h) {
  Family* family = FamilyFor(name, "histogram", help, labels);
  if (family == nullptr) return;
  uint64_t cumulative = 0;
  for (int i = 0; i < LatencyHistogram::kBuckets; ++i) {
    cumulative += h.bucket(i);
    const double bound = LatencyHistogram::UpperBoundSeconds(i);
    Labels with_le = labels;
    with_le.emplace_back("le", std::isinf(bound) ? "+Inf" : absl::StrFormat("%.7g", bound));
    family->samples.push_back(Sample(absl::StrCat(std::string(name), "_bucket"), with_le, static_cast<double>(cumulative)));
  }
  family->samples.push_back(Sample(absl::StrCat(std::string(name), "_sum"), labels, h.sum_seconds()));
  family->samples.push_back(Sample(absl::StrCat(std::string(name), "_count"), labels, static_cast<double>(h.count())));
}

std::string Exposition::Text() const {
  std::string text;
  for (const std::string& name : order_) {
    const Family& family = families_.at(name);
    if (!family.help.empty()) absl::StrAppend(&text, "# HELP ", name, " ", Escape(family.help, false), "\n");
    absl::StrAppend(&text, "# TYPE ", name, " ", family.type, "\n");
    for (const std::string& sample : family.samples) absl::StrAppend(&text, sample, "\n");
  }
  return text;
}

}  // namespace fathom::metrics
