#include "coordinator/lease_channel.h"

#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/base/internal/endian.h"
#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/node/control/host_port.h"

namespace fathom::coordinator {
namespace {

constexpr uint8_t kFormat = 1;

absl::Status Errno(const std::string& what) { return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno))); }

// "ip:port" or "[ip6]:port" into a socket address, without name lookups (never blocks).
absl::StatusOr<std::pair<sockaddr_storage, socklen_t>> Resolve(const std::string& address) {
  absl::StatusOr<control::HostPort> parsed = control::ParseHostPort(address, control::PortZero::kAllowed);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease channel address '", address, "' is not ip:port: ", parsed.status().message()));
  }
  const std::string& host = parsed->host;
  const std::string port = absl::StrCat(parsed->port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0 || found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease channel address '", address, "' is not ip:port: ", gai_strerror(rc)));
  }
  std::pair<sockaddr_storage, socklen_t> out{};
  std::memcpy(&out.first, found->ai_addr, found->ai_addrlen);
  out.second = found->ai_addrlen;
  freeaddrinfo(found);
  return out;
}

std::string Format(const sockaddr* addr, socklen_t length) {
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (getnameinfo(addr, length, host, sizeof(host), port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  return addr->sa_family == AF_INET6 ? absl::StrCat("[", host, "]:", port) : absl::StrCat(host, ":", port);
}

}  // namespace

std::string EncodeLeaseDatagram(const LeaseDatagram& d) {
  std::string out(kLeaseDatagramHeaderBytes, '\0');
  out[0] = static_cast<char>(kFormat);
  out[1] = static_cast<char>(d.kind);
  absl::little_endian::Store32(out.data() + 4, d.sender);
  absl::little_endian::Store64(out.data() + 8, d.call_id);
  out += d.payload;
  return out;
}

absl::StatusOr<LeaseDatagram> DecodeLeaseDatagram(std::string_view bytes) {
  if (bytes.size() < kLeaseDatagramHeaderBytes || bytes.size() > kLeaseDatagramHeaderBytes + kLeaseDatagramMaxPayload) {
    return absl::InvalidArgumentError(absl::StrCat("lease datagram of ", bytes.size(), " bytes (", kLeaseDatagramHeaderBytes,
                                                   " to ", kLeaseDatagramHeaderBytes + kLeaseDatagramMaxPayload, ")"));
  }
  if (static_cast<uint8_t>(bytes[0]) != kFormat) {
    return absl::InvalidArgumentError(absl::StrCat("lease datagram format ", static_cast<uint8_t>(bytes[0])));
  }
  LeaseDatagram d;
  const uint8_t kind = static_cast<uint8_t>(bytes[1]);
  if (kind != 1 && kind != 2) return absl::InvalidArgumentError(absl::StrCat("lease datagram kind ", kind));
  d.kind = static_cast<LeaseDatagramKind>(kind);
  if (bytes[2] != 0 || bytes[3] != 0) return absl::InvalidArgumentError("lease datagram reserved bits set");
  d.sender = absl::little_endian::Load32(bytes.data() + 4);
  if (d.sender == 0 || d.sender > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("lease datagram from node ", d.sender));
  }
  d.call_id = absl::little_endian::Load64(bytes.data() + 8);
  d.payload = std::string(bytes.substr(kLeaseDatagramHeaderBytes));
  return d;
}

