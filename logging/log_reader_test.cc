// Corruption of the SSD log, at both levels: values planted by opening the database directly (flipped
// bytes, truncated values, a wrong format version, stray keys), and RocksDB's own files damaged on disk
// (a truncated or bit-flipped SST, a truncated or scribbled write-ahead log, a broken CURRENT). Every case
// ends in an error naming the directory (and the key, for values) or, for a torn write-ahead log tail
// (what a power cut leaves), in a consistent prefix whose persisted position says what survived; never
// in a crash.
#include "logging/log_reader.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "logging/object_log.h"
#include "platform/base/status_test_macros.h"
#include "rocksdb/db.h"
#include "tests/util/fresh_dir.h"

namespace fathom::logging {
namespace {

namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  return fathom::testing::FreshTestDir("log_reader_test", name);
}

ObjectState State(uint32_t offset, uint64_t version, const std::string& payload) {
  ObjectState s;
  s.address = memory::GlobalAddress{1 << 16, offset};
  s.capacity = 128;
  s.flags = 1;
  s.version = version;
  s.payload = payload;
  return s;
}

// A log of node 1 with `objects` objects, each written twice, one batch per append (sync).
void WriteLog(const std::string& dir, int objects, bool flush_to_sst) {
  {
    auto log = ObjectLog::Open({.dir = dir, .node_id = 1, .sync = true});
    ASSERT_OK(log.status());
    for (uint64_t v = 1; v <= 2; ++v) {
      for (int i = 0; i < objects; ++i) {
        (*log)->Append(State(128 * i, v, "payload-" + std::to_string(i) + "-v" + std::to_string(v)));
        ASSERT_OK((*log)->WaitForPersisted(absl::Seconds(10)));
      }
    }
  }
  if (flush_to_sst) {
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir, &db).ok());
    ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
    ASSERT_TRUE(db->Close().ok());
    delete db;
  }
}

// Opens the database directly and puts `value` under `key` (the test plants damage).
void Plant(const std::string& dir, const std::string& key, const std::string& value) {
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir, &db).ok());
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
  ASSERT_TRUE(db->Close().ok());
  delete db;
}

std::string Stored(const std::string& dir, const std::string& key) {
  rocksdb::DB* db = nullptr;
  EXPECT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), dir, &db).ok());
  std::string value;
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
  delete db;
  return value;
}

std::vector<fs::path> FilesEndingIn(const std::string& dir, const std::string& suffix) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(entry.path());
    }
  }
  return files;
}

void ExpectError(const absl::StatusOr<LogContents>& read, absl::StatusCode code, const std::string& dir,
                 const std::string& mentions) {
  ASSERT_FALSE(read.ok()) << "read " << read->states.size() << " states";
  EXPECT_EQ(read.status().code(), code) << read.status();
  EXPECT_NE(read.status().message().find(dir), std::string::npos) << read.status();
  EXPECT_NE(read.status().message().find(mentions), std::string::npos) << read.status();
}

TEST(LogReaderTest, ReadsAnIntactLog) {
  const std::string dir = FreshDir("intact");
  WriteLog(dir, 8, /*flush_to_sst=*/true);
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir, 1));
  EXPECT_EQ(contents.position, 16u);
  ASSERT_EQ(contents.states.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(contents.states[i].payload, "payload-" + std::to_string(i) + "-v2");
}

TEST(LogReaderTest, AFlippedByteNamesTheDirectoryAndTheObject) {
  const std::string dir = FreshDir("flipped");
  WriteLog(dir, 4, false);
  const std::string key = ObjectKey({1 << 16, 256});
  std::string value = Stored(dir, key);
  value[kRecordHeaderBytes + 3] ^= 0x20;  // a payload byte
  Plant(dir, key, value);
  ExpectError(ReadLog(dir), absl::StatusCode::kDataLoss, dir, "object r65536+0x100: checksum mismatch");
}

TEST(LogReaderTest, ABadChecksumIsRefused) {
  const std::string dir = FreshDir("checksum");
  WriteLog(dir, 4, false);
  const std::string key = ObjectKey({1 << 16, 0});
  std::string value = Stored(dir, key);
  value[value.size() - 1] ^= 0x01;
  Plant(dir, key, value);
  ExpectError(ReadLog(dir), absl::StatusCode::kDataLoss, dir, "object r65536+0x0: checksum mismatch");
}

