#include "kv/get_at_owner.h"

#include <algorithm>
#include <optional>
#include <span>

#include "absl/strings/str_cat.h"
#include "kv/format.h"
#include "platform/base/byte_order.h"
#include "platform/base/log.h"
#include "platform/base/status_macros.h"
#include "platform/memory/size_classes.h"
#include "platform/object/object_codec.h"

namespace fathom::kv {

std::optional<node::NodeThread::Route> RouteToServingOwner(node::NodeThread& thread, uint32_t self,
                                                           const object::ObjectRef& bucket) {
  if (!thread.worker().ReadsMayBeServedByPeers()) return std::nullopt;  // shared memory: every GET comes here
  absl::StatusOr<node::NodeThread::Route> route = thread.RouteTo(bucket.address.region);
  if (!route.ok() || route->owner == self || !route->endpoint->ReadsServedByPeer(*route->region)) {
    return std::nullopt;
  }
  return *route;
}

namespace {

constexpr uint8_t kFormat = 1;
// format u8, reserved u8, key length u16, epoch word u32, bucket reference (address u64, incarnation u32,
// capacity u32), then the key.
constexpr size_t kRequestHeaderBytes = 24;

absl::Status MalformedRequest(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed GET-at-owner request: ", what));
}

bool IsSlot(const object::ObjectRef& ref) {
  return ref.capacity >= memory::kMinSlotBytes && ref.capacity <= memory::kMaxSlotBytes &&
         ref.capacity % memory::kMinSlotBytes == 0 && ref.address.offset % memory::kMinSlotBytes == 0;
}

absl::Status MalformedAnswer(const std::string& what) {
  return absl::DataLossError(absl::StrCat("malformed GET-at-owner answer: ", what));
}

// A copy of an object this node is the primary of, checked whole, and its version; nullopt when this node
// cannot vouch for one now (another node's, not served here yet, locked, torn, freed or reused).
struct ServedCopy {
  std::string bytes;  // header and payload
  size_t payload_bytes = 0;
  uint64_t version = 0;

