#include "formats/frame.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace sparktorch {
namespace {

using Result = FrameDecoder::Result;

// A frame header announcing `length` bytes, then `payload` (which may disagree with it).
std::string RawFrame(uint32_t length, const std::string& payload) {
  std::string frame(kFrameHeaderBytes, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>(length >> (8 * i));
  return frame + payload;
}

std::string Frame(const ps::Message& message) {
  std::string out;
  AppendFrame(message, &out);
  return out;
}

// A Push whose gradients are the raw bytes of `n` floats, as workers send them.
ps::Message Push(int n) {
  std::vector<float> gradients(n);
  for (int i = 0; i < n; ++i) gradients[i] = 0.25f * static_cast<float>(i) - 3.0f;
  ps::Message message;
  ps::Push* push = message.mutable_push();
  push->set_base_version(41);
  push->set_rows(128);
  push->set_gradients(std::string(reinterpret_cast<const char*>(gradients.data()),
                                  gradients.size() * sizeof(float)));
  push->set_loss(0.6931);
  push->set_release_lock(true);
  return message;
}

ps::Message Hello() {
  ps::Message message;
  ps::Hello* hello = message.mutable_hello();
  hello->set_protocol(1);
  hello->set_worker(3);
  hello->set_world_size(8);
  hello->set_job("-");
  hello->set_host("worker-3/8b2f0c6e");
  hello->set_nonce("7f3a09c1d2e4b5a6978877665544332f");
  hello->set_mac(std::string(64, 'a'));
  hello->set_worker_info(R"({"row_format":{"kind":"csv"}})");
  return message;
}

// One message of every kind, in field-number order.
std::vector<ps::Message> EveryKind() {
  std::vector<ps::Message> messages(12);
  messages[0].mutable_challenge()->set_nonce("00ff");
  messages[1] = Hello();
  messages[2].mutable_welcome()->set_model(std::string("PK\3\4\0\xff", 6));
  messages[3].mutable_refused()->set_reason("wrong secret");
  messages[4].mutable_pull()->set_acquire_lock(true);
  messages[5].mutable_weights()->set_data(std::string(40, '\x7f'));
  messages[6] = Push(10);
  messages[7].mutable_push_ack()->set_staleness(2);
  messages[8].mutable_epoch_report()->set_validation_loss(1.5);
  messages[9].mutable_epoch_ack();  // An empty sub-message still sets the kind.
  messages[10].mutable_done()->set_summary(R"({"rows":7})");
  messages[11].mutable_failed()->set_message("stdin:17: expected 784 features, got 12");
  return messages;
}

// Every message `decoder` gives until it needs more bytes; fails the test on an error.
std::vector<ps::Message> Drain(FrameDecoder* decoder) {
  std::vector<ps::Message> out;
  ps::Message message;
  std::string why;
  Result result;
  while ((result = decoder->Next(&message, &why)) == Result::kMessage) out.push_back(message);
  EXPECT_EQ(result, Result::kNeedMore) << why;
  return out;
}

TEST(Frame, FrameLengthIsLittleEndian) {
  const unsigned char header[] = {0x01, 0x02, 0x03, 0x04};
  EXPECT_EQ(FrameLength(header), 0x04030201u);
  const unsigned char max[] = {0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(FrameLength(max), 0xffffffffu);
  const unsigned char small[] = {0x2a, 0, 0, 0};
  EXPECT_EQ(FrameLength(small), 42u);
}

TEST(Frame, AppendFrameAppendsHeaderAndPayload) {
  const ps::Message hello = Hello();
  std::string out = "xy";
  AppendFrame(hello, &out);
  ASSERT_EQ(out.size(), 2 + kFrameHeaderBytes + hello.ByteSizeLong());
  EXPECT_EQ(out.substr(0, 2), "xy");
  EXPECT_EQ(FrameLength(reinterpret_cast<const unsigned char*>(out.data() + 2)),
            hello.ByteSizeLong());
  EXPECT_EQ(out.substr(2 + kFrameHeaderBytes), hello.SerializeAsString());
}

TEST(FrameDecoder, RoundTripsAPushWithRawFloats) {
  const ps::Message sent = Push(1000);
  FrameDecoder decoder(4 * 1000 + kFrameOverhead);
  const std::string frame = Frame(sent);
  decoder.Feed(frame.data(), frame.size());
  ps::Message got;
  std::string why;
  ASSERT_EQ(decoder.Next(&got, &why), Result::kMessage) << why;
  EXPECT_EQ(why, "");
  ASSERT_EQ(got.kind_case(), ps::Message::kPush);
  EXPECT_EQ(got.push().base_version(), 41u);
  EXPECT_EQ(got.push().rows(), 128);
  EXPECT_EQ(got.push().loss(), 0.6931);
  EXPECT_TRUE(got.push().release_lock());
  ASSERT_EQ(got.push().gradients().size(), 4000u);
  EXPECT_EQ(got.push().gradients(), sent.push().gradients());
  float last;
  std::memcpy(&last, got.push().gradients().data() + 4 * 999, 4);
  EXPECT_EQ(last, 0.25f * 999 - 3.0f);
  EXPECT_EQ(decoder.buffered(), 0u);
  EXPECT_EQ(decoder.Next(&got, &why), Result::kNeedMore);
}

TEST(FrameDecoder, RoundTripsAHello) {
  const ps::Message sent = Hello();
  FrameDecoder decoder(kMaxHandshakeFrame);
  const std::string frame = Frame(sent);
  decoder.Feed(frame.data(), frame.size());
  ps::Message got;
  std::string why;
  ASSERT_EQ(decoder.Next(&got, &why), Result::kMessage) << why;
  ASSERT_EQ(got.kind_case(), ps::Message::kHello);
  EXPECT_EQ(got.hello().worker(), 3);
  EXPECT_EQ(got.hello().world_size(), 8);
  EXPECT_EQ(got.hello().host(), "worker-3/8b2f0c6e");
  EXPECT_EQ(got.hello().mac(), std::string(64, 'a'));
  EXPECT_EQ(got.hello().worker_info(), sent.hello().worker_info());
  EXPECT_EQ(got.SerializeAsString(), sent.SerializeAsString());
}

TEST(FrameDecoder, RoundTripsEveryKind) {
  std::string stream;
  for (const ps::Message& message : EveryKind()) AppendFrame(message, &stream);
  FrameDecoder decoder(kMaxHandshakeFrame);
  decoder.Feed(stream.data(), stream.size());
  const std::vector<ps::Message> got = Drain(&decoder);
  const std::vector<ps::Message> sent = EveryKind();
  ASSERT_EQ(got.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(got[i].kind_case(), sent[i].kind_case()) << i;
    EXPECT_STREQ(MessageKindName(got[i]), MessageKindName(sent[i]));
    EXPECT_EQ(got[i].SerializeAsString(), sent[i].SerializeAsString()) << i;
  }
}

TEST(FrameDecoder, FramesFedOneByteAtATimeComeOutInOrder) {
  std::string stream;
  AppendFrame(Hello(), &stream);
  AppendFrame(Push(3), &stream);
  ps::Message failed;
  failed.mutable_failed()->set_message("out of memory");
  AppendFrame(failed, &stream);
  FrameDecoder decoder(kMaxHandshakeFrame);
  std::vector<ps::Message> got;
  for (char byte : stream) {
    decoder.Feed(&byte, 1);
    for (ps::Message& message : Drain(&decoder)) got.push_back(message);
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].kind_case(), ps::Message::kHello);
  EXPECT_EQ(got[1].kind_case(), ps::Message::kPush);
  EXPECT_EQ(got[1].push().gradients(), Push(3).push().gradients());
  EXPECT_EQ(got[2].failed().message(), "out of memory");
  EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(FrameDecoder, SplitFrameNeedsMoreThenDecodes) {
  const std::string frame = Frame(Push(100));
  FrameDecoder decoder(kMaxHandshakeFrame);
  ps::Message got;
  std::string why;
  EXPECT_EQ(decoder.Next(&got, &why), Result::kNeedMore);
  decoder.Feed(frame.data(), 2);  // Half a header.
  EXPECT_EQ(decoder.Next(&got, &why), Result::kNeedMore);
  decoder.Feed(frame.data() + 2, 200);  // The header and part of the payload.
  EXPECT_EQ(decoder.Next(&got, &why), Result::kNeedMore);
  EXPECT_EQ(decoder.buffered(), 202u);
  decoder.Feed(frame.data() + 202, frame.size() - 202);
  ASSERT_EQ(decoder.Next(&got, &why), Result::kMessage) << why;
  EXPECT_EQ(got.push().gradients(), Push(100).push().gradients());
  EXPECT_EQ(decoder.Next(&got, &why), Result::kNeedMore);
}

TEST(FrameDecoder, KeepsTheRestOfTheNextFrameBuffered) {
  std::string stream = Frame(Hello());
  const std::string second = Frame(Push(5));
  stream += second.substr(0, 7);
  FrameDecoder decoder(kMaxHandshakeFrame);
  decoder.Feed(stream.data(), stream.size());
  ps::Message got;
  std::string why;
  ASSERT_EQ(decoder.Next(&got, &why), Result::kMessage) << why;
  EXPECT_EQ(got.kind_case(), ps::Message::kHello);
  EXPECT_EQ(decoder.buffered(), 7u);
  EXPECT_EQ(decoder.Next(&got, &why), Result::kNeedMore);
  decoder.Feed(second.data() + 7, second.size() - 7);
  ASSERT_EQ(decoder.Next(&got, &why), Result::kMessage) << why;
  EXPECT_EQ(got.kind_case(), ps::Message::kPush);
}

TEST(FrameDecoder, FrameOfExactlyMaxFrameIsAccepted) {
  const std::string frame = Frame(Hello());
  const uint32_t length = static_cast<uint32_t>(frame.size() - kFrameHeaderBytes);
  FrameDecoder decoder(length);
  decoder.Feed(frame.data(), frame.size());
  ps::Message got;
  std::string why;
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMessage) << why;
}

TEST(FrameDecoder, HeaderOverMaxFrameIsTooLarge) {
  FrameDecoder decoder(100);
  // The header alone decides: the decoder must not wait for 101 bytes it would refuse.
  const std::string header = RawFrame(101, "");
  decoder.Feed(header.data(), header.size());
  ps::Message got;
  std::string why;
  EXPECT_EQ(decoder.Next(&got, &why), Result::kTooLarge);
  EXPECT_EQ(why, "frame of 101 bytes is over the limit of 100");
}

TEST(FrameDecoder, HugeHeaderIsTooLarge) {
  FrameDecoder decoder(kMaxHandshakeFrame);
  const std::string frame = RawFrame(0xffffffffu, "abc");
  decoder.Feed(frame.data(), frame.size());
  ps::Message got;
  std::string why;
  EXPECT_EQ(decoder.Next(&got, &why), Result::kTooLarge);
  EXPECT_EQ(why, "frame of 4294967295 bytes is over the limit of 65536");
}

TEST(FrameDecoder, RaisedMaxFrameAdmitsLargerFrames) {
  const std::string frame = Frame(Push(20000));  // 80,000 bytes of gradients.
  FrameDecoder decoder(kMaxHandshakeFrame);
  decoder.set_max_frame(4 * 20000 + kFrameOverhead);
  decoder.Feed(frame.data(), frame.size());
  ps::Message got;
  std::string why;
  ASSERT_EQ(decoder.Next(&got, &why), Result::kMessage) << why;
  EXPECT_EQ(got.push().gradients().size(), 80000u);
}

TEST(FrameDecoder, GarbagePayloadIsMalformed) {
  // Field 1 (challenge) announces 5 bytes of sub-message but only 1 follows.
  const std::string frame = RawFrame(3, std::string("\x0a\x05\x01", 3));
  FrameDecoder decoder(kMaxHandshakeFrame);
  decoder.Feed(frame.data(), frame.size());
  ps::Message got;
  std::string why;
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMalformed);
  EXPECT_EQ(why, "malformed message (3 bytes that are not a sparktorch.ps.Message)");
}

TEST(FrameDecoder, EmptyPayloadHasNoKind) {
  const std::string frame = RawFrame(0, "");
  FrameDecoder decoder(kMaxHandshakeFrame);
  decoder.Feed(frame.data(), frame.size());
  ps::Message got;
  std::string why;
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMalformed);
  EXPECT_EQ(why, "message of no known kind (0 bytes)");
}

