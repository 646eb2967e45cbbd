#ifndef SPARKTORCH_CORE_DEVICE_H_
#define SPARKTORCH_CORE_DEVICE_H_

#include <string>
#include <vector>

#include <c10/core/Device.h>

namespace sparktorch {

// Parses "cpu", "cuda", "cuda:N" or "auto" (cuda:0 where CUDA is available, else cpu) and checks
// that this build of LibTorch and this machine have the device. Throws UsageError for a malformed name and DeviceError for a device that is not
// there ("cuda requested, but this LibTorch was built without CUDA").
c10::Device ResolveDevice(const std::string& name);

// The --device of a Spark task that Spark gave the GPUs `gpus` (their addresses, as its
// discovery script reported them): "cuda" and "auto" become the first of them (cuda:N for a
// number; for another address, such as a MIG instance's, CUDA_VISIBLE_DEVICES is set to the list
// and the device is cuda:0), "auto" cpu where CUDA is not available; "cpu" and "cuda:N" stay as
// the user gave them. Logs what it chose and why. No GPUs: `device` as it is.
std::string TaskDevice(const std::string& device, const std::vector<std::string>& gpus);

// Prepares this process for CPU tensor work: sets LibTorch's intra-op threads to `threads`
// (>= 1), one inter-op thread, and raises glibc malloc's mmap and trim thresholds so that large
// activation buffers are not mapped and unmapped on every step (measured 1.7-2x on CNN training).
// Call once, early, from the main thread.
void ConfigureCpu(int threads);

// The number of threads to use when the user gave none: OMP_NUM_THREADS when set (Spark sets
// it to spark.task.cpus for the processes of a task), else 1. One thread per rank is the right
// default here: two 1-thread processes beat one 2-thread process.
int DefaultThreads();

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DEVICE_H_