TEST(LogReaderTest, ATruncatedValueIsRefused) {
  const std::string dir = FreshDir("truncated_value");
  WriteLog(dir, 4, false);
  const std::string key = ObjectKey({1 << 16, 384});
  Plant(dir, key, Stored(dir, key).substr(0, 40));
  ExpectError(ReadLog(dir), absl::StatusCode::kDataLoss, dir, "object r65536+0x180: truncated");
}

TEST(LogReaderTest, AnUnknownFormatVersionIsRefused) {
  const std::string dir = FreshDir("version");
  WriteLog(dir, 4, false);
  const std::string key = ObjectKey({1 << 16, 128});
  std::string value = Stored(dir, key);
  value[0] = 7;
  Plant(dir, key, value);
  ExpectError(ReadLog(dir), absl::StatusCode::kFailedPrecondition, dir, "object r65536+0x80: record format version 7");
  // Metadata too.
  const std::string meta_dir = FreshDir("meta_version");
  WriteLog(meta_dir, 1, false);
  std::string meta = Stored(meta_dir, kPositionKey);
  meta[0] = 3;
  Plant(meta_dir, kPositionKey, meta);
  ExpectError(ReadLog(meta_dir), absl::StatusCode::kFailedPrecondition, meta_dir, "m:position: record format version 3");
  EXPECT_EQ(ObjectLog::Open({.dir = meta_dir, .node_id = 1}).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(LogReaderTest, StrayKeysAndStatesPastThePositionAreRefused) {
  const std::string dir = FreshDir("stray");
  WriteLog(dir, 2, false);
  Plant(dir, "zzz", "hello");  // sorts after the segments
  ExpectError(ReadLog(dir), absl::StatusCode::kDataLoss, dir, "not a segment key");
  const std::string early = FreshDir("stray_early");
  WriteLog(early, 2, false);
  Plant(early, "n", "hello");  // between the metadata and the object keys
  ExpectError(ReadLog(early), absl::StatusCode::kDataLoss, early, "not an object key");

  const std::string ahead = FreshDir("ahead");
  WriteLog(ahead, 2, false);
  ObjectState state = State(1024, 9, "from the future");
  state.position = 1000;  // the persisted position is 4
  Plant(ahead, ObjectKey(state.address), EncodeState(state));
  ExpectError(ReadLog(ahead), absl::StatusCode::kDataLoss, ahead, "position is 4");

  const std::string no_node = FreshDir("no_node");
  WriteLog(no_node, 1, false);
  {
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), no_node, &db).ok());
    ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), kNodeKey).ok());
    delete db;
  }
  ExpectError(ReadLog(no_node), absl::StatusCode::kDataLoss, no_node, "no node id");
}

// A log of node 1 left as a crash leaves it: `objects` objects written twice, one batch (segment) per
// append, none folded. Segment k covers position k.
void WriteCrashedLog(const std::string& dir, int objects) {
  ObjectLogOptions options{.dir = dir, .node_id = 1, .sync = true};
  options.fold_bytes = 1 << 30;
  auto log = ObjectLog::Open(options);
  ASSERT_OK(log.status());
  for (uint64_t v = 1; v <= 2; ++v) {
    for (int i = 0; i < objects; ++i) {
      (*log)->Append(State(128 * i, v, "payload-" + std::to_string(i) + "-v" + std::to_string(v)));
      ASSERT_OK((*log)->WaitForPersisted(absl::Seconds(10)));
    }
  }
  (*log)->Abandon();
}

void Delete(const std::string& dir, const std::string& key) {
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir, &db).ok());
  ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), key).ok());
  ASSERT_TRUE(db->Close().ok());
  delete db;
}

TEST(LogReaderTest, ACrashedLogIsReadFromItsSegments) {
  const std::string dir = FreshDir("segments");
  WriteCrashedLog(dir, 4);
  EXPECT_EQ(Stored(dir, SegmentKey(8)).empty(), false);
  ASSERT_OK_AND_ASSIGN(LogContents contents, ReadLog(dir, 1));
  EXPECT_EQ(contents.position, 8u);
  ASSERT_EQ(contents.states.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(contents.states[i].payload, "payload-" + std::to_string(i) + "-v2");
    EXPECT_EQ(contents.states[i].position, 5u + i);
  }
}

