#ifndef SPARKTORCH_CORE_NET_SOCKET_H_
#define SPARKTORCH_CORE_NET_SOCKET_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace sparktorch {

using SteadyTime = std::chrono::steady_clock::time_point;

// An owned file descriptor, closed on destruction. Movable, not copyable.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// A TCP endpoint as users write it: "HOST:PORT" (IPv4 address or name).
struct Address {
  std::string host;
  int port = 0;
  std::string ToString() const { return host + ":" + std::to_string(port); }
};

// Parses "HOST:PORT" with PORT in 0..65535. Throws UsageError naming `what` (a flag) otherwise.
Address ParseAddress(const std::string& text, const std::string& what);

// Binds a TCP socket to `address` (an empty host or "0.0.0.0" is every interface; port 0 picks
// a free port) and listens. Throws RendezvousError "cannot listen on HOST:PORT: why".
Fd Listen(const Address& address);

// An inherited socket that already listens (serve --listen-fd: its caller bound it, and so knew
// the address before this process started): where it is bound. Marks it close-on-exec. Throws
// UsageError naming `flag` when `fd` is not a listening IPv4 TCP socket.
Address ListeningAddress(int fd, const std::string& flag);

// The port a bound socket got.
int LocalPort(int fd);

// "ADDR:PORT" of the other end of a connected socket, for messages.
std::string PeerName(int fd);

// The local IPv4 address a connected socket uses ("198.18.0.2"), or "" if it has none.
std::string LocalAddress(int fd);

// Makes the kernel end a connection whose peer stopped answering (host down, network cut) after
// about `millis`, whatever the process does meanwhile: keep-alive probes every second while the
// connection is idle, and a limit on how long sent data may stay unacknowledged. The read that
// waits on such a connection then fails with ETIMEDOUT (LineChannel::timed_out).
void DetectDeadPeer(int fd, int millis);

// After how long DetectDeadPeer's connections count a peer that stopped acknowledging as gone:
// the tracker's links and the parameter server's connections. With a ping every second, a cut
// link ends the job within about 3.5 s.
constexpr int kDeadPeerMillis = 2500;

// Connects to `address`, retrying with backoff while the address refuses or cannot be reached,
// until `deadline`. Throws RendezvousError "cannot reach WHAT at HOST:PORT: why" after that.
Fd Connect(const Address& address, SteadyTime deadline, const std::string& what);

// This machine's host name.
std::string HostName();

// A string naming this machine, without spaces: the host name and the kernel's boot id (two
// containers with one host name differ; the ranks of one machine agree).
std::string HostKey();

// A connection that carries lines of text ('\n'-terminated, at most kMaxLineBytes). Reads are
// buffered; writes are whole lines. One thread reads; writes may come from another thread only
// if the caller serialises them.
class LineChannel {
 public:
  static constexpr size_t kMaxLineBytes = 1 << 20;
  enum class Status { kLine, kClosed, kTimeout };

  LineChannel() = default;
  explicit LineChannel(Fd fd) : fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }
  bool open() const { return fd_.valid(); }
  void Close() { fd_.reset(); }

  // Waits until `deadline` for a whole line (without its '\n'). kClosed: the peer closed the
  // connection, it failed, or it sent a line longer than kMaxLineBytes.
  Status ReadLine(std::string* line, SteadyTime deadline);

  // For poll loops: reads the bytes that are ready without blocking. Returns false when the
  // connection is closed or broken (or a line grew past kMaxLineBytes).
  bool Fill();
  // Takes one complete buffered line, if there is one.
  bool TakeLine(std::string* line);
  // After Fill or ReadLine found the connection broken: whether it broke because the peer stopped
  // acknowledging (ETIMEDOUT: its host went down or the network was cut; see DetectDeadPeer).
  bool timed_out() const { return timed_out_; }

  // Writes `line` and a '\n', waiting at most until `deadline`. Returns false when the peer is
  // gone or the deadline passed. Never raises SIGPIPE.
  bool WriteLine(std::string_view line, SteadyTime deadline);

 private:
  Fd fd_;
  std::string buffer_;
  bool timed_out_ = false;
};

// Whole-buffer I/O with a deadline, for framed protocols. Never raises SIGPIPE.
enum class IoStatus { kOk, kClosed, kTimeout };
// Reads exactly `size` bytes. kClosed: the peer closed the connection (or it failed) first.
IoStatus ReadFully(int fd, void* data, size_t size, SteadyTime deadline);
// Writes all `size` bytes.
IoStatus WriteFully(int fd, const void* data, size_t size, SteadyTime deadline);

// `seconds` as messages about timeouts write them: "120 s", "0.5 s".
std::string SecondsText(double seconds);

// now + `seconds`, for the deadlines above.
SteadyTime After(double seconds);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_NET_SOCKET_H_
