// Writes the seed frames of corpus/frame/ into the directory given: a valid stream of every
// message kind, single frames the server sees first, and the two ways a frame is refused.
// Seeds only steer the fuzzer; it finds the rest itself.
//
// Usage: make_frame_seeds DIR

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "formats/frame.h"

namespace {

using sparktorch::ps::Message;

bool Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return static_cast<bool>(out);
}

std::string Frame(const Message& message) {
  std::string out;
  sparktorch::AppendFrame(message, &out);
  return out;
}

Message Hello() {
  Message m;
  auto* hello = m.mutable_hello();
  hello->set_protocol(1);
  hello->set_worker(1);
  hello->set_world_size(4);
  hello->set_job("-");
  hello->set_host("worker-1/8b2f0c6e");
  hello->set_nonce("7f3a09c1d2e4b5a6978877665544332f");
  hello->set_mac(std::string(64, 'f'));
  hello->set_worker_info(R"({"row_format":{"kind":"csv"}})");
  return m;
}

Message Push() {
  Message m;
  auto* push = m.mutable_push();
  push->set_base_version(7);
  push->set_rows(32);
  const float gradients[4] = {0.5f, -1.0f, 0.0f, 3.25f};
  push->set_gradients(std::string(reinterpret_cast<const char*>(gradients), sizeof gradients));
  push->set_loss(0.25);
  push->set_release_lock(true);
  return m;
}

std::string EveryKind() {
  std::vector<Message> m(12);
  m[0].mutable_challenge()->set_protocol(1);
  m[0].mutable_challenge()->set_nonce("00112233445566778899aabbccddeeff");
  m[1] = Hello();
  m[2].mutable_welcome()->set_mac("ab");
  m[2].mutable_welcome()->set_model("PK");
  m[2].mutable_welcome()->set_num_parameters(4);
  m[2].mutable_welcome()->set_pull_every(2);
  m[2].mutable_welcome()->set_worker(1);
  m[3].mutable_refused()->set_reason("worker 1 was lost earlier in this job (connection closed)");
  m[3].mutable_refused()->set_lost(true);
  m[3].mutable_refused()->set_worker(1);
  m[3].mutable_refused()->set_lost_reason("connection closed");
  m[4].mutable_pull()->set_acquire_lock(true);
  m[5].mutable_weights()->set_version(8);
  m[5].mutable_weights()->set_data(std::string(16, '\0'));
  m[6] = Push();
  m[7].mutable_push_ack()->set_version(8);
  m[7].mutable_push_ack()->set_applied(true);
  m[8].mutable_epoch_report()->set_epoch(1);
  m[8].mutable_epoch_report()->set_train_loss(0.5);
  m[8].mutable_epoch_report()->set_epochs(10);
  m[9].mutable_epoch_ack()->set_stop(true);
  m[10].mutable_done()->set_summary(R"({"rows":32})");
  m[11].mutable_failed()->set_message("stdin:17: expected 4 features, got 3");
  std::string stream;
  for (const Message& message : m) sparktorch::AppendFrame(message, &stream);
  return stream;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_frame_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const bool ok = Write(dir + "/every-kind", EveryKind()) && Write(dir + "/hello", Frame(Hello())) &&
                  Write(dir + "/push", Frame(Push())) &&
                  Write(dir + "/no-kind", std::string("\0\0\0\0", 4) + Frame(Hello())) &&
                  Write(dir + "/too-large", Frame(Hello()) + std::string("\xff\xff\x7f\x00", 4));
  if (!ok) {
    std::fprintf(stderr, "make_frame_seeds: cannot write into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