TEST(FrameDecoder, UnknownFieldsAloneHaveNoKind) {
  // Field 15 as a varint: valid protobuf, but none of Message's kinds. A newer peer's message
  // would look like this.
  const std::string frame = RawFrame(2, std::string("\x78\x01", 2));
  FrameDecoder decoder(kMaxHandshakeFrame);
  decoder.Feed(frame.data(), frame.size());
  ps::Message got;
  std::string why;
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMalformed);
  EXPECT_EQ(why, "message of no known kind (2 bytes)");
}

TEST(FrameDecoder, MessagesBeforeABadFrameStillComeOut) {
  std::string stream = Frame(Hello()) + RawFrame(0, "") + Frame(Hello());
  FrameDecoder decoder(kMaxHandshakeFrame);
  decoder.Feed(stream.data(), stream.size());
  ps::Message got;
  std::string why;
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMessage) << why;
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMalformed);
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMalformed);
  EXPECT_EQ(why, "the stream already failed");
}

TEST(FrameDecoder, StaysFailedAfterMalformed) {
  FrameDecoder decoder(kMaxHandshakeFrame);
  const std::string bad = RawFrame(0, "");
  decoder.Feed(bad.data(), bad.size());
  ps::Message got;
  std::string why;
  ASSERT_EQ(decoder.Next(&got, &why), Result::kMalformed);
  const std::string good = Frame(Hello());
  decoder.Feed(good.data(), good.size());
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMalformed);
  EXPECT_EQ(why, "the stream already failed");
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMalformed);
}

