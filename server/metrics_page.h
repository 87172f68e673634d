// The page fathomd serves on --metrics_port: a node's metrics in Prometheus's text format
// (docs/formats/metrics.md lists every family).
//
//   TableMemory tables(Clock::Real());   // outlives the endpoint
//   auto endpoint = metrics::HttpEndpoint::Start(options, [&] { return MetricsPage(*server, &tables); });
//
// Every sample has the label node="<id>". Named families (commits, aborts by reason, reads, lock
// conflicts, commit latency, the configuration, rings, memory, memory per table when `tables` is given,
// log, lease) come first; then every counter
// of the node's Stats call as it is (fathomctl status shows the same), untyped.
#ifndef FATHOM_SERVER_METRICS_PAGE_H_
#define FATHOM_SERVER_METRICS_PAGE_H_

#include <string>

#include "server/server.h"
#include "server/table_memory.h"

namespace fathom::server {

std::string MetricsPage(Server& server, TableMemory* tables = nullptr);

}  // namespace fathom::server

#endif  // FATHOM_SERVER_METRICS_PAGE_H_
