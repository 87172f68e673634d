// check_history PATH: checks a list-append history file (docs/formats/history.md) for strict
// serializability and prints the verdict.
//
// Exit status: 0 no anomalies; 1 anomalies (listed); 2 malformed input, unreadable file or bad usage.
// --serializable ignores real-time order (checks serializability only).
#include <cstdio>
#include <cstring>
#include <string>

#include "tests/history/history.h"

namespace {

constexpr char kUsage[] =
    "usage: check_history [--serializable] PATH\n"
    "Checks a list-append history (docs/formats/history.md) for strict serializability.\n"
    "Exit status: 0 no anomalies, 1 anomalies found, 2 malformed input or usage.\n";

}  // namespace

int main(int argc, char** argv) {
  fathom::history::CheckOptions options;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--serializable") == 0) {
      options.realtime = false;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (argv[i][0] == '-' || !path.empty()) {
      std::fputs(kUsage, stderr);
      return 2;
    } else {
      path = argv[i];
    }
  }
  if (path.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  absl::StatusOr<fathom::history::History> history = fathom::history::ReadHistoryFile(path);
  if (!history.ok()) {
    std::fprintf(stderr, "check_history: %s\n", std::string(history.status().message()).c_str());
    return 2;
  }
  const fathom::history::CheckResult result = fathom::history::CheckHistory(*history, options);
  std::printf("%s: %s\n", path.c_str(), result.ToString().c_str());
  if (result.valid()) {
    std::printf("%s as far as the checker can tell\n",
                options.realtime ? "strictly serializable" : "serializable");
    return 0;
  }
  return 1;
}
