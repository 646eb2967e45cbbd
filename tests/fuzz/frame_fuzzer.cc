// libFuzzer target for the parameter server's frame decoder (formats/frame.h): the bytes a
// worker or a stranger may send before and after authentication.
//
// The input is a byte stream. It is decoded twice: fed in two pieces, split where its first
// byte says, and fed one byte at a time. Both must give the same messages and the same outcome,
// because TCP may cut a stream anywhere. Every decoded message must set a kind, and must survive
// AppendFrame and a second decode unchanged, because the server relays what it decodes.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "formats/frame.h"

namespace {

using sparktorch::FrameDecoder;
using sparktorch::ps::Message;

// Larger than kMaxHandshakeFrame, so that oversized frames and large payloads both happen.
constexpr uint32_t kMaxFrame = 1 << 20;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "frame_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

// What decoding a stream gave: the messages, serialised, then how it ended.
struct Outcome {
  std::vector<std::string> messages;
  FrameDecoder::Result end = FrameDecoder::Result::kNeedMore;
  std::string why;
};

void CheckReencodes(const Message& message) {
  if (message.kind_case() == Message::KIND_NOT_SET) Fail("decoded a message", "with no kind");
  std::string frame;
  sparktorch::AppendFrame(message, &frame);
  // No limit here: the property under test is the encoding, not the size check.
  FrameDecoder decoder(UINT32_MAX);
  decoder.Feed(frame.data(), frame.size());
  Message again;
  std::string why;
  if (decoder.Next(&again, &why) != FrameDecoder::Result::kMessage) {
    Fail("a re-encoded message does not decode", why);
  }
  if (decoder.buffered() != 0) Fail("a re-encoded frame", "left bytes behind");
  if (again.SerializeAsString() != message.SerializeAsString()) {
    Fail("a re-encoded message", std::string(sparktorch::MessageKindName(message)) + " changed");
  }
}

// Takes messages out of `decoder` until it needs more bytes or fails.
bool Drain(FrameDecoder* decoder, Outcome* outcome) {
  Message message;
  for (;;) {
    const FrameDecoder::Result result = decoder->Next(&message, &outcome->why);
    if (result != FrameDecoder::Result::kMessage) {
      outcome->end = result;
      return result == FrameDecoder::Result::kNeedMore;
    }
    CheckReencodes(message);
    outcome->messages.push_back(message.SerializeAsString());
  }
}

Outcome DecodeInTwo(const uint8_t* data, size_t size) {
  const size_t split = size == 0 ? 0 : size * data[0] / 255;
  FrameDecoder decoder(kMaxFrame);
  Outcome outcome;
  decoder.Feed(data, split);
  if (Drain(&decoder, &outcome)) {
    decoder.Feed(data + split, size - split);
    Drain(&decoder, &outcome);
  }
  return outcome;
}

Outcome DecodeByteByByte(const uint8_t* data, size_t size) {
  FrameDecoder decoder(kMaxFrame);
  Outcome outcome;
  for (size_t i = 0; i < size; ++i) {
    decoder.Feed(data + i, 1);
    if (!Drain(&decoder, &outcome)) break;
  }
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Outcome two = DecodeInTwo(data, size);
  const Outcome bytes = DecodeByteByByte(data, size);
  if (two.messages != bytes.messages) {
    Fail("chunking changed the messages", std::to_string(two.messages.size()) + " against " +
                                              std::to_string(bytes.messages.size()));
  }
  if (two.end != bytes.end || two.why != bytes.why) {
    Fail("chunking changed how the stream ended", "\"" + two.why + "\" against \"" + bytes.why + "\"");
  }
  return 0;
}
