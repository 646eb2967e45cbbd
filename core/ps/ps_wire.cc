#include "core/ps/ps_wire.h"

#include "formats/hmac_sha256.h"

namespace sparktorch {

FrameConnection::Status FrameConnection::Receive(ps::Message* message, uint32_t max_frame,
                                                 SteadyTime deadline, std::string* why) {
  unsigned char header[kFrameHeaderBytes];
  switch (ReadFully(fd_.get(), header, sizeof header, deadline)) {
    case IoStatus::kOk:
      break;
    case IoStatus::kClosed:
      *why = "connection closed";
      return Status::kClosed;
    case IoStatus::kTimeout:
      *why = "timed out waiting for a message";
      return Status::kTimeout;
  }
  const uint32_t length = FrameLength(header);
  if (length > max_frame) {
    *why = "frame of " + std::to_string(length) + " bytes is over the limit of " +
           std::to_string(max_frame);
    return Status::kTooLarge;
  }
  in_.resize(length);
  switch (ReadFully(fd_.get(), in_.data(), length, deadline)) {
    case IoStatus::kOk:
      break;
    case IoStatus::kClosed:
      *why = "connection closed in the middle of a frame of " + std::to_string(length) + " bytes";
      return Status::kClosed;
    case IoStatus::kTimeout:
      *why = "timed out in the middle of a frame of " + std::to_string(length) + " bytes";
      return Status::kTimeout;
  }
  *why = DecodePayload(in_.data(), in_.size(), message);
  return why->empty() ? Status::kOk : Status::kMalformed;
}

FrameConnection::Status FrameConnection::Send(const ps::Message& message, SteadyTime deadline) {
  out_.clear();
  AppendFrame(message, &out_);
  switch (WriteFully(fd_.get(), out_.data(), out_.size(), deadline)) {
    case IoStatus::kOk:
      return Status::kOk;
    case IoStatus::kTimeout:
      return Status::kTimeout;
    case IoStatus::kClosed:
      break;
  }
  return Status::kClosed;
}

std::string WorkerProof(const std::string& secret, const std::string& server_nonce,
                        const ps::Hello& hello) {
  return HmacSha256Hex(secret, "sparktorch-ps " + std::to_string(kPsProtocolVersion) + " worker|" +
                                   server_nonce + "|" + hello.job() + "|" +
                                   std::to_string(hello.worker()) + "|" +
                                   std::to_string(hello.world_size()) + "|" + hello.nonce());
}

std::string ServerProof(const std::string& secret, const std::string& server_nonce,
                        const std::string& worker_nonce) {
  return HmacSha256Hex(secret, "sparktorch-ps " + std::to_string(kPsProtocolVersion) + " server|" +
                                   server_nonce + "|" + worker_nonce);
}

}  // namespace sparktorch
