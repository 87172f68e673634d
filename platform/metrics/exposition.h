// Exposition: a page of metrics in Prometheus's text format (version 0.0.4), what fathomd serves on
// --metrics_port (docs/formats/metrics.md).
//
//   Exposition page;
//   page.Counter("fathom_txn_commits_total", "Transactions committed.", {{"node", "1"}}, 1234);
//   page.Histogram("fathom_txn_commit_seconds", "...", {{"node", "1"}}, histogram);
//   std::string text = page.Text();
//
// A family's HELP and TYPE lines come once, before its first sample; samples of one family are kept
// together whatever order they were added in. Names that are not Prometheus names, a label name that is
// not one, or one family added with two types are refused (the sample is dropped and counted in
// `refused()`): a page is never malformed.
#ifndef FATHOM_PLATFORM_METRICS_EXPOSITION_H_
#define FATHOM_PLATFORM_METRICS_EXPOSITION_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "platform/metrics/histogram.h"

namespace fathom::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsMetricName(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, and not starting with "__" (reserved).
bool IsLabelName(std::string_view name);
// A dotted counter name of the node ("lease.member.2.age_ms") as a metric name and labels: "fathom_"
// and the non-numeric parts joined by '_' ("fathom_lease_member_age_ms"); a numeric part becomes a label
// named after the part before it ({member="2"}). Characters outside [a-zA-Z0-9_] become '_'.
std::pair<std::string, Labels> FromDottedName(std::string_view dotted);

class Exposition {
 public:
  void Counter(std::string_view name, std::string_view help, const Labels& labels, double value);
  void Gauge(std::string_view name, std::string_view help, const Labels& labels, double value);
  // The counters of a node whose kind is not known (the Stats counters mirrored as they are).
  void Untyped(std::string_view name, std::string_view help, const Labels& labels, double value);
  // `_bucket{le=...}` (cumulative, seconds), `_sum` and `_count` samples.
  void Histogram(std::string_view name, std::string_view help, const Labels& labels, const LatencyHistogram& h);

  std::string Text() const;
  int refused() const { return refused_; }

 private:
  struct Family {
    std::string type;
    std::string help;
    std::vector<std::string> samples;  // whole lines
  };
  // The family to add to, or null (refused) if the name is bad or it already has another type.
  Family* FamilyFor(std::string_view name, std::string_view type, std::string_view help, const Labels& labels);

  std::map<std::string, Family> families_;
  std::vector<std::string> order_;  // families in the order first added
  int refused_ = 0;
};

}  // namespace fathom::metrics

#endif  // FATHOM_PLATFORM_METRICS_EXPOSITION_H_
