// libsparktorch_pmi.so: the PMI-1 client that Open MPI 4's "flux" component loads (from
// FLUX_PMI_LIBRARY_PATH) to bootstrap MPI_COMM_WORLD without mpirun. It talks to the tracker
// (`sparktorch serve`) over TCP with the protocol of core/world/tracker_protocol.h.
//
// `sparktorch train --tracker` sets, before MPI_Init: SPARKTORCH_TRACKER (HOST:PORT),
// SPARKTORCH_RANK, SPARKTORCH_WORLD_SIZE, SPARKTORCH_JOB_ID (the started job's id); the job's
// secret is SPARKTORCH_SECRET, already in the environment. Errors are PMI return codes with a
// line on stderr: Open MPI then fails MPI_Init, and the rank's control link reports it.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/world/tracker_protocol.h"
#include "core/net/socket.h"

#define PMI_API extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSuccess = 0;
constexpr int kFail = -1;
constexpr int kErrInit = 1;
constexpr int kErrInvalidArg = 3;
constexpr int kErrInvalidLength = 8;

// Open MPI sizes its packed values by these; the tracker's lines take much longer ones.
constexpr int kNameMax = 256;
constexpr int kKeyMax = 256;
constexpr int kValueMax = 1024;
// How long one request may wait on the tracker. Liveness is the control link's job; this only
// keeps a dead tracker from holding MPI_Init forever.
constexpr double kRequestSeconds = 3600;

struct PmiState {
  sparktorch::LineChannel channel;
  int rank = 0;
  int size = 1;
  std::string kvs_name;
  std::vector<int> clique;
};

std::unique_ptr<PmiState> state;

void Complain(const std::string& what) {
  std::fprintf(stderr, "sparktorch pmi: %s\n", what.c_str());
}

const char* Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// Sends a request and, when `reply` is given, reads the answer line.
bool Ask(const std::string& request, std::string* reply) {
  if (!state) return false;
  const sparktorch::SteadyTime deadline = sparktorch::After(kRequestSeconds);
  if (!state->channel.WriteLine(request, deadline)) {
    Complain("the tracker went away");
    return false;
  }
  if (!reply) return true;
  if (state->channel.ReadLine(reply, deadline) != sparktorch::LineChannel::Status::kLine) {
    Complain("the tracker went away");
    return false;
  }
  return true;
}

int Connect() {
  try {
    auto s = std::make_unique<PmiState>();
    s->rank = std::atoi(Env("SPARKTORCH_RANK"));
    s->size = std::atoi(Env("SPARKTORCH_WORLD_SIZE"));
    const std::string job = Env("SPARKTORCH_JOB_ID");
    s->kvs_name = "sparktorch-" + job;
    sparktorch::Address tracker = sparktorch::ParseAddress(Env("SPARKTORCH_TRACKER"), "SPARKTORCH_TRACKER");
    const sparktorch::SteadyTime deadline = sparktorch::After(60);
    s->channel = sparktorch::LineChannel(sparktorch::Connect(tracker, deadline, "the tracker"));
    std::string line;
    const std::string greeting = std::string(sparktorch::kTrackerGreeting) + " ";
    if (s->channel.ReadLine(&line, deadline) != sparktorch::LineChannel::Status::kLine ||
        line.rfind(greeting, 0) != 0) {
      Complain(tracker.ToString() + " is not a sparktorch tracker");
      return kFail;
    }
    sparktorch::Hello hello{"pmi", job, s->rank, s->size, sparktorch::HostKey(), ""};
    hello.mac = sparktorch::HelloMac(Env("SPARKTORCH_SECRET"), line.substr(greeting.size()), hello);
    if (!s->channel.WriteLine(sparktorch::FormatHello(hello), deadline) ||
        s->channel.ReadLine(&line, deadline) != sparktorch::LineChannel::Status::kLine || line != "ok") {
      Complain("the tracker refused the MPI bootstrap: " + line);
      return kFail;
    }
    state = std::move(s);
    std::string clique;
    if (!Ask("clique", &clique) || clique.rfind("clique ", 0) != 0) return kFail;
    for (const char* p = clique.c_str() + 7; *p;) {
      state->clique.push_back(std::atoi(p));
      while (*p && *p != ',') ++p;
      if (*p == ',') ++p;
    }
    return kSuccess;
  } catch (const std::exception& e) {
    Complain(e.what());
    state.reset();
    return kFail;
  }
}