absl::StatusOr<std::unique_ptr<LeaseChannel>> LeaseChannel::Open(const std::string& host, uint32_t node_id,
                                                                 Handler handler) {
  auto bind_to = Resolve(control::JoinHostPort(host, 0));
  if (!bind_to.ok()) return bind_to.status();
  const int fd = socket(bind_to->first.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("lease channel socket");
  if (bind(fd, reinterpret_cast<const sockaddr*>(&bind_to->first), bind_to->second) != 0) {
    absl::Status s = Errno(absl::StrCat("lease channel bind to ", host));
    close(fd);
    return s;
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    absl::Status s = Errno("lease channel eventfd");
    close(fd);
    return s;
  }
  std::unique_ptr<LeaseChannel> channel(new LeaseChannel(
      fd, wake, node_id, Format(reinterpret_cast<const sockaddr*>(&bound), length), std::move(handler)));
  channel->thread_ = std::thread([c = channel.get()] { c->Run(); });
  return channel;
}

LeaseChannel::LeaseChannel(int fd, int wake_fd, uint32_t node_id, std::string address, Handler handler)
    : fd_(fd), wake_fd_(wake_fd), node_id_(node_id), address_(std::move(address)), handler_(std::move(handler)) {
  // Call ids start at a value a restarted process will not repeat soon, so a reply to its predecessor's
  // call is not taken for one of its own.
  next_call_ = (uint64_t{node_id} << 48) ^ static_cast<uint64_t>(absl::ToUnixNanos(absl::Now()));
}

LeaseChannel::~LeaseChannel() {
  {
    MutexLock lock(&mu_);
    closing_ = true;
    cv_.SignalAll();
  }
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  {
    // Calls still waiting see closing_ and leave before the members they use go.
    MutexLock lock(&mu_);
    while (!pending_.empty()) WaitWithDeadline(&cv_, &mu_, absl::InfiniteFuture());
  }
  close(fd_);
  close(wake_fd_);
}

void LeaseChannel::Run() {
  char buffer[kLeaseDatagramHeaderBytes + kLeaseDatagramMaxPayload + 1];
  while (true) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    sockaddr_storage from{};
    socklen_t length = sizeof(from);
    const ssize_t n = recvfrom(fd_, buffer, sizeof(buffer), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &length);
    if (n < 0) continue;
    OnDatagram(std::string_view(buffer, static_cast<size_t>(n)), Format(reinterpret_cast<const sockaddr*>(&from), length));
  }
}

void LeaseChannel::OnDatagram(std::string_view bytes, const std::string& source) {
  absl::StatusOr<LeaseDatagram> d = DecodeLeaseDatagram(bytes);
  if (!d.ok()) {
    MutexLock lock(&mu_);
    ++counters_.dropped;
    return;
  }
  if (d->kind == LeaseDatagramKind::kReply) {
    MutexLock lock(&mu_);
    auto it = pending_.find(d->call_id);
    if (it == pending_.end() || it->second.done || it->second.address != source || it->second.callee != d->sender) {
      ++counters_.dropped;
      return;
    }
    it->second.done = true;
    it->second.reply = std::move(d->payload);
    cv_.SignalAll();
    return;
  }
  std::optional<std::string> answer = handler_(Inbound{d->sender, source, d->payload});
  if (!answer.has_value()) {
    MutexLock lock(&mu_);
    ++counters_.dropped;
    return;
  }
  auto to = Resolve(source);
  if (!to.ok()) return;
  const std::string reply =
      EncodeLeaseDatagram({LeaseDatagramKind::kReply, node_id_, d->call_id, std::move(*answer)});
  {
    MutexLock lock(&mu_);
    ++counters_.requests_answered;  // before the reply leaves: a caller that has it sees the count
  }
  sendto(fd_, reply.data(), reply.size(), MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&to->first), to->second);
}

absl::StatusOr<std::string> LeaseChannel::Call(const std::string& address, uint32_t callee, std::string_view payload,
                                               absl::Duration timeout) {
  auto to = Resolve(address);
  if (!to.ok()) return to.status();
  uint64_t id;
  {
    MutexLock lock(&mu_);
    if (closing_) return absl::UnavailableError("lease channel closing");
    id = next_call_++;
    pending_[id] = Pending{address, callee, false, {}};
    ++counters_.calls;
  }
  const std::string request = EncodeLeaseDatagram({LeaseDatagramKind::kRequest, node_id_, id, std::string(payload)});
  const bool sent = sendto(fd_, request.data(), request.size(), MSG_DONTWAIT,
                           reinterpret_cast<const sockaddr*>(&to->first), to->second) == static_cast<ssize_t>(request.size());
  absl::Status failed = sent ? absl::OkStatus() : Errno(absl::StrCat("lease request to ", address));
  const absl::Time deadline = absl::Now() + timeout;
  MutexLock lock(&mu_);
  Pending& call = pending_[id];
  while (failed.ok() && !call.done && !closing_) {
    if (WaitWithDeadline(&cv_, &mu_, deadline)) break;
  }
  absl::StatusOr<std::string> result = std::move(call.reply);
  if (!failed.ok()) {
    result = failed;
  } else if (!call.done) {
    ++counters_.calls_timed_out;
    result = closing_ ? absl::UnavailableError("lease channel closing")
                      : absl::DeadlineExceededError(absl::StrCat("no lease reply from node ", callee, " at ", address,
                                                                 " within ", absl::FormatDuration(timeout)));
  }
  pending_.erase(id);
  cv_.SignalAll();
  return result;
}

LeaseChannel::Counters LeaseChannel::counters() const {
  MutexLock lock(&mu_);
  return counters_;
}

}  // namespace fathom::coordinator
