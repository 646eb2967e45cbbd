#ifndef SPARKTORCH_CORE_PS_PS_WIRE_H_
#define SPARKTORCH_CORE_PS_PS_WIRE_H_

#include <cstdint>
#include <string>

#include "core/net/socket.h"
#include "formats/frame.h"

namespace sparktorch {

// The parameter server protocol's version, in Challenge and Hello.
inline constexpr uint32_t kPsProtocolVersion = 1;
// Seconds a new connection has to authenticate.
inline constexpr double kPsHandshakeSeconds = 10;
// The largest Welcome a worker accepts (it carries the model).
inline constexpr uint32_t kMaxWelcomeFrame = 1u << 30;

// A connection that carries frames (formats/frame.h). Every read and write has a deadline; a
// frame longer than the reader's limit is refused before its payload is read. One thread reads
// and writes.
class FrameConnection {
 public:
  enum class Status { kOk, kClosed, kTimeout, kTooLarge, kMalformed };

  FrameConnection() = default;
  explicit FrameConnection(Fd fd) : fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }
  bool open() const { return fd_.valid(); }
  void Close() { fd_.reset(); }

  // Reads one message of at most `max_frame` payload bytes. On a status other than kOk, `why`
  // says what happened in words for a log line.
  Status Receive(ps::Message* message, uint32_t max_frame, SteadyTime deadline, std::string* why);
  // Writes one message.
  Status Send(const ps::Message& message, SteadyTime deadline);
  // Writes `message` with `size` bytes at `data` as the bytes field `tensor_field` of its kind's
  // submessage, which must leave that field unset: the frame decodes as if the bytes were in
  // the message, but they go to the socket without being copied into it first.
  Status SendWithTensor(const ps::Message& message, int tensor_field, const void* data,
                        size_t size, SteadyTime deadline);

 private:
  Fd fd_;
  std::string in_;   // the last payload read
  std::string out_;  // the frame being written
};

// What each side signs with the job's secret (HMAC-SHA256, hex): the worker proves it knows the
// secret by signing the server's nonce with who it is and its own nonce; the server proves it by
// signing both nonces. The secret itself never crosses the wire.
std::string WorkerProof(const std::string& secret, const std::string& server_nonce,
                        const ps::Hello& hello);
std::string ServerProof(const std::string& secret, const std::string& server_nonce,
                        const std::string& worker_nonce);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_PS_PS_WIRE_H_
