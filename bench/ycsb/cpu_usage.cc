#include "bench/ycsb/cpu_usage.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

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

double SelfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace fathom::ycsb
