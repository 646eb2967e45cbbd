#ifndef SPARKTORCH_CORE_WORLD_MPI_COMMUNICATOR_H_
#define SPARKTORCH_CORE_WORLD_MPI_COMMUNICATOR_H_

#include <memory>

#include "core/world/communicator.h"

namespace sparktorch {

// Whether this build has MPI (CMake option SPARKTORCH_WITH_MPI).
bool MpiBuilt();

// Initialises MPI (MPI_Init_thread, serialized: one thread at a time makes MPI calls) and
// returns MPI_COMM_WORLD as a Communicator. Once per process. Collectives report failures by
// throwing PeerError rather than aborting. Throws UsageError when the build has no MPI.
std::unique_ptr<Communicator> InitMpi();

// MPI_Finalize. Call only after a successful job on every rank: it waits for the other ranks,
// so calling it from a destructor while another rank is stuck would hang this one too.
void FinalizeMpi();

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_WORLD_MPI_COMMUNICATOR_H_
