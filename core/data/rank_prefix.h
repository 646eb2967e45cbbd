#ifndef SPARKTORCH_CORE_DATA_RANK_PREFIX_H_
#define SPARKTORCH_CORE_DATA_RANK_PREFIX_H_

#include <optional>
#include <string>
#include <vector>

namespace sparktorch {

// The rank that a Spark task's process finds before its rows (`train --rank-from-stdin`).
// Spark's JVM RDD.pipe gives every task the same command line, so the Spark side writes each
// partition's id and a tab before the partition's first row: "3\t1.0,[0.0,0.5]\n...". The
// prefix is not a column of that row.
//
// Reads the prefix, "DIGITS\t" (at most 9 digits), from the file descriptor `fd` one byte at a
// time with read(2), so that every byte after the tab stays in the descriptor for the row
// reader (which opens standard input again through dup). Returns the number, or nullopt when
// the input ends before its first byte: a partition without rows, whose process takes any rank
// that is left over. Throws InputError, naming `input` ("stdin"), when the input does not start
// with the prefix (the message quotes what it found instead), when the number is not below
// `world_size`, or when reading fails. Blocks until the prefix, or the end of the input, has
// arrived.
//
// The prefix may name the GPUs Spark gave the task (TaskContext resources, which the JVM adds
// where the job asked for GPUs): "DIGITS gpu=ADDR[,ADDR...]\t", each ADDR as Spark's discovery
// script gave it (letters, digits, '-', '_', '.', ':' and '/'). They go to `gpus` when it is given.
std::optional<int> ReadRankPrefix(int fd, int world_size, const std::string& input = "stdin",
                                  std::vector<std::string>* gpus = nullptr);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DATA_RANK_PREFIX_H_
