// CZooKeeperStore: ZooKeeperStore over the ZooKeeper C client (zookeeper_mt), what fathomd runs.
// Each Session is one client handle; the client reconnects by itself while the session lives, and its
// events (session state, watches) reach SessionOptions::on_event on the client's completion thread.
//
//   CZooKeeperStore store;
//   options.connect_string = "127.0.0.1:2181";
//   ASSIGN_OR_RETURN(auto session, store.Open(options));
#ifndef FATHOM_COORDINATOR_C_ZOOKEEPER_STORE_H_
#define FATHOM_COORDINATOR_C_ZOOKEEPER_STORE_H_

#include <memory>

#include "coordinator/zookeeper_store.h"

namespace fathom::coordinator {

class CZooKeeperStore final : public ZooKeeperStore {
 public:
  absl::StatusOr<std::unique_ptr<Session>> Open(const SessionOptions& options) override;
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_C_ZOOKEEPER_STORE_H_
