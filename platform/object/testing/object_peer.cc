// object_peer: the writer process of the object stress test over UCX.
//
//   object_peer --mode=serve --transports=sm --writers=2
//     allocates objects of several sizes in a region, prints
//     "READY <address hex> <region descriptor hex> <object refs hex>", then has `writers` threads rewrite
//     the objects with self-describing patterns (object_pattern.h) as fast as they can, while the main
//     thread serves one-sided operations, until stdin closes.
//   Object refs: for each object, u64 address, u32 incarnation, u32 capacity (little-endian).
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/escaping.h"
#include "platform/fabric/ucx/ucx_fabric.h"
#include "platform/memory/region.h"
#include "platform/memory/slab_allocator.h"
#include "platform/object/object_store.h"
#include "platform/object/testing/object_pattern.h"

ABSL_FLAG(std::string, mode, "serve", "serve (the only mode)");
ABSL_FLAG(std::string, transports, "sm", "UCX_TLS for this process");
ABSL_FLAG(int, writers, 2, "writer threads");
ABSL_FLAG(int, objects_per_size, 4, "objects of each payload size");

namespace fathom::object {
namespace {

constexpr uint32_t kPayloadSizes[] = {32, 200, 1000, 4000, 16000, 65000};  // 64 B to 64 KiB slots

int Fail(const absl::Status& status) {
  std::cerr << "object_peer: " << status << std::endl;
  return 1;
}

bool StdinClosed() {
  pollfd fd{STDIN_FILENO, POLLIN, 0};
  if (poll(&fd, 1, 0) <= 0) return false;
  char buf[64];
  return read(STDIN_FILENO, buf, sizeof buf) <= 0;
}

int Serve() {
  fabric::UcxOptions options;
  options.transports = absl::GetFlag(FLAGS_transports);
  auto fabric = fabric::CreateUcxFabric(options);
  if (!fabric.ok()) return Fail(fabric.status());
  auto region = memory::LocalRegion::Allocate(**fabric, /*id=*/1, /*owner_node=*/1, 64 << 20);
  if (!region.ok()) return Fail(region.status());
  memory::SlabSource source({region->get()});
  memory::SlabAllocator setup_allocator(&source);
  ObjectStore setup({region->get()}, &setup_allocator);
  std::vector<ObjectRef> refs;
  std::vector<std::byte> payload;
  for (int copy = 0; copy < absl::GetFlag(FLAGS_objects_per_size); ++copy) {
    for (uint32_t size : kPayloadSizes) {
      auto ref = setup.Allocate(size);
      if (!ref.ok()) return Fail(ref.status());
      testing::FillPattern(refs.size(), 0, ref->payload_capacity(), payload);
      if (absl::Status s = setup.Write(*ref, payload); !s.ok()) return Fail(s);
      refs.push_back(*ref);
    }
  }
  auto worker = (*fabric)->CreateWorker();
  if (!worker.ok()) return Fail(worker.status());
  std::string encoded;
  for (const ObjectRef& ref : refs) {
    char bytes[16];
    uint64_t raw = ref.address.raw();
    std::memcpy(bytes, &raw, 8);
    std::memcpy(bytes + 8, &ref.incarnation, 4);
    std::memcpy(bytes + 12, &ref.capacity, 4);
    encoded.append(bytes, 16);
  }
  std::cout << "READY " << absl::BytesToHexString((*worker)->address()) << " "
            << absl::BytesToHexString((*region)->info().descriptor.Serialize()) << " "
            << absl::BytesToHexString(encoded) << std::endl;

  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  const int writer_count = absl::GetFlag(FLAGS_writers);
  for (int w = 0; w < writer_count; ++w) {
    writers.emplace_back([&, w] {
      memory::SlabAllocator allocator(&source);
      ObjectStore store({region->get()}, &allocator);
      std::vector<std::byte> bytes;
      for (uint64_t generation = 1; !stop.load(std::memory_order_relaxed); ++generation) {
        for (size_t i = w; i < refs.size(); i += writer_count) {  // each writer owns its objects
          testing::FillPattern(i, generation, refs[i].payload_capacity(), bytes);
          if (absl::Status s = store.Write(refs[i], bytes); !s.ok()) std::cerr << "write: " << s << std::endl;
        }
      }
    });
  }
  fabric::Completion sink[16];
  while (!StdinClosed()) {
    (*worker)->Poll(sink);
    (*worker)->Wait(absl::Milliseconds(20));
  }
  stop = true;
  for (auto& t : writers) t.join();
  return 0;
}

}  // namespace
}  // namespace fathom::object

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return fathom::object::Serve();
}
