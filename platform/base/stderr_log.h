// StderrLog: a diagnostic line on stderr, stamped with the local wall-clock time to the millisecond in
// fathomd's own format ("2026-11-26 05:35:24.468 ..."), so the logs of several processes of a fault run
// can be read in one order.
//
//   StderrLog("coordinator %s: node %u is the configuration manager", root.c_str(), id);
#ifndef FATHOM_PLATFORM_BASE_STDERR_LOG_H_
#define FATHOM_PLATFORM_BASE_STDERR_LOG_H_

#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace fathom {

__attribute__((format(printf, 1, 2))) inline void StderrLog(const char* format, ...) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  const size_t n = strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &local);
  snprintf(stamp + n, sizeof(stamp) - n, ".%03ld ", now.tv_nsec / 1000000);
  char line[2048];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  // One write per line, so lines of concurrent threads do not interleave.
  fprintf(stderr, "%s%s\n", stamp, line);
}

}  // namespace fathom

#endif  // FATHOM_PLATFORM_BASE_STDERR_LOG_H_