int CopyOut(const std::string& text, char* out, int length) {
  if (!out || length <= 0) return kErrInvalidArg;
  if (static_cast<int>(text.size()) >= length) return kErrInvalidLength;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

}  // namespace

PMI_API int PMI_Init(int* spawned) {
  if (spawned) *spawned = 0;
  if (state) return kSuccess;
  return Connect();
}

PMI_API int PMI_Initialized(int* initialized) {
  if (!initialized) return kErrInvalidArg;
  *initialized = state ? 1 : 0;
  return kSuccess;
}

PMI_API int PMI_Finalize() {
  state.reset();
  return kSuccess;
}

PMI_API int PMI_Get_size(int* size) {
  if (!state) return kErrInit;
  *size = state->size;
  return kSuccess;
}

PMI_API int PMI_Get_rank(int* rank) {
  if (!state) return kErrInit;
  *rank = state->rank;
  return kSuccess;
}

PMI_API int PMI_Get_universe_size(int* size) { return PMI_Get_size(size); }

PMI_API int PMI_Get_appnum(int* appnum) {
  *appnum = 0;
  return kSuccess;
}

PMI_API int PMI_Barrier() {
  std::string reply;
  if (!Ask("barrier", &reply)) return kFail;
  return reply == "barrier-done" ? kSuccess : kFail;
}

// Open MPI gives up on this rank (a peer it cannot reach, say) and ends it through PMI, often
// with "N/A" for a message: say so in sparktorch's form, and tell the tracker, which ends the
// other ranks with it. Exit 75, as for any failure of MPI's (its own lines above say more).
PMI_API int PMI_Abort(int exit_code, const char* message) {
  const std::string said = message && *message && std::string(message) != "N/A" ? message : "";
  const std::string why = "Open MPI aborted it (exit " + std::to_string(exit_code) + ")" +
                          (said.empty() ? "; its own messages on the rank's stderr say why" : ": " + said);
  std::fprintf(stderr, "sparktorch: error: rank %s: %s\n",
               state ? std::to_string(state->rank).c_str() : "?", why.c_str());
  std::fflush(stderr);
  Ask("abort " + why, nullptr);
  std::_Exit(75);
}

PMI_API int PMI_KVS_Get_my_name(char* name, int length) {
  if (!state) return kErrInit;
  return CopyOut(state->kvs_name, name, length);
}

PMI_API int PMI_KVS_Get_name_length_max(int* length) {
  *length = kNameMax;
  return kSuccess;
}

PMI_API int PMI_KVS_Get_key_length_max(int* length) {
  *length = kKeyMax;
  return kSuccess;
}

PMI_API int PMI_KVS_Get_value_length_max(int* length) {
  *length = kValueMax;
  return kSuccess;
}

PMI_API int PMI_KVS_Put(const char* kvs, const char* key, const char* value) {
  if (!key || !value || std::strpbrk(key, " \n") || std::strchr(value, '\n')) return kErrInvalidArg;
  return Ask(std::string("put ") + key + " " + value, nullptr) ? kSuccess : kFail;
}

PMI_API int PMI_KVS_Commit(const char* kvs) {
  std::string reply;
  return Ask("commit", &reply) && reply == "ok" ? kSuccess : kFail;
}

PMI_API int PMI_KVS_Get(const char* kvs, const char* key, char* value, int length) {
  std::string reply;
  if (!key || !Ask(std::string("get ") + key, &reply)) return kFail;
  if (reply.rfind("value ", 0) != 0) return kFail;  // absent: Open MPI probes keys that may be
  return CopyOut(reply.substr(6), value, length);
}

PMI_API int PMI_Get_clique_size(int* size) {
  if (!state) return kErrInit;
  *size = static_cast<int>(state->clique.size());
  return kSuccess;
}

PMI_API int PMI_Get_clique_ranks(int* ranks, int length) {
  if (!state) return kErrInit;
  if (length < static_cast<int>(state->clique.size())) return kErrInvalidLength;
  for (size_t i = 0; i < state->clique.size(); ++i) ranks[i] = state->clique[i];
  return kSuccess;
}
