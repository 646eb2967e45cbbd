#include "core/world/world.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

#include <spdlog/spdlog.h>

#include "core/world/mpi_communicator.h"
#include "core/world/tracker.h"
#include "core/files.h"
#include "core/net/errors.h"
#include "core/net/interfaces.h"
#include "core/net/random_hex.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

// Sets what Open MPI's flux component needs to bootstrap through libsparktorch_pmi.so.
// Open MPI reads FLUX_JOB_ID as a 16-bit job family over a 16-bit local job, and its ranks only
// agree on their names when the local job is 1 (as mpirun and `serve` make them); any other job
// id (`serve --job-id 1498728580`) is mapped onto that form, the same on every rank.
uint32_t OpenMpiJobId(uint32_t job_id) {
  if ((job_id & 0xffff) == 1 && (job_id >> 16) >= 1 && (job_id >> 16) <= 0x7ffe) return job_id;
  return ((job_id % 0x7ffe + 1) << 16) | 1;
}

void PrepareMpiEnvironment(const WorldOptions& options, int rank, uint32_t job_id) {
  const std::string job = std::to_string(job_id);
  setenv("FLUX_JOB_ID", std::to_string(OpenMpiJobId(job_id)).c_str(), 1);
  setenv("FLUX_PMI_LIBRARY_PATH", options.pmi_library.c_str(), 1);
  setenv("SPARKTORCH_TRACKER", options.tracker->ToString().c_str(), 1);
  setenv("SPARKTORCH_RANK", std::to_string(rank).c_str(), 1);
  setenv("SPARKTORCH_WORLD_SIZE", std::to_string(options.world_size).c_str(), 1);
  setenv("SPARKTORCH_JOB_ID", job.c_str(), 1);
  // Only the flux component can bootstrap here; choosing it outright turns a missing library
  // into an error instead of a singleton world of one. A user's own setting wins.
  setenv("OMPI_MCA_pmix", "flux", 0);
  // The ranks talk over TCP (the interface that reaches the tracker: ChooseMpiInterface), which
  // is Open MPI's ob1. Left to choose, MPI_Init first loads the cm PML and its fabric libraries
  // (PSM, PSM2 and the InfiniPath driver: 0.25-0.35 s of every rank's start on a machine without
  // that hardware) and then falls back to ob1. A user's own setting wins.
  setenv("OMPI_MCA_pml", "ob1", 0);
  // A rank waiting in the all-reduce busy-polls its transports; on an executor whose cores
  // other work shares (another Spark task, a Python worker) that spin takes the CPU the slower
  // rank needs. Yielding while idle costs nothing measurable on a quiet machine (peers_bench:
  // training 1.72-1.82 s against 1.7-2.3 s) and halves training under load. A user's own
  // setting wins.
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
}

// Open MPI's TCP transport listens on every interface but loopback and tries a peer on any
// address the peer published: a docker bridge with the same address on every host, or a NIC
// that leads nowhere, sends it to itself or into a connect that waits. The interface that
// reaches the tracker reaches the other ranks too (the tracker is how they met), so MPI is
// confined to its subnet, unless the user named the interfaces (Open MPI's own variables).
// Returns which interfaces MPI uses, for messages: "over eth1 (198.18.0.0/24), ...".
std::string ChooseMpiInterface(const std::string& local_address, int rank) {
  for (const char* user : {"OMPI_MCA_btl_tcp_if_include", "OMPI_MCA_btl_tcp_if_exclude"}) {
    if (const char* value = std::getenv(user)) {
      spdlog::info("rank {}: MPI over the interfaces {}={} names", rank, user, value);
      return std::string("over the interfaces ") + user + "=" + value + " names (set by the user)";
    }
  }
  const std::string chosen = "over the interfaces Open MPI chose";
  const std::optional<NetInterface> interface = InterfaceWithAddress(local_address);
  if (!interface) {
    spdlog::warn("rank {}: no interface of this host holds {}, the address that reaches the tracker; "
                 "Open MPI chooses its interfaces (set OMPI_MCA_btl_tcp_if_include to choose)",
                 rank, local_address.empty() ? "?" : local_address);
    return chosen;
  }
  if (interface->loopback) {
    spdlog::info("rank {}: the tracker is on this host ({}): Open MPI chooses its interfaces "
                 "(set OMPI_MCA_btl_tcp_if_include to choose)",
                 rank, interface->name);
    return chosen;
  }
  setenv("OMPI_MCA_btl_tcp_if_include", interface->subnet.c_str(), 1);
  spdlog::info("rank {}: MPI over {} ({} on {}), the interface that reaches the tracker "
               "(OMPI_MCA_btl_tcp_if_include overrides)",
               rank, interface->name, interface->address, interface->subnet);
  return "over " + interface->name + " (" + interface->subnet + "), the interface that reaches the tracker";
}

// What a rank says when MPI's start and its first exchange with every other rank
// (Communicator::Handshake) did not end within `timeout` seconds, `over` the interfaces it used.
std::string NotConnected(int rank, double timeout, const std::string& over) {
  return "Open MPI did not connect rank " + std::to_string(rank) + " to every other rank within " +
         SecondsText(timeout) + ", " + over +
         ": those may not reach the other hosts (a docker bridge, or an interface that leads nowhere); "
         "name the ones that do in OMPI_MCA_btl_tcp_if_include";
}

}  // namespace

