// See table_report.h.
#include "tools/fathomctl/table_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/fathomctl/report.h"
#include "server/table_client.h"

namespace fathom::fathomctl {
namespace {

std::string TableJson(const control::TableSummary& t) {
  std::string json = absl::StrCat("{\"name\":", JsonString(t.name()), ",\"kind\":\"", server::TableKindName(t.kind()),
                                  "\",\"buckets\":", t.buckets(), ",\"epoch\":", t.epoch(),
                                  ",\"inline_bytes\":", t.inline_bytes(), ",\"max_key_bytes\":", t.max_key_bytes(),
                                  ",\"max_value_bytes\":", t.max_value_bytes());
  if (!t.problem().empty()) absl::StrAppend(&json, ",\"problem\":", JsonString(t.problem()));
  return json + "}";
}

}  // namespace

std::string FormatTablesText(const std::vector<control::TableSummary>& tables) {
  if (tables.empty()) return "no tables\n";
  std::vector<std::vector<std::string>> rows = {{"NAME", "KIND", "BUCKETS", "EPOCH", "INLINE", "MAX_KEY", "MAX_VALUE"}};
  for (const control::TableSummary& t : tables) {
    if (!t.problem().empty()) {
      rows.push_back({t.name(), server::TableKindName(t.kind()), "?", absl::StrCat(t.epoch()), "", "", t.problem()});
      continue;
    }
    rows.push_back({t.name(), server::TableKindName(t.kind()), absl::StrCat(t.buckets()), absl::StrCat(t.epoch()),
                    HumanBytes(t.inline_bytes()), HumanBytes(t.max_key_bytes()), HumanBytes(t.max_value_bytes())});
  }
  return AlignColumns(rows);
}

std::string FormatTablesJson(const std::vector<control::TableSummary>& tables) {
  std::vector<std::string> entries;
  for (const control::TableSummary& t : tables) entries.push_back(TableJson(t));
  return absl::StrCat("{\"tables\":[", absl::StrJoin(entries, ","), "]}\n");
}

std::string FormatCreatedText(const control::TableSummary& table) {
  return absl::StrCat("created table ", table.name(), ": ", server::TableKindName(table.kind()), ", ", table.buckets(),
                      " buckets\n");
}

std::string FormatResizedText(const control::TableSummary& table) {
  return absl::StrCat("resized table ", table.name(), ": ", table.buckets(), " buckets, epoch ", table.epoch(), "\n");
}

std::string FormatTableJson(const control::TableSummary& table) {
  return absl::StrCat("{\"table\":", TableJson(table), "}\n");
}

}  // namespace fathom::fathomctl