TEST(LogReaderTest, AMissingOrDamagedSegmentIsRefused) {
  const std::string missing = FreshDir("segment_missing");
  WriteCrashedLog(missing, 4);
  Delete(missing, SegmentKey(3));
  ExpectError(ReadLog(missing), absl::StatusCode::kDataLoss, missing, "segment 4 starts at position 4");
  EXPECT_EQ(ObjectLog::Open({.dir = missing, .node_id = 1}).status().code(), absl::StatusCode::kDataLoss);

  const std::string last = FreshDir("segment_last_missing");
  WriteCrashedLog(last, 4);
  Delete(last, SegmentKey(8));
  ExpectError(ReadLog(last), absl::StatusCode::kDataLoss, last, "segments are missing");

  const std::string flipped = FreshDir("segment_flipped");
  WriteCrashedLog(flipped, 4);
  std::string value = Stored(flipped, SegmentKey(6));
  value[kSegmentHeaderBytes + kSegmentEntryBytes + 2] ^= 0x04;  // a payload byte
  Plant(flipped, SegmentKey(6), value);
  ExpectError(ReadLog(flipped), absl::StatusCode::kDataLoss, flipped, "segment 6: checksum mismatch");
  auto reopened = ObjectLog::Open({.dir = flipped, .node_id = 1});
  EXPECT_EQ(reopened.status().code(), absl::StatusCode::kDataLoss) << reopened.status();
  EXPECT_NE(reopened.status().message().find("segment 6"), std::string::npos) << reopened.status();

  // A segment copied under the next one's key: its own position gives it away.
  const std::string moved = FreshDir("segment_moved");
  WriteCrashedLog(moved, 4);
  Plant(moved, SegmentKey(9), Stored(moved, SegmentKey(8)));
  ExpectError(ReadLog(moved), absl::StatusCode::kDataLoss, moved, "segment 9");
}

TEST(LogReaderTest, FoldedPositionsMustAgreeWithThePersistedOne) {
  const std::string dir = FreshDir("folded_ahead");
  WriteLog(dir, 2, false);
  Plant(dir, kFoldedKey, EncodeMeta(kFoldedKey, 99));
  ExpectError(ReadLog(dir), absl::StatusCode::kDataLoss, dir, "folded up to position 99, past the persisted position 4");
}

TEST(LogReaderTest, ALogOfTheOlderFormatIsRefused) {
  const std::string dir = FreshDir("format_1");
  WriteLog(dir, 2, false);
  Delete(dir, kFormatKey);  // what a log written before format 2 looks like
  ExpectError(ReadLog(dir), absl::StatusCode::kFailedPrecondition, dir, "log format 1");
  auto log = ObjectLog::Open({.dir = dir, .node_id = 1});
  EXPECT_EQ(log.status().code(), absl::StatusCode::kFailedPrecondition) << log.status();
  EXPECT_NE(log.status().message().find("log format 1"), std::string::npos) << log.status();

  const std::string older = FreshDir("format_2");
  WriteLog(older, 2, false);
  Plant(older, kFormatKey, EncodeMeta(kFormatKey, 2));  // no log epochs
  ExpectError(ReadLog(older), absl::StatusCode::kFailedPrecondition, older, "log format 2");

  const std::string later = FreshDir("format_4");
  WriteLog(later, 2, false);
  Plant(later, kFormatKey, EncodeMeta(kFormatKey, 4));
  ExpectError(ReadLog(later), absl::StatusCode::kFailedPrecondition, later, "log format 4");
}

TEST(LogReaderTest, AMissingLogIsNotFound) {
  const std::string dir = FreshDir("missing");
  EXPECT_EQ(ReadLog(dir).status().code(), absl::StatusCode::kNotFound);
}

