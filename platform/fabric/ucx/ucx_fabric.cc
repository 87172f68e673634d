// UcxFabric: the ucp context and memory registration (control path).
#include "platform/fabric/ucx/ucx_fabric.h"

#include <sys/eventfd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "platform/fabric/ucx/ucx_internal.h"
#include "platform/fabric/ucx/ucx_status.h"
#include "platform/fabric/wire.h"

namespace fathom::fabric {
namespace ucx_internal {
namespace {

// The transports UCX will use: those configured, else UCX_TLS; empty when UCX chooses.
std::string EffectiveTransports(const std::string& configured) {
  if (!configured.empty()) return configured;
  const char* env = std::getenv("UCX_TLS");
  return env == nullptr ? "" : env;
}

class UcxRegion final : public Region {
 public:
  UcxRegion(ucp_context_h context, ucp_mem_h memh, std::byte* data, size_t size, RegionDescriptor descriptor,
            std::shared_ptr<RegionTable> table)
      : context_(context),
        memh_(memh),
        data_(data),
        size_(size),
        descriptor_(std::move(descriptor)),
        table_(std::move(table)) {
    table_->Add(reinterpret_cast<uint64_t>(data_), size_);
  }
  ~UcxRegion() override {
    table_->Remove(reinterpret_cast<uint64_t>(data_));  // waits for message reads and writes in it
    ucp_mem_unmap(context_, memh_);
  }

  std::byte* data() const override { return data_; }
  size_t size() const override { return size_; }
  const RegionDescriptor& descriptor() const override { return descriptor_; }

 private:
  ucp_context_h context_;
  ucp_mem_h memh_;
  std::byte* data_;
  size_t size_;
  RegionDescriptor descriptor_;
  std::shared_ptr<RegionTable> table_;
};

}  // namespace

void RegionTable::Add(uint64_t base, uint64_t length) {
  fathom::MutexLock lock(&mu_);
  auto at = std::lower_bound(regions_.begin(), regions_.end(), std::make_pair(base, uint64_t{0}));
  regions_.insert(at, {base, length});
}

void RegionTable::Remove(uint64_t base) {
  fathom::MutexLock lock(&mu_);
  auto at = std::lower_bound(regions_.begin(), regions_.end(), std::make_pair(base, uint64_t{0}));
  if (at != regions_.end() && at->first == base) regions_.erase(at);
}

bool RegionTable::Reader::Holds(uint64_t address, uint64_t length) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  const auto& regions = table_.regions_;
  // The last region starting at or before `address`.
  auto after = std::upper_bound(regions.begin(), regions.end(), std::make_pair(address, UINT64_MAX));
  if (after == regions.begin()) return false;
  const auto& [base, size] = *(after - 1);
  const uint64_t offset = address - base;
  return offset < size && length <= size - offset;
}

bool RemoteAccessByMessages(const UcxOptions& options) {
  switch (options.remote_access) {
    case UcxOptions::RemoteAccess::kMessages:
      return true;
    case UcxOptions::RemoteAccess::kOneSided:
      return false;
    case UcxOptions::RemoteAccess::kAuto:
      break;
  }
  const std::string tls = EffectiveTransports(options.transports);
  // UCX's own choice ("all", "^...", unset) may be an RDMA transport, which is truly one-sided.
  if (tls.empty() || tls == "all") return false;
  bool tcp = false;
  for (absl::string_view name : absl::StrSplit(tls, ',')) {
    if (!name.empty() && name[0] == '^') return false;
    if (name == "tcp") {
      tcp = true;
    } else if (name != "sm" && name != "shm" && name != "posix" && name != "sysv" && name != "cma" &&
               name != "knem" && name != "xpmem" && name != "self") {
      return false;  // rc, ud, dc, ib, ...: RDMA
    }
  }
  return tcp;
}

// True if every transport named (in options, else UCX_TLS) is a same-host one without peer-failure support.
bool SharedMemoryOnly(const std::string& configured) {
  const std::string tls = EffectiveTransports(configured);
  if (tls.empty() || tls == "all") return false;
  for (absl::string_view name : absl::StrSplit(tls, ',')) {
    if (!name.empty() && name[0] == '^') return false;  // "all but ...": may include tcp or verbs
    if (name != "sm" && name != "shm" && name != "posix" && name != "sysv" && name != "cma" && name != "knem" &&
        name != "xpmem" && name != "self") {
      return false;
    }
  }
  return true;
}

namespace {

std::string DurationForUcx(absl::Duration d) {
  return absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(d)), "ms");
}

}  // namespace

UcxFabric::~UcxFabric() { ucp_cleanup(context_); }

absl::StatusOr<std::unique_ptr<Region>> UcxFabric::AllocateRegion(size_t size) {
  return Map(nullptr, size, /*allocate=*/true);
}

absl::StatusOr<std::unique_ptr<Region>> UcxFabric::RegisterRegion(void* address, size_t size) {
  if (address == nullptr) return absl::InvalidArgumentError("RegisterRegion: null address");
  return Map(address, size, /*allocate=*/false);
}

