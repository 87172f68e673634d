// InProcessPeers: the nodes of one process by control address, so that a join (Node::JoinPeer,
// Node::Republish) reaches its peer directly instead of through gRPC. The replayable simulation runs
// every node on one thread, which must not wait on gRPC's. A node given one (NodeOptions::in_process_peers)
// runs no control server: it registers itself as "in-process:<id>" once started and leaves when stopped;
// a join to an address nobody registered fails
// Unavailable, as one to a process that died does (so a simulation crashes a node by removing it).
#ifndef FATHOM_PLATFORM_NODE_IN_PROCESS_PEERS_H_
#define FATHOM_PLATFORM_NODE_IN_PROCESS_PEERS_H_

#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "platform/base/mutex.h"

namespace fathom::node {

class Node;

class InProcessPeers {
 public:
  void Add(const std::string& control_address, Node* node) {
    MutexLock lock(&mu_);
    nodes_[control_address] = node;
  }
  // Only if `node` is the one registered there (a node started again since may have taken the address).
  void Remove(const std::string& control_address, const Node* node) {
    MutexLock lock(&mu_);
    auto it = nodes_.find(control_address);
    if (it != nodes_.end() && it->second == node) nodes_.erase(it);
  }
  // Null if nobody is registered there.
  Node* Find(const std::string& control_address) const {
    MutexLock lock(&mu_);
    auto it = nodes_.find(control_address);
    return it == nodes_.end() ? nullptr : it->second;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Node*> nodes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fathom::node

#endif  // FATHOM_PLATFORM_NODE_IN_PROCESS_PEERS_H_
