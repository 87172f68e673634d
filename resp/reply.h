// Replies of the Redis protocol (RESP2), appended to a connection's output buffer.
#ifndef FATHOM_RESP_REPLY_H_
#define FATHOM_RESP_REPLY_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace fathom::resp {

void AppendSimple(std::string& out, std::string_view text);   // +text
// -text; a first word in capitals is the error's kind (ERR, WRONGTYPE, NOAUTH, EXECABORT). Line ends in
// `text` become spaces: an error is one line.
void AppendError(std::string& out, std::string_view text);
void AppendInteger(std::string& out, int64_t value);          // :value
void AppendBulk(std::string& out, std::string_view bytes);    // $len bytes
void AppendNull(std::string& out);                            // $-1 (no such key)
void AppendNullArray(std::string& out);                       // *-1 (EXEC after a WATCHed key changed)
void AppendArrayHeader(std::string& out, size_t elements);    // *n, then n replies

}  // namespace fathom::resp

#endif  // FATHOM_RESP_REPLY_H_
