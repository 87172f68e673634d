#include "coordinator/zookeeper_store.h"

#include <utility>

namespace fathom::coordinator {

ZooKeeperStore::Op ZooKeeperStore::Op::Check(std::string path, int32_t version) {
  Op op;
  op.kind = Kind::kCheck;
  op.path = std::move(path);
  op.version = version;
  return op;
}

ZooKeeperStore::Op ZooKeeperStore::Op::Create(std::string path, std::string data, CreateMode mode, Access access) {
  Op op;
  op.kind = Kind::kCreate;
  op.path = std::move(path);
  op.data = std::move(data);
  op.mode = mode;
  op.access = access;
  return op;
}

ZooKeeperStore::Op ZooKeeperStore::Op::Set(std::string path, std::string data, int32_t version) {
  Op op;
  op.kind = Kind::kSet;
  op.path = std::move(path);
  op.data = std::move(data);
  op.version = version;
  return op;
}

ZooKeeperStore::Op ZooKeeperStore::Op::Delete(std::string path, int32_t version) {
  Op op;
  op.kind = Kind::kDelete;
  op.path = std::move(path);
  op.version = version;
  return op;
}

}  // namespace fathom::coordinator