std::unique_ptr<World> World::Join(const WorldOptions& options) {
  std::unique_ptr<World> world(new World());
  const bool tracker = options.tracker.has_value();
  const bool sync = options.mode != WorldMode::kLocal && (tracker || options.under_mpirun);
  if (!sync) {
    world->comm_ = std::make_unique<LocalCommunicator>();
    return world;
  }
  world->sync_ = true;

  if (tracker) {
    world->launcher_ = "tracker";
    if (!MpiBuilt()) InitMpi();  // throws the explanation
    TrackerLinkOptions link;
    link.tracker = *options.tracker;
    link.rank = options.any_rank ? kAnyRank : options.rank;
    link.world_size = options.world_size;
    link.job = options.job;
    link.secret = options.secret;
    link.timeout = options.timeout;
    world->link_ = std::make_unique<TrackerLink>(link);
    world->link_->Watch(options.on_abort);
    const int rank = world->link_->rank();
    spdlog::info("rank {} of {}: every rank arrived at the tracker {}; job {}", rank,
                 options.world_size, options.tracker->ToString(), world->link_->job_id());
    if (options.any_rank) {
      spdlog::info("this process has no rows (an empty partition); the tracker gave it rank {}, "
                   "which no other process claimed",
                   rank);
    }
    PrepareMpiEnvironment(options, rank, world->link_->job_id());
    const std::string over = ChooseMpiInterface(world->link_->local_address(), rank);
    world->link_->Expect(After(options.timeout), NotConnected(rank, options.timeout, over));
    world->comm_ = InitMpi();
    if (world->comm_->rank() != rank || world->comm_->world_size() != options.world_size) {
      throw UsageError("MPI made this process rank " + std::to_string(world->comm_->rank()) + " of " +
                       std::to_string(world->comm_->world_size()) + ", not rank " +
                       std::to_string(rank) + " of " + std::to_string(options.world_size) +
                       " (is OMPI_MCA_pmix set to something other than flux?)");
    }
    world->comm_->Handshake();
    world->link_->Connected();
    return world;
  }

  world->launcher_ = "mpirun";
  world->comm_ = InitMpi();
  if (world->comm_->world_size() > 1) {
    world->StartHub(options);
    world->link_->Expect(After(options.timeout),
                         NotConnected(world->comm_->rank(), options.timeout, "over the interfaces Open MPI chose"));
    world->comm_->Handshake();
    world->link_->Connected();
  }
  return world;
}

void World::StartHub(const WorldOptions& options) {
  Communicator& comm = *comm_;
  // Rank 0 runs the liveness hub; the others learn where it is, and its one-off secret, from a
  // broadcast. Ranks on rank 0's host reach it on loopback, the others by its host name.
  char message[1024] = {0};
  if (comm.rank() == 0) {
    TrackerOptions hub;
    hub.listen = Address{"0.0.0.0", 0};
    hub.world_size = comm.world_size();
    hub.secret = RandomHex(16);
    hub.serve_pmi = false;
    hub.rendezvous_timeout = options.timeout;
    auto tracker = std::make_shared<Tracker>(hub);
    std::snprintf(message, sizeof message, "%s %s %d %s", HostKey().c_str(), HostName().c_str(),
                  tracker->port(), hub.secret.c_str());
    std::packaged_task<void()> run([tracker] {
      TrackerOutcome outcome = tracker->Run();
      if (!outcome.ok) spdlog::debug("liveness hub ended: {}", outcome.message);
    });
    hub_done_ = run.get_future();
    hub_ = std::thread(std::move(run));
  }
  comm.Broadcast(message, sizeof message, 0);
  std::istringstream fields(message);
  std::string host_key, host_name, secret;
  int port = 0;
  fields >> host_key >> host_name >> port >> secret;

  TrackerLinkOptions link;
  link.tracker = Address{host_key == HostKey() ? "127.0.0.1" : host_name, port};
  link.rank = comm.rank();
  link.world_size = comm.world_size();
  link.secret = secret;
  link.timeout = options.timeout;
  link_ = std::make_unique<TrackerLink>(link);
  link_->Watch(options.on_abort);
  spdlog::debug("rank {} of {}: linked to rank 0's liveness hub at {}", comm.rank(), comm.world_size(),
                link.tracker.ToString());
}

void World::Finish() {
  if (!sync_) return;
  comm_->Barrier();
  FinalizeMpi();
  finished_ = true;
  if (link_) link_->Done();
  if (hub_.joinable()) hub_.join();  // ends once every rank said it finished
}

void World::Fail(const std::string& message) noexcept {
  try {
    if (link_) link_->Fail(message);
    // Under mpirun the hub lives in this process: give it the moment it needs to pass the
    // message on before the process exits and takes it down.
    if (hub_.joinable() && hub_done_.wait_for(std::chrono::seconds(3)) == std::future_status::ready) {
      hub_.join();
    }
  } catch (...) {
  }
}

void World::ReportEpoch(const std::string& json) noexcept {
  try {
    if (link_) link_->ReportEpoch(json);
  } catch (...) {
  }
}

bool World::SendCheckpoint(int epoch, std::string model_bytes) noexcept {
  if (!link_) return false;
  try {
    link_->SendCheckpointLater(epoch, std::move(model_bytes));
    return true;
  } catch (const std::exception& e) {
    spdlog::warn("the checkpoint after epoch {} did not reach the tracker: {}", epoch, e.what());
    return false;
  }
}

void World::SendModel(const std::string& model_bytes) {
  if (!link_) throw UsageError("no tracker to send the trained model to");
  if (!link_->SendModel(model_bytes)) {
    throw PeerError("the trained model did not reach the tracker: it stopped reading", false);
  }
}

World::~World() {
  link_.reset();
  if (hub_.joinable()) {
    if (hub_done_.valid() && hub_done_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      hub_.join();
    } else {
      hub_.detach();  // the process is about to exit; the hub goes with it
    }
  }
}

}  // namespace sparktorch
