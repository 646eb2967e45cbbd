// The raw cost of the all-reduce synchronous training makes every step: MPI_Allreduce (sum,
// in place) of COUNT floats, the size of the trainer's flat gradient buffer. Run under mpirun:
//   mpirun -np 2 build/tests/bench/allreduce_bench [COUNT] [ITERATIONS]
// Rank 0 prints the mean, median and 90th percentile in microseconds. Reports numbers; never
// passes or fails on time (tests/bench/sync_bench.sh compares them with the trainer's).
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Default: the 784-256-256-10 MLP's 269,322 parameters and the step's row count.
  const long count = argc > 1 ? std::atol(argv[1]) : 269323;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 2000;
  std::vector<float> buffer(count, 1.0f);
  std::vector<double> micros;
  for (int i = 0; i < iterations + 100; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
    double took = (MPI_Wtime() - start) * 1e6;
    if (i >= 100) micros.push_back(took);  // the first ones set up shared memory
    std::fill(buffer.begin(), buffer.end(), 1.0f);
  }
  std::sort(micros.begin(), micros.end());
  if (rank == 0) {
    double mean = std::accumulate(micros.begin(), micros.end(), 0.0) / micros.size();
    std::printf("allreduce of %ld floats over %d ranks: mean %.1f us, median %.1f us, p90 %.1f us\n",
                count, size, mean, micros[micros.size() / 2], micros[micros.size() * 9 / 10]);
  }
  MPI_Finalize();
  return 0;
}
