#include "bench/ycsb/core_workload.h"

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/ycsb/key_naming.h"
#include "bench/ycsb/zipfian.h"
#include "platform/base/status_macros.h"

namespace fathom::ycsb {
namespace {

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// Times one backend call and records it (unless warming up, measurements == null).
template <typename Call>
absl::Status Measured(Operation op, Measurements* measurements, Call call) {
  const uint64_t start = NowNs();
  absl::Status status = call();
  if (measurements != nullptr) measurements->Record(op, NowNs() - start, status);
  return status;
}

absl::StatusOr<std::unique_ptr<NumberGenerator>> MakeLengthGenerator(const std::string& distribution, int64_t min,
                                                                     int64_t max, const char* property) {
  if (distribution == "constant") return std::make_unique<ConstantGenerator>(max);
  if (distribution == "uniform") return std::make_unique<UniformLongGenerator>(min, max);
  if (distribution == "zipfian") return std::make_unique<ZipfianGenerator>(min, max);
  return absl::InvalidArgumentError(absl::StrCat(property, "=", distribution, " is not supported"));
}

// Printable bytes (' ' to '_'), like YCSB's RandomByteIterator: six random bits per character.
std::string RandomPrintable(Rng& rng, int64_t length) {
  std::string data(static_cast<size_t>(length), ' ');
  uint64_t bits = 0;
  for (int64_t i = 0; i < length; ++i) {
    if (i % 10 == 0) bits = rng();
    data[static_cast<size_t>(i)] = static_cast<char>(' ' + (bits & 63));
    bits >>= 6;
  }
  return data;
}

}  // namespace

absl::StatusOr<WorkloadConfig> WorkloadConfig::FromProperties(const Properties& props) {
  WorkloadConfig c;
  if (!props.Has("recordcount") || !props.Has("operationcount")) {
    return absl::InvalidArgumentError("recordcount and operationcount must be set (the workload file sets them)");
  }
  c.table = props.GetString("table", c.table);
  ASSIGN_OR_RETURN(c.record_count, props.GetInt("recordcount", 0));
  ASSIGN_OR_RETURN(c.operation_count, props.GetInt("operationcount", 0));
  ASSIGN_OR_RETURN(c.insert_start, props.GetInt("insertstart", 0));
  ASSIGN_OR_RETURN(c.insert_count, props.GetInt("insertcount", c.record_count - c.insert_start));
  ASSIGN_OR_RETURN(c.field_count, props.GetInt("fieldcount", c.field_count));
  c.field_name_prefix = props.GetString("fieldnameprefix", c.field_name_prefix);
  ASSIGN_OR_RETURN(c.field_length, props.GetInt("fieldlength", c.field_length));
  ASSIGN_OR_RETURN(c.min_field_length, props.GetInt("minfieldlength", c.min_field_length));
  c.field_length_distribution = props.GetString("fieldlengthdistribution", c.field_length_distribution);
  ASSIGN_OR_RETURN(c.read_all_fields, props.GetBool("readallfields", c.read_all_fields));
  ASSIGN_OR_RETURN(c.write_all_fields, props.GetBool("writeallfields", c.write_all_fields));
  ASSIGN_OR_RETURN(c.read_proportion, props.GetDouble("readproportion", c.read_proportion));
  ASSIGN_OR_RETURN(c.update_proportion, props.GetDouble("updateproportion", c.update_proportion));
  ASSIGN_OR_RETURN(c.insert_proportion, props.GetDouble("insertproportion", c.insert_proportion));
  ASSIGN_OR_RETURN(c.scan_proportion, props.GetDouble("scanproportion", c.scan_proportion));
  ASSIGN_OR_RETURN(c.read_modify_write_proportion,
                   props.GetDouble("readmodifywriteproportion", c.read_modify_write_proportion));
  c.request_distribution = props.GetString("requestdistribution", c.request_distribution);
  ASSIGN_OR_RETURN(c.min_scan_length, props.GetInt("minscanlength", c.min_scan_length));
  ASSIGN_OR_RETURN(c.max_scan_length, props.GetInt("maxscanlength", c.max_scan_length));
  c.scan_length_distribution = props.GetString("scanlengthdistribution", c.scan_length_distribution);
  const std::string insert_order = props.GetString("insertorder", "hashed");
  if (insert_order != "hashed" && insert_order != "ordered") {
    return absl::InvalidArgumentError(absl::StrCat("insertorder=", insert_order, " (want hashed or ordered)"));
  }
  c.ordered_inserts = insert_order == "ordered";
  ASSIGN_OR_RETURN(int64_t zero_padding, props.GetInt("zeropadding", c.zero_padding));
  c.zero_padding = static_cast<int>(zero_padding);
  ASSIGN_OR_RETURN(c.hotspot_data_fraction, props.GetDouble("hotspotdatafraction", c.hotspot_data_fraction));
  ASSIGN_OR_RETURN(c.hotspot_operation_fraction, props.GetDouble("hotspotopnfraction", c.hotspot_operation_fraction));
  ASSIGN_OR_RETURN(c.insertion_retry_limit,
                   props.GetInt("core_workload_insertion_retry_limit", c.insertion_retry_limit));
  ASSIGN_OR_RETURN(c.insertion_retry_interval_s,
                   props.GetInt("core_workload_insertion_retry_interval", c.insertion_retry_interval_s));
  ASSIGN_OR_RETURN(c.transfer_proportion, props.GetDouble("transferproportion", c.transfer_proportion));
  ASSIGN_OR_RETURN(c.initial_balance, props.GetInt("initialbalance", c.initial_balance));
  ASSIGN_OR_RETURN(c.max_transfer, props.GetInt("maxtransfer", c.max_transfer));

  if (c.record_count < 1 || c.operation_count < 0 || c.insert_start < 0 || c.insert_count < 1) {
    return absl::InvalidArgumentError("need recordcount >= 1, operationcount >= 0, insertcount >= 1");
  }
  if (c.field_count < 1 || c.field_length < 1 || c.min_field_length < 1 || c.min_field_length > c.field_length) {
    return absl::InvalidArgumentError("need fieldcount >= 1 and 1 <= minfieldlength <= fieldlength");
  }
  if (c.min_scan_length < 1 || c.min_scan_length > c.max_scan_length) {
    return absl::InvalidArgumentError("need 1 <= minscanlength <= maxscanlength");
  }
  for (double p : {c.read_proportion, c.update_proportion, c.insert_proportion, c.scan_proportion,
                   c.read_modify_write_proportion, c.transfer_proportion}) {
    if (p < 0) return absl::InvalidArgumentError("operation proportions must not be negative");
  }
  if (c.read_proportion + c.update_proportion + c.insert_proportion + c.scan_proportion +
          c.read_modify_write_proportion + c.transfer_proportion <= 0) {
    return absl::InvalidArgumentError("all operation proportions are zero");
  }
  if (c.transfer_proportion > 0 && (c.insert_count < 2 || c.max_transfer < 1 || c.insert_proportion > 0)) {
    return absl::InvalidArgumentError(
        "transfers need insertcount >= 2, maxtransfer >= 1 and no run-phase inserts (the total must be known)");
  }
  return c;
}

absl::StatusOr<std::unique_ptr<CoreWorkload>> CoreWorkload::Create(const Properties& props) {
  ASSIGN_OR_RETURN(WorkloadConfig config, WorkloadConfig::FromProperties(props));
  const std::string& d = config.request_distribution;
  if (d != "uniform" && d != "zipfian" && d != "latest" && d != "hotspot") {
    return absl::InvalidArgumentError(
        absl::StrCat("requestdistribution=", d, " is not supported (uniform, zipfian, latest, hotspot)"));
  }
  // Surface bad length distributions now rather than in a client thread.
  RETURN_IF_ERROR(MakeLengthGenerator(config.field_length_distribution, config.min_field_length,
                                      config.field_length, "fieldlengthdistribution")
                      .status());
  RETURN_IF_ERROR(MakeLengthGenerator(config.scan_length_distribution, config.min_scan_length,
                                      config.max_scan_length, "scanlengthdistribution")
                      .status());
  return std::unique_ptr<CoreWorkload>(new CoreWorkload(std::move(config)));
}

CoreWorkload::CoreWorkload(WorkloadConfig config)
    : config_(std::move(config)),
      load_key_sequence_(config_.insert_start),
      transaction_insert_sequence_(config_.record_count) {}

CoreWorkload::~CoreWorkload() = default;

std::unique_ptr<CoreWorkload::ThreadState> CoreWorkload::NewThreadState(uint64_t seed) {
  auto state = std::make_unique<ThreadState>();
  state->rng.seed(seed);
  const WorkloadConfig& c = config_;
  const int64_t first = c.insert_start;
  const int64_t last = c.insert_start + c.insert_count - 1;
  if (c.request_distribution == "uniform") {
    state->key_chooser = std::make_unique<UniformLongGenerator>(first, last);
  } else if (c.request_distribution == "zipfian") {
    // As YCSB: size the key space for the inserts expected during the run (twice the insert proportion,
    // YCSB's fudge factor) so the popular keys do not shift as records are added; NextKeynum skips keys
    // not inserted yet.
    const int64_t expected_new_keys =
        static_cast<int64_t>(static_cast<double>(c.operation_count) * c.insert_proportion * 2.0);
    state->key_chooser = std::make_unique<ScrambledZipfianGenerator>(first, last + 1 + expected_new_keys);
  } else if (c.request_distribution == "latest") {
    state->key_chooser = std::make_unique<SkewedLatestGenerator>(&transaction_insert_sequence_);
  } else {  // hotspot; Create() rejected everything else
    state->key_chooser =
        std::make_unique<HotspotIntegerGenerator>(first, last, c.hotspot_data_fraction, c.hotspot_operation_fraction);
  }
  state->field_chooser = std::make_unique<UniformLongGenerator>(0, c.field_count - 1);
  state->field_length =
      *MakeLengthGenerator(c.field_length_distribution, c.min_field_length, c.field_length, "fieldlengthdistribution");
  state->scan_length =
      *MakeLengthGenerator(c.scan_length_distribution, c.min_scan_length, c.max_scan_length, "scanlengthdistribution");
  // Same order as YCSB, so one unit draw maps to the same operation.
  if (c.read_proportion > 0) state->operation_chooser.Add(c.read_proportion, Operation::kRead);
  if (c.update_proportion > 0) state->operation_chooser.Add(c.update_proportion, Operation::kUpdate);
  if (c.insert_proportion > 0) state->operation_chooser.Add(c.insert_proportion, Operation::kInsert);
  if (c.scan_proportion > 0) state->operation_chooser.Add(c.scan_proportion, Operation::kScan);
  if (c.read_modify_write_proportion > 0) {
    state->operation_chooser.Add(c.read_modify_write_proportion, Operation::kReadModifyWrite);
  }
  if (c.transfer_proportion > 0) state->operation_chooser.Add(c.transfer_proportion, Operation::kTransfer);
  return state;
}

std::string CoreWorkload::BuildKeyName(int64_t keynum) const {
  return ycsb::BuildKeyName(keynum, config_.ordered_inserts, config_.zero_padding);
}

Operation CoreWorkload::ChooseOperation(ThreadState& state) const { return state.operation_chooser.Next(state.rng); }

int64_t CoreWorkload::NextKeynum(ThreadState& state) {
  int64_t keynum;
  do {
    keynum = state.key_chooser->Next(state.rng);
  } while (keynum > transaction_insert_sequence_.Last());
  return keynum;
}

Record CoreWorkload::BuildSingleValue(ThreadState& state, const std::string& key) {
  Record values;
  const int64_t field = state.field_chooser->Next(state.rng);
  values[absl::StrCat(config_.field_name_prefix, field)] =
      RandomPrintable(state.rng, state.field_length->Next(state.rng));
  return values;
}

Record CoreWorkload::BuildValues(ThreadState& state, const std::string& key) {
  Record values;
  for (int64_t field = 0; field < config_.field_count; ++field) {
    values[absl::StrCat(config_.field_name_prefix, field)] =
        RandomPrintable(state.rng, state.field_length->Next(state.rng));
  }
  if (config_.transfer_proportion > 0) values[kBalanceField] = std::to_string(config_.initial_balance);
  return values;
}

std::unique_ptr<FieldList> CoreWorkload::FieldsToRead(ThreadState& state) {
  if (config_.read_all_fields) return nullptr;
  return std::make_unique<FieldList>(
      FieldList{absl::StrCat(config_.field_name_prefix, state.field_chooser->Next(state.rng))});
}

PlannedOperation CoreWorkload::PlanInsert(ThreadState& state) {
  PlannedOperation planned;
  planned.op = Operation::kInsert;
  planned.key = BuildKeyName(load_key_sequence_.Next());
  planned.values = BuildValues(state, planned.key);
  return planned;
}

PlannedOperation CoreWorkload::PlanTransaction(ThreadState& state) {
  PlannedOperation planned;
  planned.op = ChooseOperation(state);
  // The draws in YCSB's order for each operation (key first, then fields / values / scan length).
  switch (planned.op) {
    case Operation::kRead:
      planned.key = BuildKeyName(NextKeynum(state));
      planned.fields = FieldsToRead(state);
      break;
    case Operation::kUpdate:
      planned.key = BuildKeyName(NextKeynum(state));
      planned.values = config_.write_all_fields ? BuildValues(state, planned.key) : BuildSingleValue(state, planned.key);
      break;
    case Operation::kInsert:
      planned.insert_keynum = transaction_insert_sequence_.Next();
      planned.key = BuildKeyName(planned.insert_keynum);
      planned.values = BuildValues(state, planned.key);
      break;
    case Operation::kScan:
      planned.key = BuildKeyName(NextKeynum(state));
      planned.scan_length = state.scan_length->Next(state.rng);
      planned.fields = FieldsToRead(state);
      break;
    case Operation::kReadModifyWrite:
      planned.key = BuildKeyName(NextKeynum(state));
      planned.fields = FieldsToRead(state);
      planned.values = config_.write_all_fields ? BuildValues(state, planned.key) : BuildSingleValue(state, planned.key);
      break;
    case Operation::kTransfer: {
      const int64_t from = NextKeynum(state);
      int64_t to = NextKeynum(state);
      // Two distinct accounts; with a skewed distribution a few redraws may be needed.
      for (int redraw = 0; to == from && redraw < 64; ++redraw) to = NextKeynum(state);
      if (to == from) to = from == config_.insert_start ? from + 1 : config_.insert_start;
      planned.key = BuildKeyName(from);
      planned.to_key = BuildKeyName(to);
      planned.amount = 1 + static_cast<int64_t>(state.rng() % static_cast<uint64_t>(config_.max_transfer));
      break;
    }
    case Operation::kDelete:
      break;  // not part of the core workload's mix
  }
  return planned;
}

absl::Status CoreWorkload::Finish(const PlannedOperation& op) {
  // Acknowledge even a failed insert, as YCSB does (in a finally block), or the "latest" window stalls.
  if (op.insert_keynum < 0) return absl::OkStatus();
  return transaction_insert_sequence_.Acknowledge(op.insert_keynum);
}

void CoreWorkload::DoInsert(Backend& db, ThreadState& state, Measurements* measurements) {
  const PlannedOperation planned = PlanInsert(state);
  for (int64_t attempt = 0;; ++attempt) {
    const absl::Status status = Measured(Operation::kInsert, measurements,
                                         [&] { return db.Insert(config_.table, planned.key, planned.values); });
    if (status.ok() || attempt >= config_.insertion_retry_limit) return;
    std::this_thread::sleep_for(std::chrono::seconds(config_.insertion_retry_interval_s));
  }
}

Operation CoreWorkload::DoTransaction(Backend& db, ThreadState& state, Measurements* measurements) {
  const PlannedOperation planned = PlanTransaction(state);
  Execute(db, planned, measurements);
  if (absl::Status finished = Finish(planned); !finished.ok() && measurements != nullptr) {
    measurements->Record(Operation::kInsert, 0,
                 absl::InternalError(absl::StrCat("acknowledging the insert: ", finished.ToString())));
  }
  return planned.op;
}

void CoreWorkload::Execute(Backend& db, const PlannedOperation& op, Measurements* measurements) {
  const std::string& table = config_.table;
  switch (op.op) {
    case Operation::kRead: {
      Record result;
      Measured(Operation::kRead, measurements, [&] { return db.Read(table, op.key, op.fields.get(), &result); })
          .IgnoreError();
      break;
    }
    case Operation::kUpdate:
      Measured(Operation::kUpdate, measurements, [&] { return db.Update(table, op.key, op.values); }).IgnoreError();
      break;
    case Operation::kInsert:
      Measured(Operation::kInsert, measurements, [&] { return db.Insert(table, op.key, op.values); }).IgnoreError();
      break;
    case Operation::kScan: {
      std::vector<Record> result;
      Measured(Operation::kScan, measurements,
               [&] { return db.Scan(table, op.key, op.scan_length, op.fields.get(), &result); })
          .IgnoreError();
      break;
    }
    case Operation::kReadModifyWrite:
      // As YCSB: the read and the update are measured on their own, and the pair as READ-MODIFY-WRITE.
      Measured(Operation::kReadModifyWrite, measurements, [&] {
        Record result;
        absl::Status read = Measured(Operation::kRead, measurements,
                                     [&] { return db.Read(table, op.key, op.fields.get(), &result); });
        absl::Status update =
            Measured(Operation::kUpdate, measurements, [&] { return db.Update(table, op.key, op.values); });
        return read.ok() ? update : read;
      }).IgnoreError();
      break;
    case Operation::kTransfer:
      Measured(Operation::kTransfer, measurements,
               [&] { return db.Transfer(table, op.key, op.to_key, op.amount); })
          .IgnoreError();
      break;
    case Operation::kDelete:
      break;
  }
}

absl::StatusOr<int64_t> CoreWorkload::SumBalances(Backend& db) const {
  int64_t total = 0;
  const FieldList fields = {kBalanceField};
  for (int64_t i = config_.insert_start; i < config_.insert_start + config_.insert_count; ++i) {
    const std::string key = BuildKeyName(i);
    Record record;
    RETURN_IF_ERROR(db.Read(config_.table, key, &fields, &record));
    ASSIGN_OR_RETURN(int64_t balance, BalanceOf(record, key));
    total += balance;
  }
  return total;
}

CoreWorkload::VerifyReport CoreWorkload::VerifyRecords(Backend& db) const {
  VerifyReport report;
  // Bank records hold one balance field; YCSB records fieldcount fields.
  const size_t want_fields = config_.transfer_proportion > 0 ? 1 : static_cast<size_t>(config_.field_count);
  constexpr int64_t kKeysNamed = 10;
  for (int64_t i = config_.insert_start; i < config_.insert_start + config_.insert_count; ++i) {
    const std::string key = BuildKeyName(i);
    Record record;
    absl::Status status = db.Read(config_.table, key, nullptr, &record);
    if (status.ok() && record.size() < want_fields) {
      status = absl::DataLossError(absl::StrCat(record.size(), " fields, want ", want_fields));
    }
    ++report.records;
    if (status.ok()) {
      ++report.ok;
      continue;
    }
    if (absl::IsNotFound(status)) {
      ++report.missing;
    } else {
      ++report.failed;
    }
    if (report.missing + report.failed <= kKeysNamed) ++report.errors[absl::StrCat(key, ": ", status.ToString())];
    ++report.errors[status.ToString()];
  }
  return report;
}

}  // namespace fathom::ycsb