TEST(LogReaderTest, ATruncatedSstFileFailsTheOpenOrTheRead) {
  const std::string dir = FreshDir("sst");
  WriteLog(dir, 64, /*flush_to_sst=*/true);
  auto tables = FilesEndingIn(dir, ".sst");
  ASSERT_FALSE(tables.empty());
  for (const fs::path& table : tables) fs::resize_file(table, fs::file_size(table) / 2);
  auto read = ReadLog(dir);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  EXPECT_NE(read.status().message().find(dir), std::string::npos) << read.status();
  auto log = ObjectLog::Open({.dir = dir, .node_id = 1});
  EXPECT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find(dir), std::string::npos) << log.status();
}

TEST(LogReaderTest, AFlippedByteInsideAnSstBlockIsCaught) {
  const std::string dir = FreshDir("sst_flip");
  WriteLog(dir, 64, /*flush_to_sst=*/true);
  auto tables = FilesEndingIn(dir, ".sst");
  ASSERT_FALSE(tables.empty());
  {
    std::fstream f(tables[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(100);
    char c;
    f.read(&c, 1);
    c ^= 0x40;
    f.seekp(100);
    f.write(&c, 1);
  }
  auto read = ReadLog(dir);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  EXPECT_NE(read.status().message().find(dir), std::string::npos) << read.status();
}

// What a torn write-ahead log gives back: a prefix of the batches, each complete, with the position of
// the last one. Appends were one batch each: state (i, v) has position
// (v - 1) * objects + i + 1.
void ExpectConsistentPrefix(const std::string& dir, int objects) {
  auto read = ReadLog(dir);
  ASSERT_OK(read.status());
  const uint64_t position = read->position;
  EXPECT_LT(position, uint64_t(2 * objects)) << "the damage lost nothing?";
  size_t expected_states = 0;
  for (int i = 0; i < objects; ++i) expected_states += uint64_t(i) + 1 <= position ? 1 : 0;
  ASSERT_EQ(read->states.size(), expected_states);
  for (const ObjectState& s : read->states) {
    const int i = static_cast<int>(s.address.offset / 128);
    const uint64_t v = uint64_t(objects) + i + 1 <= position ? 2 : 1;
    EXPECT_EQ(s.version, v) << s.address.ToString();
    EXPECT_EQ(s.payload, "payload-" + std::to_string(i) + "-v" + std::to_string(v));
    EXPECT_LE(s.position, position);
  }
}

TEST(LogReaderTest, ATruncatedWriteAheadLogGivesAConsistentPrefix) {
  const std::string dir = FreshDir("wal_truncated");
  WriteLog(dir, 16, /*flush_to_sst=*/false);  // everything is still in the write-ahead log
  auto wals = FilesEndingIn(dir, ".log");
  ASSERT_FALSE(wals.empty());
  for (const fs::path& wal : wals) fs::resize_file(wal, fs::file_size(wal) * 2 / 3);
  // A torn tail is what a power cut leaves in async mode: the batches before it, and their position.
  ASSERT_OK(ReadLog(dir).status());
  ExpectConsistentPrefix(dir, 16);
}

TEST(LogReaderTest, AScribbledWriteAheadLogIsAnError) {
  const std::string dir = FreshDir("wal_scribbled");
  WriteLog(dir, 16, /*flush_to_sst=*/false);
  auto wals = FilesEndingIn(dir, ".log");
  ASSERT_FALSE(wals.empty());
  for (const fs::path& wal : wals) {
    const uintmax_t size = fs::file_size(wal);
    if (size < 64) continue;
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string junk(16, '\xa5');
    f.write(junk.data(), junk.size());
  }
  // Damage before the tail is not a torn last write: nothing after it is dropped silently.
  ExpectError(ReadLog(dir), absl::StatusCode::kDataLoss, dir, "Corruption");
  EXPECT_EQ(ObjectLog::Open({.dir = dir, .node_id = 1}).status().code(), absl::StatusCode::kDataLoss);
}

TEST(LogReaderTest, ABrokenCurrentFileFailsTheOpen) {
  const std::string dir = FreshDir("current");
  WriteLog(dir, 2, true);
  {
    std::ofstream f(fs::path(dir) / "CURRENT", std::ios::trunc);
    f << "MANIFEST-999999\n";
  }
  auto read = ReadLog(dir);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find(dir), std::string::npos) << read.status();
  EXPECT_NE(read.status().message().find("cannot open"), std::string::npos) << read.status();
}

}  // namespace
}  // namespace fathom::logging
