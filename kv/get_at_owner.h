// GET at the owner. Over a fabric whose one-sided reads are served by the peer's CPU anyway (tcp: each
// read is a request the owner's worker answers, fabric.h ReadsServedByPeer), a GET asks the node serving
// its home bucket to do the lookup there: one round trip, where reading the bucket and then the key's
// out-of-line value object takes two. The request is a fabric call (Endpoint::PostCall): a record in the
// same batch the thread's reads to that peer travel in, answered inside the owner's progress in the same
// batch reply. Over shared memory and RDMA GETs keep their one-sided reads.
//
// The owner answers only from objects it is the primary of, with the checks a lock-free read makes (one
// copy checked whole, the bucket's epoch against the GET's generation, the value object against its
// pointer), so an answer is the snapshot the GET's own reads would have taken:
//   kValue      the key's value
//   kBucket     the home bucket's checked copy, with its version: the GET goes on from it as if it had
//               read it (the key is not there, or its value object is not the owner's to read, or the
//               bucket belongs to another generation)
//   kNotServed  the owner cannot vouch for a copy now (not its primary, locked, torn, its lease lapsed,
//               too large for the reply), or the request was malformed: the GET reads as it would
//               without asking
// Wire format: docs/formats/kv.md, "GET at the owner".
#ifndef FATHOM_KV_GET_AT_OWNER_H_
#define FATHOM_KV_GET_AT_OWNER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "platform/node/node_thread.h"
#include "platform/object/object_layout.h"
#include "txn/txn.h"

namespace fathom::kv {

// The fabric call handler id (Worker::SetCallHandler): GetAtOwnerRequest -> OwnerAnswer.
inline constexpr uint32_t kGetAtOwnerCall = 1;

// The route to the node serving `bucket` when asking it is worth a call (a GET's or a fetch's): another
// node, whose reads the fabric serves with its CPU anyway (tcp). Else nullopt: read for yourself.
std::optional<node::NodeThread::Route> RouteToServingOwner(node::NodeThread& thread, uint32_t self,
                                                           const object::ObjectRef& bucket);

struct GetAtOwnerRequest {
  object::ObjectRef bucket;  // the key's home bucket
  uint32_t epoch_word = 0;   // low 32 bits of the table generation the GET holds
  std::string_view key;      // points into the decoded bytes
};
std::string EncodeGetAtOwnerRequest(const object::ObjectRef& bucket, uint32_t epoch_word, std::string_view key);
// InvalidArgument (a malformed request: answered not served, and logged) for anything
// EncodeGetAtOwnerRequest does not make: a wrong format byte, a length that disagrees with the key length,
// an empty or over-long key, a reference that is no slot.
absl::StatusOr<GetAtOwnerRequest> DecodeGetAtOwnerRequest(std::string_view bytes);

// kObjects: the answer to kFetchAtOwnerCall (below), never to a GET's.
enum class OwnerAnswerKind : uint8_t { kValue = 1, kBucket = 2, kNotServed = 3, kObjects = 4 };
struct OwnerAnswer {
  OwnerAnswerKind kind = OwnerAnswerKind::kNotServed;
  uint64_t version = 0;    // kBucket: the bucket's version
  std::string_view bytes;  // kValue: the value; kBucket: the bucket's payload
};
inline constexpr size_t kOwnerAnswerHeaderBytes = 16;
std::string EncodeOwnerAnswer(const OwnerAnswer& answer);
// The same into `out` (replaced), whose capacity is reused: the worker's reply buffer on the hot path.
void EncodeOwnerAnswer(const OwnerAnswer& answer, std::string& out);
// DataLoss for anything EncodeOwnerAnswer does not make. `bytes` points into `reply`.
absl::StatusOr<OwnerAnswer> DecodeOwnerAnswer(std::string_view reply);

// A transaction's fetch at the owner (fetch_at_owner.h) is a second call with the same request: the owner
// answers with checked copies, each with its version, of the home bucket and, when that bucket (of the
// request's generation) points to the key's value object, of that object too; or not served (an answer of
// kind kNotServed, as above), in the cases above.
inline constexpr uint32_t kFetchAtOwnerCall = 2;
struct ServedObject {
  object::ObjectRef ref;
  uint64_t version = 0;
  std::string_view payload;
};
struct OwnerObjects {
  ServedObject bucket;  // ref: the request's (not on the wire)
  std::optional<ServedObject> value;
};
size_t OwnerObjectsBytes(const OwnerObjects& objects);
void EncodeOwnerObjects(const OwnerObjects& objects, std::string& out);
// nullopt for a not-served answer; DataLoss for anything else EncodeOwnerObjects does not make (a value
// reference that is no slot, a payload longer than its slot holds, lengths that disagree with the bytes,
// a version with the lock bit).
// `bucket` is the request's; payloads point into `reply`.
absl::StatusOr<std::optional<OwnerObjects>> DecodeOwnerObjects(std::string_view reply, const object::ObjectRef& bucket);
void AnswerObjectsAtOwner(txn::TxnThread& thread, const GetAtOwnerRequest& request, size_t reply_limit,
                          std::string& out);
// The reply room a fetch gives the owner for `bucket`: the bucket and a value object of up to 4 KiB.
size_t OwnerObjectsCapacity(const object::ObjectRef& bucket);

// The owner's side, on the node thread the request arrived on: the answer, encoded into `out` (replaced),
// no longer than `reply_limit` bytes (an answer that would be longer is kNotServed).
void AnswerAtOwner(txn::TxnThread& thread, const GetAtOwnerRequest& request, size_t reply_limit, std::string& out);

// The reply room a GET gives the owner for `bucket`: its payload or a value of up to 4 KiB (a larger
// value is answered with the bucket, and read as without asking).
size_t OwnerAnswerCapacity(const object::ObjectRef& bucket);

// Serves kGetAtOwnerCall and kFetchAtOwnerCall on every thread of `txns`'s node (fathomd and embedded
// servers call it once the transaction layer is attached); a fabric that serves no calls is left as it
// is. A GET (or fetch) sent to a node that does not serve it gets Unimplemented and reads as it would
// without asking.
absl::Status ServeGetsAtOwner(txn::TransactionService& txns);

}  // namespace fathom::kv

#endif  // FATHOM_KV_GET_AT_OWNER_H_