TEST(FrameDecoder, StaysFailedAfterTooLarge) {
  FrameDecoder decoder(10);
  const std::string stream = Frame(Hello()) + Frame(Hello());
  decoder.Feed(stream.data(), stream.size());
  ps::Message got;
  std::string why;
  ASSERT_EQ(decoder.Next(&got, &why), Result::kTooLarge);
  // Raising the limit does not revive it: the stream's framing is lost.
  decoder.set_max_frame(kMaxHandshakeFrame);
  EXPECT_EQ(decoder.Next(&got, &why), Result::kMalformed);
  EXPECT_EQ(why, "the stream already failed");
}

TEST(Frame, DecodePayloadParsesAMessage) {
  const std::string payload = Hello().SerializeAsString();
  ps::Message got;
  EXPECT_EQ(DecodePayload(payload.data(), payload.size(), &got), "");
  EXPECT_EQ(got.hello().host(), "worker-3/8b2f0c6e");
  EXPECT_EQ(DecodePayload("\xff", 1, &got),
            "malformed message (1 bytes that are not a sparktorch.ps.Message)");
}

TEST(Frame, MessageKindNameNamesEveryKind) {
  const char* const names[] = {"challenge",    "hello",     "welcome", "refused",
                               "pull",         "weights",   "push",    "push_ack",
                               "epoch_report", "epoch_ack", "done",    "failed"};
  const std::vector<ps::Message> messages = EveryKind();
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_STREQ(MessageKindName(messages[i]), names[i]);
  }
  EXPECT_STREQ(MessageKindName(ps::Message()), "none");
}

}  // namespace
}  // namespace sparktorch
