// How fathomctl prints tables (table list, and the table a create made): aligned columns, or one line of
// JSON. Pure functions (table_report_test).
//
// JSON: {"tables":[{"name","kind":"hopscotch"|"cuckoo","buckets","epoch","inline_bytes","max_key_bytes",
//        "max_value_bytes"[,"problem"]}]}; a created or resized table alone is {"table":{...}}.
#ifndef FATHOM_TOOLS_FATHOMCTL_TABLE_REPORT_H_
#define FATHOM_TOOLS_FATHOMCTL_TABLE_REPORT_H_

#include <string>
#include <vector>

#include "platform/node/control/control.pb.h"

namespace fathom::fathomctl {

std::string FormatTablesText(const std::vector<control::TableSummary>& tables);
std::string FormatTablesJson(const std::vector<control::TableSummary>& tables);
std::string FormatCreatedText(const control::TableSummary& table);
std::string FormatResizedText(const control::TableSummary& table);
std::string FormatTableJson(const control::TableSummary& table);  // a created or resized table

}  // namespace fathom::fathomctl

#endif  // FATHOM_TOOLS_FATHOMCTL_TABLE_REPORT_H_
