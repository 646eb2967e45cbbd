#include "core/ps/ps_wire.h"

#include "formats/hmac_sha256.h"

namespace sparktorch {
namespace {

FrameConnection::Status FromIo(IoStatus status) {
  switch (status) {
    case IoStatus::kOk:
      return FrameConnection::Status::kOk;
    case IoStatus::kTimeout:
      return FrameConnection::Status::kTimeout;
    case IoStatus::kClosed:
      break;
  }
  return FrameConnection::Status::kClosed;
}

}  // namespace

FrameConnection::Status FrameConnection::Receive(ps::Message* message, uint32_t max_frame,
                                                 SteadyTime deadline, std::string* why) {
  unsigned char header[kFrameHeaderBytes];
  IoStatus io = ReadFully(fd_.get(), header, sizeof header, deadline);
  if (io != IoStatus::kOk) {
    *why = io == IoStatus::kClosed ? "connection closed" : "timed out waiting for a message";
    return FromIo(io);
  }
  const uint32_t length = FrameLength(header);
  if (length > max_frame) {
    *why = "frame of " + std::to_string(length) + " bytes is over the limit of " +
           std::to_string(max_frame);
    return Status::kTooLarge;
  }
  in_.resize(length);
  io = ReadFully(fd_.get(), in_.data(), length, deadline);
  if (io != IoStatus::kOk) {
    *why = std::string(io == IoStatus::kClosed ? "connection closed" : "timed out") +
           " in the middle of a frame of " + std::to_string(length) + " bytes";
    return FromIo(io);
  }
  *why = DecodePayload(in_.data(), in_.size(), message);
  return why->empty() ? Status::kOk : Status::kMalformed;
}

FrameConnection::Status FrameConnection::Send(const ps::Message& message, SteadyTime deadline) {
  out_.clear();
  AppendFrame(message, &out_);
  return FromIo(WriteFully(fd_.get(), out_.data(), out_.size(), deadline));
}

namespace {

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

size_t VarintSize(uint64_t value) {
  size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

// The key of a length-delimited field (wire type 2).
uint64_t BytesKey(int field) { return static_cast<uint64_t>(field) << 3 | 2; }

}  // namespace

FrameConnection::Status FrameConnection::SendWithTensor(const ps::Message& message, int tensor_field,
                                                        const void* data, size_t size,
                                                        SteadyTime deadline) {
  // Message{kind: Sub{fields..., tensor_field: data}}, encoded by hand around the submessage.
  const int kind = static_cast<int>(message.kind_case());
  const google::protobuf::Message& sub = message.GetReflection()->GetMessage(
      message, message.GetDescriptor()->FindFieldByNumber(kind));
  const std::string fields = sub.SerializeAsString();
  const uint64_t sub_size =
      fields.size() + VarintSize(BytesKey(tensor_field)) + VarintSize(size) + size;
  const uint64_t payload = VarintSize(BytesKey(kind)) + VarintSize(sub_size) + sub_size;
  out_.clear();
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>(payload >> (8 * i)));
  AppendVarint(BytesKey(kind), &out_);
  AppendVarint(sub_size, &out_);
  out_ += fields;
  AppendVarint(BytesKey(tensor_field), &out_);
  AppendVarint(size, &out_);
  IoStatus status = WriteFully(fd_.get(), out_.data(), out_.size(), deadline);
  if (status == IoStatus::kOk) status = WriteFully(fd_.get(), data, size, deadline);
  return FromIo(status);
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
