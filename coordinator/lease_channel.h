// LeaseChannel: leases on a path of their own, as FaRM's lease manager has (a UD queue and a thread of
// its own): one UDP socket per node and one thread that answers requests on it, so a renewal never waits
// behind transactions on the node threads and their rings (with 200 ms leases on 2 shared cores it did,
// and members lost their leases under their own load). The wire format is in docs/formats/lease.md
// ("Lease channel").
//
//   auto channel = LeaseChannel::Open("127.0.0.1", my_node_id, [](const LeaseChannel::Inbound& in) {
//     return std::optional<std::string>(Answer(in.sender, in.source, in.payload));  // nullopt: no reply
//   });
//   (*channel)->address();                                       // "127.0.0.1:40123", published to members
//   auto reply = (*channel)->Call("127.0.0.1:40777", 3, request, absl::Milliseconds(50));
//
// Datagrams that do not parse are dropped and counted (a UDP port is open to anyone who can reach it);
// a reply is taken only from the address called and the node expected, and only for a call still waiting.
#ifndef FATHOM_COORDINATOR_LEASE_CHANNEL_H_
#define FATHOM_COORDINATOR_LEASE_CHANNEL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace fathom::coordinator {

// Datagram header: u8 format (1), u8 kind (1 request, 2 reply), u16 reserved (0), u32 sender node id
// (1..65535), u64 call id; then the payload (a lease request or grant, lease.h). Little-endian.
inline constexpr size_t kLeaseDatagramHeaderBytes = 16;
inline constexpr size_t kLeaseDatagramMaxPayload = 256;
enum class LeaseDatagramKind : uint8_t { kRequest = 1, kReply = 2 };
struct LeaseDatagram {
  LeaseDatagramKind kind = LeaseDatagramKind::kRequest;
  uint32_t sender = 0;
  uint64_t call_id = 0;
  std::string payload;
};
std::string EncodeLeaseDatagram(const LeaseDatagram& datagram);
// InvalidArgument naming what is wrong: too short or long, format, kind, reserved bits, sender.
absl::StatusOr<LeaseDatagram> DecodeLeaseDatagram(std::string_view bytes);

class LeaseChannel {
 public:
  struct Inbound {
    uint32_t sender = 0;  // the node id the datagram claims
    std::string source;   // where it came from, "ip:port" (as address() prints one)
    std::string_view payload;
  };
  // Answers a request (on the channel's thread); nullopt sends nothing.
  using Handler = std::function<std::optional<std::string>(const Inbound&)>;

  struct Counters {
    uint64_t requests_answered = 0;
    uint64_t dropped = 0;        // malformed, or a reply nobody waits for (late, or not from the callee)
    uint64_t calls = 0;
    uint64_t calls_timed_out = 0;
  };

  // Binds a UDP socket to `host` (an IP address; port chosen by the kernel) and starts the thread.
  static absl::StatusOr<std::unique_ptr<LeaseChannel>> Open(const std::string& host, uint32_t node_id,
                                                            Handler handler);
  ~LeaseChannel();  // stops the thread (a call still waiting fails) and closes the socket
  LeaseChannel(const LeaseChannel&) = delete;
  LeaseChannel& operator=(const LeaseChannel&) = delete;

  const std::string& address() const { return address_; }
  // Sends `payload` as a request to `address` ("ip:port") and waits for node `callee`'s reply.
  // DeadlineExceeded after `timeout`; InvalidArgument for an address that does not parse; Unavailable
  // if the send fails or the channel is closing. Thread-safe; calls may overlap.
  absl::StatusOr<std::string> Call(const std::string& address, uint32_t callee, std::string_view payload,
                                   absl::Duration timeout);
  Counters counters() const;

 private:
  LeaseChannel(int fd, int wake_fd, uint32_t node_id, std::string address, Handler handler);
  void Run();
  void OnDatagram(std::string_view bytes, const std::string& source);

  const int fd_;
  const int wake_fd_;  // an eventfd that ends Run's poll at shutdown
  const uint32_t node_id_;
  const std::string address_;
  const Handler handler_;
  std::thread thread_;

  struct Pending {
    std::string address;
    uint32_t callee = 0;
    bool done = false;
    std::string reply;
  };
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_call_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  Counters counters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_LEASE_CHANNEL_H_
