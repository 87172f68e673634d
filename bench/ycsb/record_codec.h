// The byte encoding of a Record stored as one memcached value (memcached has no hashes).
//
//   value  := field_count:u32  field*            (field_count fields, then nothing else)
//   field  := name_length:u32 name value_length:u32 value
//
// Integers are little-endian; names and values are raw bytes; fields are in name order (Record is a
// std::map) and names are unique. Decoding checks every length against the bytes left and rejects
// trailing bytes, duplicate names and a field count the bytes cannot hold, with DataLoss — a corrupt or
// foreign value is an error, never a crash or a silently short record.
//
//   std::string bytes = EncodeRecord(record);
//   ASSIGN_OR_RETURN(Record back, DecodeRecord(bytes));
#ifndef FATHOM_BENCH_YCSB_RECORD_CODEC_H_
#define FATHOM_BENCH_YCSB_RECORD_CODEC_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "bench/ycsb/backend.h"

namespace fathom::ycsb {

std::string EncodeRecord(const Record& record);
absl::StatusOr<Record> DecodeRecord(std::string_view bytes);

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_RECORD_CODEC_H_
