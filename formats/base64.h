#ifndef SPARKTORCH_FORMATS_BASE64_H_
#define SPARKTORCH_FORMATS_BASE64_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sparktorch {

// Standard base64 (RFC 4648, alphabet A-Z a-z 0-9 + /, '=' padding), as Python's
// base64.b64encode writes it.

// Appends the encoding of `bytes` to *out.
void Base64Encode(std::string_view bytes, std::string* out);

// The number of bytes `text` decodes to, or nullopt when its length is not a multiple of 4 or
// its padding is malformed.
std::optional<size_t> Base64DecodedSize(std::string_view text);

// Decodes `text` into `out`, which has room for Base64DecodedSize(text) bytes. Returns the 0-based
// offset of the first character that is not base64 (or of misplaced padding), or nullopt on
// success.
std::optional<size_t> Base64Decode(std::string_view text, char* out);

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_BASE64_H_
