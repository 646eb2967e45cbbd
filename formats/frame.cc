#include "formats/frame.h"

namespace sparktorch {

uint32_t FrameLength(const unsigned char* header) {
  return static_cast<uint32_t>(header[0]) | static_cast<uint32_t>(header[1]) << 8 |
         static_cast<uint32_t>(header[2]) << 16 | static_cast<uint32_t>(header[3]) << 24;
}

void AppendFrame(const ps::Message& message, std::string* out) {
  const size_t size = message.ByteSizeLong();
  const size_t at = out->size();
  out->resize(at + kFrameHeaderBytes + size);
  unsigned char* p = reinterpret_cast<unsigned char*>(&(*out)[at]);
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(size >> (8 * i));
  message.SerializeWithCachedSizesToArray(p + kFrameHeaderBytes);
}

std::string DecodePayload(const void* payload, size_t size, ps::Message* message) {
  if (!message->ParseFromArray(payload, static_cast<int>(size))) {
    return "malformed message (" + std::to_string(size) + " bytes that are not a sparktorch.ps.Message)";
  }
  if (message->kind_case() == ps::Message::KIND_NOT_SET) {
    return "message of no known kind (" + std::to_string(size) + " bytes)";
  }
  return "";
}

const char* MessageKindName(const ps::Message& message) {
  switch (message.kind_case()) {
    case ps::Message::kChallenge: return "challenge";
    case ps::Message::kHello: return "hello";
    case ps::Message::kWelcome: return "welcome";
    case ps::Message::kRefused: return "refused";
    case ps::Message::kPull: return "pull";
    case ps::Message::kWeights: return "weights";
    case ps::Message::kPush: return "push";
    case ps::Message::kPushAck: return "push_ack";
    case ps::Message::kEpochReport: return "epoch_report";
    case ps::Message::kEpochAck: return "epoch_ack";
    case ps::Message::kDone: return "done";
    case ps::Message::kFailed: return "failed";
    case ps::Message::KIND_NOT_SET: break;
  }
  return "none";
}

void FrameDecoder::Feed(const void* data, size_t size) {
  if (failed_) return;
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  buffer_.append(static_cast<const char*>(data), size);
}

FrameDecoder::Result FrameDecoder::Next(ps::Message* message, std::string* why) {
  if (failed_) {
    *why = "the stream already failed";
    return Result::kMalformed;
  }
  if (buffered() < kFrameHeaderBytes) return Result::kNeedMore;
  const uint32_t length = FrameLength(reinterpret_cast<const unsigned char*>(buffer_.data() + start_));
  if (length > max_frame_) {
    failed_ = true;
    *why = "frame of " + std::to_string(length) + " bytes is over the limit of " +
           std::to_string(max_frame_);
    return Result::kTooLarge;
  }
  if (buffered() < kFrameHeaderBytes + length) return Result::kNeedMore;
  *why = DecodePayload(buffer_.data() + start_ + kFrameHeaderBytes, length, message);
  start_ += kFrameHeaderBytes + length;
  if (!why->empty()) {
    failed_ = true;
    return Result::kMalformed;
  }
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  return Result::kMessage;
}

}  // namespace sparktorch
