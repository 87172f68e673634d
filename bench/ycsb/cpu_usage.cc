#include "bench/ycsb/cpu_usage.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "absl/container/flat_hash_set.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fathom::ycsb {

absl::StatusOr<double> ProcessCpuSeconds(pid_t pid) {
  const std::string path = absl::StrCat("/proc/", pid, "/stat");
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("no process ", pid, " (", path, ")"));
  std::stringstream text;
  text << file.rdbuf();
  const std::string stat = text.str();
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields count from the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return absl::DataLossError(absl::StrCat(path, ": no ')' in ", stat));
  std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 1), ' ', absl::SkipEmpty());
  // After the comm: state is field 3, utime field 14, stime field 15 (proc(5)); here indexes 0, 11, 12.
  uint64_t utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) || !absl::SimpleAtoi(fields[12], &stime)) {
    return absl::DataLossError(absl::StrCat(path, ": cannot read utime/stime from ", stat));
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

absl::StatusOr<double> ProcessesCpuSeconds(absl::Span<const pid_t> pids) {
  double total = 0;
  for (const pid_t pid : pids) {
    absl::StatusOr<double> seconds = ProcessCpuSeconds(pid);
    if (!seconds.ok()) return seconds.status();
    total += *seconds;
  }
  return total;
}

double SelfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

absl::StatusOr<std::vector<pid_t>> ParsePidList(absl::string_view text) {
  std::vector<pid_t> pids;
  if (text.empty()) return pids;
  absl::flat_hash_set<pid_t> seen;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    int64_t pid = 0;
    if (!absl::SimpleAtoi(entry, &pid) || pid <= 0 || pid > std::numeric_limits<pid_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat("pid list \"", text, "\": \"", entry, "\" is not a process id"));
    }
    if (!seen.insert(static_cast<pid_t>(pid)).second) {
      return absl::InvalidArgumentError(absl::StrCat("pid list \"", text, "\": ", pid, " appears twice"));
    }
    pids.push_back(static_cast<pid_t>(pid));
  }
  return pids;
}

}  // namespace fathom::ycsb
