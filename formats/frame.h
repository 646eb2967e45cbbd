#ifndef SPARKTORCH_FORMATS_FRAME_H_
#define SPARKTORCH_FORMATS_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/ps.pb.h"

namespace sparktorch {

// Frames of the parameter server's protocol (sparktorch-formats(7), PARAMETER SERVER
// PROTOCOL): a 4-byte little-endian length, then that many bytes of a serialised ps::Message.
// Pure functions over bytes, so that the socket code stays small and the decoder can be fuzzed.

inline constexpr size_t kFrameHeaderBytes = 4;
// Before a connection is authenticated, no frame may be longer than this.
inline constexpr uint32_t kMaxHandshakeFrame = 64 * 1024;
// Room for a message's fields besides its tensor bytes.
inline constexpr uint32_t kFrameOverhead = 64 * 1024;

// The payload length a frame header announces.
uint32_t FrameLength(const unsigned char* header);

// Appends `message` as a frame (header and payload) to `out`.
void AppendFrame(const ps::Message& message, std::string* out);

// Parses a frame's payload. Returns "" on success, else why it is refused (a malformed message,
// or one that sets no kind).
std::string DecodePayload(const void* payload, size_t size, ps::Message* message);

// The name of a message's kind ("pull", "push", ...), for log lines; "none" when unset.
const char* MessageKindName(const ps::Message& message);

// Splits a byte stream into messages: feed it bytes as they arrive and take messages out.
// After an error it stays failed: the connection it reads must be closed.
class FrameDecoder {
 public:
  enum class Result { kNeedMore, kMessage, kTooLarge, kMalformed };

  explicit FrameDecoder(uint32_t max_frame) : max_frame_(max_frame) {}

  void set_max_frame(uint32_t max_frame) { max_frame_ = max_frame; }
  void Feed(const void* data, size_t size);

  // The next message, if a whole frame is buffered. kTooLarge: the header announces more than
  // max_frame bytes; kMalformed: the payload is not a ps::Message with a kind. `why` says more.
  Result Next(ps::Message* message, std::string* why);

  size_t buffered() const { return buffer_.size() - start_; }

 private:
  uint32_t max_frame_;
  std::string buffer_;
  size_t start_ = 0;
  bool failed_ = false;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_FRAME_H_
