// Shipping a node's SSD log to its peers at a whole-cluster restart (docs/formats/ssd-log.md, "Restart
// exchange"). fathomd processes do not see each other's data directories, yet a region's newest state
// may be on disk only at one of its replicas (its backup persisted a state its primary had not). So each
// restarting node reads its own log, serves it to peers as one byte stream (a snapshot), fetches every
// other member's, and merges them all (restore.h MergeLogs): every node computes the same image, and a
// region's primary and backups come back identical.
//
//   auto own = logging::ReadLog(dir, id);                         // before Node::Start
//   auto snapshot = std::make_shared<const std::string>(logging::EncodeLogSnapshot(*own));
//   options.register_handlers = [snapshot](msg::Messenger& m, int) { logging::ServeLogSnapshot(m, snapshot); };
//   ... Node::Start, JoinPeers ...
//   ASSIGN_OR_RETURN(logging::PeerLog peer, logging::FetchLogSnapshot(*node, 2, absl::Seconds(10)));
//
// The stream and its chunk messages are validated like every wire format: a flipped byte, a cut or a
// length that lies gives DataLoss or InvalidArgument naming the peer and the offset.
#ifndef FATHOM_LOGGING_LOG_EXCHANGE_H_
#define FATHOM_LOGGING_LOG_EXCHANGE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "logging/log_reader.h"
#include "platform/msg/messenger.h"
#include "platform/node/node.h"

namespace fathom::logging {

// The logging layer's message type (the runtime has 1..99, txn 100..199).
inline constexpr msg::MessageType kLogSnapshotMessage = 200;
inline constexpr uint8_t kSnapshotFormat = 2;  // 2: the closed log epoch
inline constexpr size_t kSnapshotHeaderBytes = 32;
// Bytes of the stream per reply at most; less when the ring back to the asker takes less.
inline constexpr size_t kSnapshotChunkBytes = 16 << 10;
// A chunk request is 9 bytes; a reply is 9 bytes of header and the chunk.
inline constexpr size_t kChunkRequestBytes = 9;
inline constexpr size_t kChunkReplyHeaderBytes = 9;

// What a peer answered: its log, or that it has none (it starts without a data directory or with an
// empty one).
struct PeerLog {
  bool has_log = false;
  LogContents contents;  // node_id is the peer's even without a log
};

// The stream: header, every state (key and value exactly as stored, each value checksummed), and an
// XXH3-64 of everything before it.
std::string EncodeLogSnapshot(const PeerLog& log);
// Validates every byte; `from` names the sender in errors and must match the header's node id.
absl::StatusOr<PeerLog> DecodeLogSnapshot(std::string_view bytes, uint32_t from);

// Chunk messages: a request asks for the stream from `offset`; a reply carries the stream's total length
// and the bytes from there (at most kSnapshotChunkBytes).
std::string EncodeChunkRequest(uint64_t offset);
absl::StatusOr<uint64_t> DecodeChunkRequest(std::string_view bytes);
std::string EncodeChunkReply(uint64_t total, std::string_view chunk);
struct ChunkReply {
  uint64_t total = 0;
  std::string_view chunk;  // into the decoded bytes
};
// `offset` is what was asked for: the chunk must start there and stay inside `total`.
absl::StatusOr<ChunkReply> DecodeChunkReply(std::string_view bytes, uint64_t offset);

// Registers the handler answering chunk requests from `snapshot` (which it keeps alive).
void ServeLogSnapshot(msg::Messenger& messenger, std::shared_ptr<const std::string> snapshot);

// Fetches `peer`'s snapshot chunk by chunk over node thread 0 and decodes it. Errors name the peer;
// Unavailable when the call did not get an answer (no connection, a failed one, a timeout): ask again.
absl::StatusOr<PeerLog> FetchLogSnapshot(node::Node& node, uint32_t peer, absl::Duration call_timeout);

}  // namespace fathom::logging

#endif  // FATHOM_LOGGING_LOG_EXCHANGE_H_
