// The checker: a history's anomalies under strict serializability (or plain serializability).
#ifndef FATHOM_TESTS_HISTORY_CHECK_H_
#define FATHOM_TESTS_HISTORY_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tests/history/anomaly.h"
#include "tests/history/types.h"

namespace fathom::history {

struct CheckOptions {
  // Real-time order counts (strict serializability). False checks serializability only, for systems or
  // histories whose line order does not follow real time.
  bool realtime = true;
  // Edge visits allowed to the search for single-rw-edge cycles in one component (see cycles.h). When it
  // runs out, the component is reported with the cycle found next and a note saying so.
  int64_t max_search_steps = 50'000'000;
};

struct CheckResult {
  std::vector<Anomaly> anomalies;  // ordered by AnomalyType, then as found
  int ok = 0;                      // transactions by outcome
  int failed = 0;
  int info = 0;

  // No anomaly: strictly serializable (or serializable) as far as the checker can tell.
  bool valid() const { return anomalies.empty(); }
  // True if some anomaly has this type.
  bool Has(AnomalyType type) const;
  // The verdict and every anomaly, for logs and check_history.
  std::string ToString() const;
};

CheckResult CheckHistory(const History& history, const CheckOptions& options = {});

}  // namespace fathom::history

#endif  // FATHOM_TESTS_HISTORY_CHECK_H_