  std::string_view payload() const { return std::string_view(bytes).substr(object::kHeaderBytes, payload_bytes); }
};

std::optional<ServedCopy> CopyServed(txn::TxnThread& thread, const object::ObjectRef& ref) {
  node::NodeThread& node_thread = thread.thread();
  absl::StatusOr<uint32_t> primary = node_thread.region_map().PrimaryOf(ref.address.region);
  if (!primary.ok() || *primary != thread.node_id()) return std::nullopt;
  absl::StatusOr<object::LocalObject> object = node_thread.store().Resolve(ref);
  if (!object.ok()) return std::nullopt;
  ServedCopy copy;
  copy.bytes.resize(ref.capacity);
  std::span<std::byte> span(reinterpret_cast<std::byte*>(copy.bytes.data()), copy.bytes.size());
  object->CopyTo(span);
  const object::ObjectCheck check = object::CheckObjectCopy(span, ref);
  if (check.verdict != object::Verdict::kValid) return std::nullopt;
  copy.payload_bytes = check.payload.size();
  copy.version = check.header.version();
  return copy;
}

void Answer(OwnerAnswerKind kind, uint64_t version, std::string_view bytes, size_t reply_limit, std::string& out) {
  if (kOwnerAnswerHeaderBytes + bytes.size() > reply_limit) return EncodeOwnerAnswer({}, out);
  EncodeOwnerAnswer(OwnerAnswer{kind, version, bytes}, out);
}

// The key in the owner's checked copy of its home bucket (of the request's generation): its value, inline
// in the bucket or from the owner's checked copy of its value object, left in `object` (a value object
// never changes in place, so that copy is the value of the bucket's snapshot). nullopt: absent, another
// generation, or a value object this node cannot vouch for; the requester finds the same in the bucket.
struct KeyFound {
  std::string_view value;  // into `bucket` or `object`
  object::ObjectRef ref;   // out of line: the value object (`object` holds its copy)
};
std::optional<KeyFound> FindServedKey(txn::TxnThread& thread, const GetAtOwnerRequest& request,
                                      std::string_view bucket, std::optional<ServedCopy>& object) {
  object.reset();
  absl::StatusOr<uint32_t> epoch = BucketEpoch(bucket);
  if (!epoch.ok() || *epoch != request.epoch_word) return std::nullopt;
  const uint64_t hash = KeyHash(request.key);
  for (size_t from = 0;;) {
    absl::StatusOr<RawMatch> m = FindInBucket(bucket, hash, from);
    if (!m.ok() || m->offset == std::string_view::npos) return std::nullopt;
    from = m->next;
    if (m->key_bytes != request.key.size()) continue;
    if (m->is_inline) {
      if (m->key != request.key) continue;
      object.reset();  // a copy left by another key with this hash
      return KeyFound{m->value, {}};
    }
    object = CopyServed(thread, m->ref);
    if (!object.has_value()) return std::nullopt;
    absl::StatusOr<std::string_view> value =
        CheckValueObject(object->payload(), request.key, m->value_bytes, m->checksum);
    if (absl::IsNotFound(value.status())) continue;  // another key with this hash
    if (!value.ok()) break;
    return KeyFound{*value, m->ref};
  }
  object.reset();
  return std::nullopt;
}

// How the owner answers a decoded request of one call (AnswerAtOwner, AnswerObjectsAtOwner).
using Answerer = void (*)(txn::TxnThread&, const GetAtOwnerRequest&, size_t, std::string&);

// A call handler: decodes `argument` and answers on `thread` (the worker's node thread) into `reply`. A
// malformed request is answered not served: the operation behind it reads as it would without asking;
// the peer that sent it is broken (logged, naming `what`).
void ServeCall(const char* what, Answerer answer, txn::TxnThread& thread, absl::Span<const std::byte> argument,
               size_t reply_limit, std::string& reply) {
  absl::StatusOr<GetAtOwnerRequest> request =
      DecodeGetAtOwnerRequest(std::string_view(reinterpret_cast<const char*>(argument.data()), argument.size()));
  if (!request.ok()) {
    LogError("kv", "%s: %s", what, request.status().ToString().c_str());
    EncodeOwnerAnswer({}, reply);
    return;
  }
  answer(thread, *request, reply_limit, reply);
}

}  // namespace

std::string EncodeGetAtOwnerRequest(const object::ObjectRef& bucket, uint32_t epoch_word, std::string_view key) {
  std::string out;
  out.reserve(kRequestHeaderBytes + key.size());
  out.push_back(static_cast<char>(kFormat));
  out.push_back(0);
  AppendU16(out, static_cast<uint16_t>(key.size()));
  AppendU32(out, epoch_word);
  AppendU64(out, bucket.address.raw());
  AppendU32(out, bucket.incarnation);
  AppendU32(out, bucket.capacity);
  out.append(key);
  return out;
}

absl::StatusOr<GetAtOwnerRequest> DecodeGetAtOwnerRequest(std::string_view bytes) {
  if (bytes.size() < kRequestHeaderBytes) {
    return MalformedRequest(absl::StrCat(bytes.size(), " bytes, shorter than its ", kRequestHeaderBytes, "-byte header"));
  }
  const char* p = bytes.data();
  if (static_cast<uint8_t>(p[0]) != kFormat) {
    return MalformedRequest(absl::StrCat("format ", static_cast<int>(static_cast<uint8_t>(p[0])), " is not ", kFormat));
  }
  if (p[1] != 0) return MalformedRequest("reserved byte is not zero");
  const uint16_t key_bytes = LoadU16(p + 2);
  if (key_bytes == 0) return MalformedRequest("empty key");
  if (bytes.size() != kRequestHeaderBytes + key_bytes) {
    return MalformedRequest(absl::StrCat(bytes.size(), " bytes for a key of ", key_bytes, " (want ",
                                         kRequestHeaderBytes + key_bytes, ")"));
  }
  GetAtOwnerRequest request;
  request.epoch_word = LoadU32(p + 4);
  request.bucket.address = memory::GlobalAddress::FromRaw(LoadU64(p + 8));
  request.bucket.incarnation = LoadU32(p + 16);
  request.bucket.capacity = LoadU32(p + 20);
  const object::ObjectRef& ref = request.bucket;
  if (!IsSlot(ref)) {
    return MalformedRequest(absl::StrCat(ref.address.ToString(), " with capacity ", ref.capacity, " is not a slot"));
  }
  request.key = bytes.substr(kRequestHeaderBytes);
  return request;
}

// kind u8, format u8, reserved u16, reserved u32, version u64 (kBucket; else 0), then the bytes.
std::string EncodeOwnerAnswer(const OwnerAnswer& answer) {
  std::string out;
  EncodeOwnerAnswer(answer, out);
  return out;
}

void EncodeOwnerAnswer(const OwnerAnswer& answer, std::string& out) {
  out.clear();
  out.reserve(kOwnerAnswerHeaderBytes + answer.bytes.size());
  out.push_back(static_cast<char>(answer.kind));
  out.push_back(static_cast<char>(kFormat));
  AppendU16(out, 0);
  AppendU32(out, 0);
  AppendU64(out, answer.kind == OwnerAnswerKind::kBucket ? answer.version : 0);
  if (answer.kind != OwnerAnswerKind::kNotServed) out.append(answer.bytes);
}

absl::StatusOr<OwnerAnswer> DecodeOwnerAnswer(std::string_view reply) {
  if (reply.size() < kOwnerAnswerHeaderBytes) {
    return MalformedAnswer(absl::StrCat(reply.size(), " bytes, shorter than its header"));
  }
  const char* p = reply.data();
  const uint8_t kind = static_cast<uint8_t>(p[0]);
  if (kind < static_cast<uint8_t>(OwnerAnswerKind::kValue) || kind > static_cast<uint8_t>(OwnerAnswerKind::kNotServed)) {
    return MalformedAnswer(absl::StrCat("kind ", static_cast<int>(kind), " is no answer to a GET"));
  }
  if (static_cast<uint8_t>(p[1]) != kFormat) {
    return MalformedAnswer(absl::StrCat("format ", static_cast<int>(static_cast<uint8_t>(p[1])), " is not ", kFormat));
  }
  if (LoadU16(p + 2) != 0 || LoadU32(p + 4) != 0) return MalformedAnswer("reserved bytes are not zero");
  OwnerAnswer answer;
  answer.kind = static_cast<OwnerAnswerKind>(kind);
  answer.version = LoadU64(p + 8);
  answer.bytes = reply.substr(kOwnerAnswerHeaderBytes);
  if (answer.kind != OwnerAnswerKind::kBucket && answer.version != 0) {
    return MalformedAnswer("a version in an answer that is no bucket");
  }
  if (answer.kind == OwnerAnswerKind::kNotServed && !answer.bytes.empty()) {
    return MalformedAnswer(absl::StrCat(answer.bytes.size(), " bytes after a not-served answer"));
  }
  return answer;
}

void AnswerAtOwner(txn::TxnThread& thread, const GetAtOwnerRequest& request, size_t reply_limit, std::string& out) {
  // No lease, no service: this node may have been removed and the region moved (as Finish in table_async.cc).
  const auto& lapsed = thread.options().lease_lapsed;
  if (lapsed && lapsed()) return EncodeOwnerAnswer({}, out);
  std::optional<ServedCopy> bucket = CopyServed(thread, request.bucket);
  if (!bucket.has_value()) return EncodeOwnerAnswer({}, out);
  const std::string_view bytes = bucket->payload();
  std::optional<ServedCopy> object;
  if (std::optional<KeyFound> found = FindServedKey(thread, request, bytes, object)) {
    return Answer(OwnerAnswerKind::kValue, 0, found->value, reply_limit, out);
  }
  Answer(OwnerAnswerKind::kBucket, bucket->version, bytes, reply_limit, out);
}

// kObjects: kind u8, format u8, flags u16 (bit 0: a value object follows), bucket payload bytes u32,
// bucket version u64, the bucket's payload; then, with bit 0, the value object's reference (address u64,
// incarnation u32, capacity u32), version u64, payload bytes u32, reserved u32, its payload.
constexpr size_t kServedValueHeaderBytes = 32;

size_t OwnerObjectsBytes(const OwnerObjects& objects) {
  size_t bytes = kOwnerAnswerHeaderBytes + objects.bucket.payload.size();
  if (objects.value.has_value()) bytes += kServedValueHeaderBytes + objects.value->payload.size();
  return bytes;
}

void EncodeOwnerObjects(const OwnerObjects& objects, std::string& out) {
  out.clear();
  out.reserve(OwnerObjectsBytes(objects));
  out.push_back(static_cast<char>(OwnerAnswerKind::kObjects));
  out.push_back(static_cast<char>(kFormat));
  AppendU16(out, objects.value.has_value() ? 1 : 0);
  AppendU32(out, static_cast<uint32_t>(objects.bucket.payload.size()));
  AppendU64(out, objects.bucket.version);
  out.append(objects.bucket.payload);
  if (!objects.value.has_value()) return;
  const ServedObject& value = *objects.value;
  AppendU64(out, value.ref.address.raw());
  AppendU32(out, value.ref.incarnation);
  AppendU32(out, value.ref.capacity);
  AppendU64(out, value.version);
  AppendU32(out, static_cast<uint32_t>(value.payload.size()));
  AppendU32(out, 0);
  out.append(value.payload);
}

absl::StatusOr<std::optional<OwnerObjects>> DecodeOwnerObjects(std::string_view reply, const object::ObjectRef& bucket) {
  if (reply.size() < kOwnerAnswerHeaderBytes) {
    return MalformedAnswer(absl::StrCat(reply.size(), " bytes, shorter than its header"));
  }
  const char* p = reply.data();
  const uint8_t kind = static_cast<uint8_t>(p[0]);
  if (kind == static_cast<uint8_t>(OwnerAnswerKind::kNotServed)) {
    ASSIGN_OR_RETURN(OwnerAnswer not_served, DecodeOwnerAnswer(reply));
    (void)not_served;
    return std::optional<OwnerObjects>();
  }
  if (kind != static_cast<uint8_t>(OwnerAnswerKind::kObjects)) {
    return MalformedAnswer(absl::StrCat("kind ", static_cast<int>(kind), " is no answer to a fetch"));
  }
  if (static_cast<uint8_t>(p[1]) != kFormat) {
    return MalformedAnswer(absl::StrCat("format ", static_cast<int>(static_cast<uint8_t>(p[1])), " is not ", kFormat));
  }
  const uint16_t flags = LoadU16(p + 2);
  if ((flags & ~1u) != 0) return MalformedAnswer(absl::StrCat("unknown flags ", flags));
  const uint32_t bucket_bytes = LoadU32(p + 4);
  std::string_view rest = reply.substr(kOwnerAnswerHeaderBytes);
  if (bucket_bytes > rest.size() || bucket_bytes > bucket.payload_capacity()) {
    return MalformedAnswer(absl::StrCat("a bucket of ", bucket_bytes, " bytes in ", rest.size(), " bytes, for a slot of ",
                                        bucket.capacity));
  }
  OwnerObjects objects;
  objects.bucket = ServedObject{bucket, LoadU64(p + 8), rest.substr(0, bucket_bytes)};
  if (objects.bucket.version > object::kVersionMask) return MalformedAnswer("the bucket's version has the lock bit");
  rest.remove_prefix(bucket_bytes);
  if ((flags & 1u) == 0) {
    if (!rest.empty()) return MalformedAnswer(absl::StrCat(rest.size(), " bytes after the bucket"));
    return std::optional<OwnerObjects>(objects);
  }
  if (rest.size() < kServedValueHeaderBytes) {
    return MalformedAnswer(absl::StrCat(rest.size(), " bytes, shorter than a value object's header"));
  }
  const char* v = rest.data();
  ServedObject value;
  value.ref.address = memory::GlobalAddress::FromRaw(LoadU64(v));
  value.ref.incarnation = LoadU32(v + 8);
  value.ref.capacity = LoadU32(v + 12);
  value.version = LoadU64(v + 16);
  const uint32_t value_bytes = LoadU32(v + 24);
  if (LoadU32(v + 28) != 0) return MalformedAnswer("reserved bytes are not zero");
  if (value.version > object::kVersionMask) return MalformedAnswer("the value object's version has the lock bit");
  if (!IsSlot(value.ref)) {
    return MalformedAnswer(
        absl::StrCat(value.ref.address.ToString(), " with capacity ", value.ref.capacity, " is not a slot"));
  }
  rest.remove_prefix(kServedValueHeaderBytes);
  if (value_bytes != rest.size() || value_bytes > value.ref.payload_capacity()) {
    return MalformedAnswer(absl::StrCat("a value object of ", value_bytes, " bytes in ", rest.size(),
                                        " bytes, for a slot of ", value.ref.capacity));
  }
  value.payload = rest;
  objects.value = value;
  return std::optional<OwnerObjects>(objects);
}

void AnswerObjectsAtOwner(txn::TxnThread& thread, const GetAtOwnerRequest& request, size_t reply_limit,
                          std::string& out) {
  const auto& lapsed = thread.options().lease_lapsed;
  if (lapsed && lapsed()) return EncodeOwnerAnswer({}, out);
  std::optional<ServedCopy> bucket = CopyServed(thread, request.bucket);
  if (!bucket.has_value()) return EncodeOwnerAnswer({}, out);
  OwnerObjects answer{ServedObject{request.bucket, bucket->version, bucket->payload()}, std::nullopt};
  std::optional<ServedCopy> object;
  std::optional<KeyFound> found = FindServedKey(thread, request, bucket->payload(), object);
  if (found.has_value() && object.has_value()) {
    answer.value = ServedObject{found->ref, object->version, object->payload()};
  }
  // The bucket alone if both do not fit; neither if the bucket does not.
  if (OwnerObjectsBytes(answer) > reply_limit) answer.value.reset();
  if (OwnerObjectsBytes(answer) > reply_limit) return EncodeOwnerAnswer({}, out);
  EncodeOwnerObjects(answer, out);
}

size_t OwnerObjectsCapacity(const object::ObjectRef& bucket) {
  constexpr size_t kValueObjectRoom = 4096;
  return kOwnerAnswerHeaderBytes + bucket.capacity + kServedValueHeaderBytes + kValueObjectRoom;
}

size_t OwnerAnswerCapacity(const object::ObjectRef& bucket) {
  constexpr size_t kValueRoom = 4096;
  return kOwnerAnswerHeaderBytes + std::max<size_t>(bucket.capacity, kValueRoom);
}

absl::Status ServeGetsAtOwner(txn::TransactionService& txns) {
  for (int i = 0; i < txns.threads(); ++i) {
    ASSIGN_OR_RETURN(txn::TxnThread * thread, txns.Thread(i));
    RETURN_IF_ERROR(thread->thread().RunAndWait(
        [thread]() -> absl::Status {
          // The handler runs inside this thread's Poll and Wait; the thread keeps the transaction layer
          // alive while it polls (TransactionService::Attach).
          fabric::Worker& worker = thread->thread().worker();
          struct Served {
            uint32_t handler;
            const char* what;
            Answerer answer;
          };
          absl::Status set;
          for (const Served& call : {Served{kGetAtOwnerCall, "GET at the owner", &AnswerAtOwner},
                                     Served{kFetchAtOwnerCall, "fetch at the owner", &AnswerObjectsAtOwner}}) {
            set = worker.SetCallHandler(
                call.handler, [thread, call](absl::Span<const std::byte> argument, size_t reply_limit,
                                             std::string& reply) {
                  ServeCall(call.what, call.answer, *thread, argument, reply_limit, reply);
                });
            if (!set.ok()) break;
          }
          return absl::IsUnimplemented(set) ? absl::OkStatus() : set;
        },
        txns.node().options().call_timeout));
  }
  return absl::OkStatus();
}

}  // namespace fathom::kv
