// fabric_peer: the other process in UCX conformance, torn-read and benchmark runs.
//
//   fabric_peer --mode=serve --transports=tcp
//     allocates a region filled with PatternByte, prints "READY <address hex> <region descriptor hex>",
//     then serves one-sided operations (progressing its worker, sleeping when idle) until stdin closes.
//     Stdin commands: "scribble <offset> <length>" rewrites that range with whole-range patterns
//     0,1,2,... until stdin gets another line (torn-read tests); "stop" ends scribbling.
//   fabric_peer --mode=add --target=<address hex> --region=<descriptor hex> --offset=N --count=N
//     performs `count` FetchAdd(1) on the target word, prints "DONE <failures>" and exits.
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "platform/base/hex.h"
#include "platform/fabric/testing/pattern.h"
#include "platform/fabric/ucx/ucx_fabric.h"

ABSL_FLAG(std::string, mode, "serve", "serve | add");
ABSL_FLAG(std::string, transports, "", "UCX_TLS for this process");
ABSL_FLAG(uint64_t, region_bytes, fathom::fabric::testing::kPeerRegionBytes, "serve: region size");
ABSL_FLAG(std::string, target, "", "add: the target worker's address, hex");
ABSL_FLAG(std::string, region, "", "add: the target region descriptor, hex");
ABSL_FLAG(uint64_t, offset, 0, "add: offset of the counter word");
ABSL_FLAG(int, count, 1000, "add: number of FetchAdd(1)");

namespace fathom::fabric {
namespace {

int Fail(const absl::Status& status) {
  std::cerr << "fabric_peer: " << status << std::endl;
  return 1;
}

// Returns true with a line if stdin has one ready; sets *eof when stdin closed.
bool ReadCommand(std::string* line, bool* eof) {
  pollfd fd{STDIN_FILENO, POLLIN, 0};
  if (poll(&fd, 1, 0) <= 0) return false;
  char buf[256];
  ssize_t n = read(STDIN_FILENO, buf, sizeof buf - 1);
  if (n <= 0) {
    *eof = true;
    return false;
  }
  line->assign(buf, n);
  while (!line->empty() && (line->back() == '\n' || line->back() == '\r')) line->pop_back();
  return true;
}

int Serve(const UcxOptions& options) {
  auto fabric = CreateUcxFabric(options);
  if (!fabric.ok()) return Fail(fabric.status());
  auto region = (*fabric)->AllocateRegion(absl::GetFlag(FLAGS_region_bytes));
  if (!region.ok()) return Fail(region.status());
  testing::FillPattern((*region)->data(), (*region)->size());
  auto worker = (*fabric)->CreateWorker();
  if (!worker.ok()) return Fail(worker.status());
  std::cout << "READY " << absl::BytesToHexString((*worker)->address()) << " "
            << absl::BytesToHexString((*region)->descriptor().Serialize()) << std::endl;
  Completion sink[16];
  bool eof = false;
  uint64_t scribble_offset = 0, scribble_length = 0, generation = 0;
  while (!eof) {
    std::string line;
    if (ReadCommand(&line, &eof)) {
      std::vector<std::string> words = absl::StrSplit(line, ' ');
      scribble_length = 0;
      if (words.size() == 3 && words[0] == "scribble" && absl::SimpleAtoi(words[1], &scribble_offset) &&
          absl::SimpleAtoi(words[2], &scribble_length) &&
          scribble_offset + scribble_length <= (*region)->size()) {
        std::cout << "SCRIBBLING" << std::endl;
      } else if (line == "stop") {
        std::cout << "STOPPED" << std::endl;
      }
    }
    (*worker)->Poll(sink);
    if (scribble_length > 0) {
      // Whole-range patterns: a reader that sees two different byte values saw a torn copy.
      std::memset((*region)->data() + scribble_offset, static_cast<int>(++generation & 0xff), scribble_length);
    } else {
      (*worker)->Wait(absl::Milliseconds(20));
    }
  }
  return 0;
}

int Add(const UcxOptions& options) {
  std::string address, descriptor_bytes;
  if (!fathom::HexToBytes(absl::GetFlag(FLAGS_target), &address) ||
      !fathom::HexToBytes(absl::GetFlag(FLAGS_region), &descriptor_bytes)) {
    return Fail(absl::InvalidArgumentError("--target and --region must be hex"));
  }
  auto descriptor = RegionDescriptor::Parse(descriptor_bytes);
  if (!descriptor.ok()) return Fail(descriptor.status());
  auto fabric = CreateUcxFabric(options);
  if (!fabric.ok()) return Fail(fabric.status());
  auto worker = (*fabric)->CreateWorker();
  if (!worker.ok()) return Fail(worker.status());
  auto endpoint = (*worker)->Connect(address);
  if (!endpoint.ok()) return Fail(endpoint.status());
  auto remote = (*endpoint)->ImportRegion(*descriptor);
  if (!remote.ok()) return Fail(remote.status());
  const int count = absl::GetFlag(FLAGS_count);
  int failures = 0;
  uint64_t old_values[16];
  for (int done = 0; done < count;) {
    int batch = std::min(16, count - done);
    for (int i = 0; i < batch; ++i) {
      absl::Status s = (*endpoint)->PostFetchAdd(*remote, absl::GetFlag(FLAGS_offset), 1, &old_values[i], i);
      if (!s.ok()) return Fail(s);
    }
    if (absl::Status s = (*endpoint)->Flush(); !s.ok()) return Fail(s);
    std::vector<Completion> completions;
    if (absl::Status s = WaitForCompletions(**worker, batch, completions, absl::Seconds(30)); !s.ok()) {
      return Fail(s);
    }
    for (const Completion& c : completions) failures += c.status.ok() ? 0 : 1;
    done += batch;
  }
  std::cout << "DONE " << failures << std::endl;
  return 0;
}

}  // namespace
}  // namespace fathom::fabric

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  fathom::fabric::UcxOptions options;
  options.transports = absl::GetFlag(FLAGS_transports);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "serve") return fathom::fabric::Serve(options);
  if (mode == "add") return fathom::fabric::Add(options);
  std::cerr << "fabric_peer: unknown --mode=" << mode << std::endl;
  return 2;
}
