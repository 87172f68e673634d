#include "logging/log_exchange.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "logging/record_format.h"
#include "platform/base/byte_order.h"

namespace fathom::logging {
namespace {

constexpr size_t kKeyBytes = 9;  // 'o' and the address (record_format.h)
constexpr size_t kMaxValueBytes = kRecordHeaderBytes + kMaxPayloadBytes + kChecksumBytes;
constexpr size_t kTrailerBytes = 8;
// No log is this large; a reply claiming more is lying.
constexpr uint64_t kMaxSnapshotBytes = uint64_t{1} << 40;

absl::Status Bad(uint32_t from, size_t at, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("log snapshot from node ", from, " at byte ", at, ": ", what));
}

}  // namespace

std::string EncodeLogSnapshot(const PeerLog& log) {
  std::string out;
  out.push_back(static_cast<char>(kSnapshotFormat));
  out.push_back(log.has_log ? 1 : 0);
  out.append(2, '\0');
  AppendU32(out, log.contents.node_id);
  AppendU64(out, log.contents.position);
  AppendU32(out, static_cast<uint32_t>(log.has_log ? log.contents.states.size() : 0));
  AppendU32(out, 0);
  AppendU64(out, log.contents.closed_epoch);
  if (log.has_log) {
    for (const ObjectState& state : log.contents.states) {
      const std::string key = ObjectKey(state.address);
      const std::string value = EncodeState(state);
      out.push_back(static_cast<char>(key.size()));
      out += key;
      AppendU32(out, static_cast<uint32_t>(value.size()));
      out += value;
    }
  }
  AppendU64(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

absl::StatusOr<PeerLog> DecodeLogSnapshot(std::string_view bytes, uint32_t from) {
  if (bytes.size() < kSnapshotHeaderBytes + kTrailerBytes) {
    return Bad(from, bytes.size(), absl::StrCat("cut short: ", bytes.size(), " bytes"));
  }
  const size_t body = bytes.size() - kTrailerBytes;
  if (XXH3_64bits(bytes.data(), body) != LoadU64(bytes.data() + body)) return Bad(from, body, "checksum mismatch");
  const char* p = bytes.data();
  if (static_cast<uint8_t>(p[0]) != kSnapshotFormat) {
    return absl::FailedPreconditionError(absl::StrCat("log snapshot from node ", from, ": format version ",
                                                      static_cast<int>(static_cast<uint8_t>(p[0])),
                                                      " (this build reads ", kSnapshotFormat, ")"));
  }
  const uint8_t has_log = static_cast<uint8_t>(p[1]);
  if (has_log > 1 || p[2] != 0 || p[3] != 0 || LoadU32(p + 20) != 0) return Bad(from, 1, "bad flags or reserved bytes");
  PeerLog log;
  log.has_log = has_log == 1;
  log.contents.node_id = LoadU32(p + 4);
  if (log.contents.node_id != from) {
    return Bad(from, 4, absl::StrCat("it says it is node ", log.contents.node_id));
  }
  log.contents.position = LoadU64(p + 8);
  log.contents.closed_epoch = LoadU64(p + 24);
  const uint32_t count = LoadU32(p + 16);
  if (!log.has_log && count != 0) return Bad(from, 16, "states without a log");
  // Each state takes at least its key, two lengths and a value header: a count that cannot fit is a lie.
  if (count > (body - kSnapshotHeaderBytes) / (1 + kKeyBytes + 4 + kRecordHeaderBytes)) {
    return Bad(from, 16, absl::StrCat(count, " states do not fit in ", body, " bytes"));
  }
  size_t at = kSnapshotHeaderBytes;
  log.contents.states.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (body - at < 1 + kKeyBytes + 4) return Bad(from, at, absl::StrCat("cut short in state ", i));
    const size_t key_len = static_cast<uint8_t>(p[at]);
    if (key_len != kKeyBytes) return Bad(from, at, absl::StrCat("key of ", key_len, " bytes"));
    const std::string_view key(p + at + 1, kKeyBytes);
    const uint32_t value_len = LoadU32(p + at + 1 + kKeyBytes);
    at += 1 + kKeyBytes + 4;
    if (value_len > kMaxValueBytes || value_len > body - at) {
      return Bad(from, at - 4, absl::StrCat("a value of ", value_len, " bytes with ", body - at, " left"));
    }
    auto state = DecodeState(key, std::string_view(p + at, value_len));
    if (!state.ok()) {
      return absl::Status(state.status().code(), absl::StrCat("log snapshot from node ", from, " at byte ", at, ": ",
                                                              state.status().message()));
    }
    if (state->position > log.contents.position) {
      return Bad(from, at, absl::StrCat("a state at position ", state->position, " past the persisted ",
                                        log.contents.position));
    }
    at += value_len;
    log.contents.states.push_back(std::move(*state));
  }
  if (at != body) return Bad(from, at, absl::StrCat(body - at, " bytes after the last state"));
  return log;
}

std::string EncodeChunkRequest(uint64_t offset) {
  std::string out;
  out.push_back(static_cast<char>(kSnapshotFormat));
  AppendU64(out, offset);
  return out;
}

absl::StatusOr<uint64_t> DecodeChunkRequest(std::string_view bytes) {
  if (bytes.size() != kChunkRequestBytes) {
    return absl::InvalidArgumentError(absl::StrCat("log snapshot request of ", bytes.size(), " bytes"));
  }
  if (static_cast<uint8_t>(bytes[0]) != kSnapshotFormat) {
    return absl::InvalidArgumentError(
        absl::StrCat("log snapshot request of format ", static_cast<int>(static_cast<uint8_t>(bytes[0]))));
  }
  return LoadU64(bytes.data() + 1);
}

std::string EncodeChunkReply(uint64_t total, std::string_view chunk) {
  std::string out;
  out.push_back(static_cast<char>(kSnapshotFormat));
  AppendU64(out, total);
  out.append(chunk);
  return out;
}

absl::StatusOr<ChunkReply> DecodeChunkReply(std::string_view bytes, uint64_t offset) {
  if (bytes.size() < kChunkReplyHeaderBytes) {
    return absl::DataLossError(absl::StrCat("log snapshot reply of ", bytes.size(), " bytes"));
  }
  if (static_cast<uint8_t>(bytes[0]) != kSnapshotFormat) {
    return absl::DataLossError(
        absl::StrCat("log snapshot reply of format ", static_cast<int>(static_cast<uint8_t>(bytes[0]))));
  }
  ChunkReply reply;
  reply.total = LoadU64(bytes.data() + 1);
  reply.chunk = bytes.substr(kChunkReplyHeaderBytes);
  if (reply.total > kMaxSnapshotBytes || offset > reply.total || reply.chunk.size() > kSnapshotChunkBytes ||
      reply.chunk.size() > reply.total - offset || (reply.chunk.empty() && offset < reply.total)) {
    return absl::DataLossError(absl::StrCat("log snapshot reply: ", reply.chunk.size(), " bytes at ", offset,
                                            " of a stream of ", reply.total));
  }
  return reply;
}

void ServeLogSnapshot(msg::Messenger& messenger, std::shared_ptr<const std::string> snapshot) {
  // The messenger owns the handler, so the pointer stays valid as long as the handler can run.
  msg::Messenger* ring = &messenger;
  messenger
      .Register(kLogSnapshotMessage,
                [snapshot, ring](const msg::Message& message, std::string* reply) -> absl::Status {
                  if (reply == nullptr) return absl::InvalidArgumentError("a log snapshot request must be a call");
                  auto offset = DecodeChunkRequest(message.payload);
                  if (!offset.ok()) return offset.status();
                  if (*offset > snapshot->size()) {
                    return absl::OutOfRangeError(absl::StrCat("log snapshot offset ", *offset, " past its ",
                                                              snapshot->size(), " bytes"));
                  }
                  // A reply must fit the ring back to the asker (small rings in tests, 64 KiB in fathomd).
                  auto room = ring->max_payload(message.peer);
                  if (!room.ok()) return room.status();
                  if (*room <= kChunkReplyHeaderBytes) {
                    return absl::FailedPreconditionError(absl::StrCat("a ring of ", *room, " bytes to node ",
                                                                      message.peer, " cannot carry a log chunk"));
                  }
                  const size_t n = std::min({kSnapshotChunkBytes, *room - kChunkReplyHeaderBytes,
                                             snapshot->size() - *offset});
                  *reply = EncodeChunkReply(snapshot->size(), std::string_view(*snapshot).substr(*offset, n));
                  return absl::OkStatus();
                })
      .IgnoreError();
}

absl::StatusOr<PeerLog> FetchLogSnapshot(node::Node& node, uint32_t peer, absl::Duration call_timeout) {
  std::string stream;
  uint64_t total = 0;
  do {
    auto bytes = node.Call(peer, kLogSnapshotMessage, EncodeChunkRequest(stream.size()), 0, call_timeout);
    if (!bytes.ok()) {
      // No connection (it flapped and is being made again), a connection that failed, a reply that did not
      // come: the caller may ask again; only the peer's own answer is final.
      const absl::StatusCode code = bytes.status().code();
      const bool transient = code == absl::StatusCode::kNotFound || code == absl::StatusCode::kDeadlineExceeded ||
                             code == absl::StatusCode::kCancelled || code == absl::StatusCode::kUnavailable;
      return absl::Status(transient ? absl::StatusCode::kUnavailable : code,
                          absl::StrCat("fetching node ", peer, "'s log at byte ", stream.size(), ": ",
                                       bytes.status().message()));
    }
    auto reply = DecodeChunkReply(*bytes, stream.size());
    if (!reply.ok()) {
      return absl::Status(reply.status().code(), absl::StrCat("node ", peer, ": ", reply.status().message()));
    }
    if (!stream.empty() && reply->total != total) {
      return absl::DataLossError(absl::StrCat("node ", peer, "'s log snapshot changed length from ", total, " to ",
                                              reply->total));
    }
    total = reply->total;
    stream.append(reply->chunk);
  } while (stream.size() < total);
  return DecodeLogSnapshot(stream, peer);
}

}  // namespace fathom::logging