absl::StatusOr<std::unique_ptr<Region>> UcxFabric::Map(void* address, size_t size, bool allocate) {
  if (size == 0) return absl::InvalidArgumentError("region size must be positive");
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  params.address = address;
  params.length = size;
  // UCX allocates from shared memory when asked to allocate, which same-host peers then map directly.
  params.flags = allocate ? UCP_MEM_MAP_ALLOCATE : 0;
  ucp_mem_h memh;
  if (ucs_status_t s = ucp_mem_map(context_, &params, &memh); s != UCS_OK) {
    return FromUcs(s, absl::StrCat("ucp_mem_map of ", size, " bytes").c_str());
  }
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  if (ucs_status_t s = ucp_mem_query(memh, &attr); s != UCS_OK) {
    ucp_mem_unmap(context_, memh);
    return FromUcs(s, "ucp_mem_query");
  }
  void* packed = nullptr;
  size_t packed_size = 0;
  if (ucs_status_t s = ucp_rkey_pack(context_, memh, &packed, &packed_size); s != UCS_OK) {
    ucp_mem_unmap(context_, memh);
    return FromUcs(s, "ucp_rkey_pack");
  }
  RegionDescriptor descriptor;
  descriptor.base = reinterpret_cast<uint64_t>(attr.address);
  descriptor.length = size;
  descriptor.remote_key.assign(static_cast<const char*>(packed), packed_size);
  ucp_rkey_buffer_release(packed);
  if (descriptor.remote_key.size() > kMaxRemoteKeyBytes) {
    ucp_mem_unmap(context_, memh);
    return absl::InternalError(absl::StrCat("UCX remote key of ", packed_size, " bytes exceeds the format limit"));
  }
  // Allocated memory is fresh pages the kernel zero-fills when they are first touched (ALLOC_PRIO below
  // lists only such methods): no memset, which would fault in every page of a region at once (~35 ms and
  // its whole size in memory per 64 MiB, while a failure's recovery makes new backup copies).
  auto* data = static_cast<std::byte*>(attr.address);
  return std::make_unique<UcxRegion>(context_, memh, data, size, std::move(descriptor), regions_);
}

absl::StatusOr<std::unique_ptr<Worker>> UcxFabric::CreateWorker() {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;  // one thread per worker; Signal is safe from any thread
  ucp_worker_h worker;
  if (ucs_status_t s = ucp_worker_create(context_, &params, &worker); s != UCS_OK) {
    return FromUcs(s, "ucp_worker_create");
  }
  int event_fd = -1;
  if (ucs_status_t s = ucp_worker_get_efd(worker, &event_fd); s != UCS_OK) {
    ucp_worker_destroy(worker);
    return FromUcs(s, "ucp_worker_get_efd");
  }
  auto result = std::make_unique<UcxWorker>(context_, worker, event_fd, options_, self_, shared_memory_only_,
                                            messages_, regions_);
  if (absl::Status s = result->Init(); !s.ok()) return s;
  return result;
}

}  // namespace ucx_internal

absl::StatusOr<UcxOptions::RemoteAccess> ParseRemoteAccess(std::string_view name) {
  if (name == "auto") return UcxOptions::RemoteAccess::kAuto;
  if (name == "messages") return UcxOptions::RemoteAccess::kMessages;
  if (name == "one_sided") return UcxOptions::RemoteAccess::kOneSided;
  return absl::InvalidArgumentError(
      absl::StrCat("remote access '", std::string(name), "': expected auto, messages or one_sided"));
}

absl::StatusOr<std::unique_ptr<Fabric>> CreateUcxFabric(const UcxOptions& options) {
  using ucx_internal::FromUcs;
  if (options.clock == nullptr) return absl::InvalidArgumentError("UcxOptions.clock is null");
  ucp_config_t* config;
  if (ucs_status_t s = ucp_config_read(nullptr, nullptr, &config); s != UCS_OK) {
    return FromUcs(s, "ucp_config_read");
  }
  auto modify = [&](const char* name, const std::string& value) -> absl::Status {
    return FromUcs(ucp_config_modify(config, name, value.c_str()),
                   absl::StrCat("UCX setting ", name, "=", value).c_str());
  };
  absl::Status setup = absl::OkStatus();
  if (!options.transports.empty()) setup.Update(modify("TLS", options.transports));
  setup.Update(modify("KEEPALIVE_INTERVAL", ucx_internal::DurationForUcx(options.fabric.keepalive_interval)));
  // AllocateRegion's memory: shared memory (same-host peers map it), else anonymous mappings; never the
  // heap or another memory domain's allocator, whose memory may not be zero. Not "thp" either: UCX takes
  // that from the heap (posix_memalign, then madvise), reused memory under ASan (tcp-only regions there read
  // ASan's fill bytes) and under any allocator that keeps large blocks.
  setup.Update(modify("ALLOC_PRIO", "md:sysv,md:posix,huge,mmap"));
  if (!setup.ok()) {
    ucp_config_release(config);
    return setup;
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP | UCP_FEATURE_AM;  // AM: doorbells
  params.mt_workers_shared = 1;  // workers are created and used from different threads
  ucp_context_h context;
  ucs_status_t s = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (s != UCS_OK) {
    return FromUcs(s, absl::StrCat("ucp_init (transports '", options.transports, "')").c_str());
  }
  auto self = ucx_internal::ProcessIdentity::Self();
  if (!self.ok()) {
    ucp_cleanup(context);
    return self.status();
  }
  return std::unique_ptr<Fabric>(new ucx_internal::UcxFabric(
      context, options, std::move(*self), ucx_internal::SharedMemoryOnly(options.transports)));
}

}  // namespace fathom::fabric
