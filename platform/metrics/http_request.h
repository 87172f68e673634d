// The part of an HTTP/1.x request the metrics endpoint reads: its request line. Everything after it (the
// headers) is skipped; a body is never expected.
#ifndef FATHOM_PLATFORM_METRICS_HTTP_REQUEST_H_
#define FATHOM_PLATFORM_METRICS_HTTP_REQUEST_H_

#include <string>
#include <string_view>

namespace fathom::metrics {

struct RequestLine {
  std::string method;
  std::string path;  // without the query ("?...")
};

enum class RequestState {
  kIncomplete,  // no blank line yet: read more
  kComplete,
  kMalformed,   // not "METHOD SP PATH SP HTTP/1.x"
};

// Looks at what has been read of a request. kComplete once the header block ended (a blank line, CRLF or
// LF), with `line` filled in.
RequestState ParseRequest(std::string_view received, RequestLine& line);

// The answer to a request: status code and reason ("200 OK", "404 Not Found", ...) for `line`, given the
// one path served.
int StatusFor(const RequestLine& line, std::string_view served_path);
std::string_view ReasonPhrase(int status);

}  // namespace fathom::metrics

#endif  // FATHOM_PLATFORM_METRICS_HTTP_REQUEST_H_
