#include "core/net/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "core/net/errors.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

int MillisUntil(SteadyTime deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left.count(), 1 << 30)));
}

// Resolves host (empty: any) to an IPv4 socket address. Returns an error text, or "" on success.
std::string Resolve(const Address& address, sockaddr_in* out) {
  std::memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  out->sin_port = htons(static_cast<uint16_t>(address.port));
  if (address.host.empty() || address.host == "0.0.0.0" || address.host == "*") {
    out->sin_addr.s_addr = htonl(INADDR_ANY);
    return "";
  }
  if (inet_pton(AF_INET, address.host.c_str(), &out->sin_addr) == 1) return "";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(address.host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found) return std::string("cannot resolve host name: ") + gai_strerror(rc);
  out->sin_addr = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
  freeaddrinfo(found);
  return "";
}

void SetCloexecNodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string SecondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

SteadyTime After(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

Address ParseAddress(const std::string& text, const std::string& what) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) {
    throw UsageError(what + " " + text + ": expected HOST:PORT");
  }
  Address address;
  address.host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    throw UsageError(what + " " + text + ": the port must be a number in 0..65535");
  }
  address.port = std::stoi(port);
  return address;
}

Fd Listen(const Address& address) {
  sockaddr_in addr;
  std::string problem = Resolve(address, &addr);
  if (!problem.empty()) throw RendezvousError("cannot listen on " + address.ToString() + ": " + problem);
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) throw RendezvousError("cannot create a socket: " + std::string(std::strerror(errno)));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd.get(), 128) != 0) {
    throw RendezvousError("cannot listen on " + address.ToString() + ": " + std::strerror(errno));
  }
  return fd;
}

Address ListeningAddress(int fd, const std::string& flag) {
  int accepting = 0, type = 0;
  socklen_t length = sizeof accepting;
  sockaddr_in addr{};
  socklen_t addr_length = sizeof addr;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) != 0) {
    throw UsageError(flag + " " + std::to_string(fd) + ": not a listening IPv4 TCP socket: " +
                     std::strerror(errno));
  }
  length = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM || !accepting ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_length) != 0 || addr.sin_family != AF_INET) {
    throw UsageError(flag + " " + std::to_string(fd) + ": not a listening IPv4 TCP socket");
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &addr.sin_addr, text, sizeof text);
  return Address{text, ntohs(addr.sin_port)};
}

int LocalPort(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  return ntohs(addr.sin_port);
}

std::string PeerName(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char text[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &addr.sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(addr.sin_port));
}

std::string LocalAddress(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || addr.sin_family != AF_INET) return "";
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &addr.sin_addr, text, sizeof text);
  return text;
}

void DetectDeadPeer(int fd, int millis) {
  int on = 1, idle = 1, interval = 1, probes = std::max(1, millis / 1000);
  unsigned int user_timeout_ms = static_cast<unsigned int>(millis);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

std::string HostName() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::string HostKey() {
  std::string boot_id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot_id;
  std::string key = HostName() + "/" + (boot_id.empty() ? "-" : boot_id);
  for (char& c : key) {
    if (c == ' ' || c == '\n' || c == '\t') c = '_';
  }
  return key;
}

Fd Connect(const Address& address, SteadyTime deadline, const std::string& what) {
  std::string last = "timed out";
  int backoff_ms = 20;
  for (;;) {
    sockaddr_in addr;
    std::string problem = Resolve(address, &addr);
    if (problem.empty()) {
      Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
      if (!fd.valid()) throw RendezvousError("cannot create a socket: " + std::string(std::strerror(errno)));
      int rc = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
      if (rc != 0 && errno == EINPROGRESS) {
        pollfd p{fd.get(), POLLOUT, 0};
        rc = ::poll(&p, 1, std::max(1, MillisUntil(deadline)));
        int err = ETIMEDOUT;
        socklen_t len = sizeof err;
        if (rc == 1) getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      }
      if (rc == 0) {
        int flags = fcntl(fd.get(), F_GETFL);
        fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
        SetCloexecNodelay(fd.get());
        return fd;
      }
      last = std::strerror(errno);
    } else {
      last = problem;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(backoff_ms, MillisUntil(deadline) + 1)));
    backoff_ms = std::min(backoff_ms * 2, 1000);
  }
  throw RendezvousError("cannot reach " + what + " at " + address.ToString() + ": " + last);
}

bool LineChannel::Fill() {
  char chunk[65536];
  for (;;) {
    ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      if (buffer_.size() > kMaxLineBytes && buffer_.find('\n') == std::string::npos) return false;
      if (static_cast<size_t>(n) < sizeof chunk) return true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno == ETIMEDOUT) timed_out_ = true;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

bool LineChannel::TakeLine(std::string* line) {
  size_t end = buffer_.find('\n');
  if (end == std::string::npos) return false;
  line->assign(buffer_, 0, end);
  buffer_.erase(0, end + 1);
  return true;
}

LineChannel::Status LineChannel::ReadLine(std::string* line, SteadyTime deadline) {
  for (;;) {
    if (TakeLine(line)) return Status::kLine;
    if (!fd_.valid()) return Status::kClosed;
    pollfd p{fd_.get(), POLLIN, 0};
    int rc = ::poll(&p, 1, MillisUntil(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) return Status::kTimeout;
    if (rc < 0 || !Fill()) {
      if (TakeLine(line)) return Status::kLine;  // the peer's last words before it closed
      return Status::kClosed;
    }
  }
}

bool LineChannel::WriteLine(std::string_view line, SteadyTime deadline) {
  if (!fd_.valid()) return false;
  std::string data(line);
  data += '\n';
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd_.get(), data.data() + sent, data.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_.get(), POLLOUT, 0};
      if (::poll(&p, 1, MillisUntil(deadline)) <= 0) return false;
      continue;
    }
    return false;
  }
  return true;
}

IoStatus ReadFully(int fd, void* data, size_t size, SteadyTime deadline) {
  char* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::recv(fd, p + got, size - got, MSG_DONTWAIT);
    if (n > 0) {
      got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return IoStatus::kClosed;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return IoStatus::kClosed;
    pollfd pf{fd, POLLIN, 0};
    int rc = ::poll(&pf, 1, MillisUntil(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) return IoStatus::kTimeout;
    if (rc < 0) return IoStatus::kClosed;
  }
  return IoStatus::kOk;
}

IoStatus WriteFully(int fd, const void* data, size_t size, SteadyTime deadline) {
  const char* p = static_cast<const char*>(data);
  size_t sent = 0;
  while (sent < size) {
    ssize_t n = ::send(fd, p + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return IoStatus::kClosed;
    pollfd pf{fd, POLLOUT, 0};
    int rc = ::poll(&pf, 1, MillisUntil(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) return IoStatus::kTimeout;
    if (rc < 0) return IoStatus::kClosed;
  }
  return IoStatus::kOk;
}

}  // namespace sparktorch
