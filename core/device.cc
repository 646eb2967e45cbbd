#include "core/device.h"

#include <dlfcn.h>
#include <malloc.h>

#include <cstdlib>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <spdlog/spdlog.h>

#include "formats/error.h"

namespace sparktorch {
namespace {

bool CudaAvailable() { return at::globalContext().hasCUDA(); }

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

}  // namespace

std::string TaskDevice(const std::string& device, const std::vector<std::string>& gpus) {
  if (gpus.empty()) return device;
  const std::string given =
      "Spark gave this task GPU" + std::string(gpus.size() == 1 ? " " : "s ") + Joined(gpus);
  if (device == "cpu") {
    spdlog::info("{}; --device cpu: training on the CPU", given);
    return device;
  }
  if (device != "cuda" && device != "auto") {
    spdlog::warn("{}; --device {} as given (another task may share that GPU)", given, device);
    return device;
  }
  if (device == "auto" && !CudaAvailable()) {
    spdlog::info("{}; --device auto, but CUDA is not available to this process: training on "
                 "the CPU", given);
    return "cpu";
  }
  const std::string& first = gpus.front();
  const bool number = !first.empty() && first.find_first_not_of("0123456789") == std::string::npos;
  if (number) {
    spdlog::info("{}: --device cuda:{}", given, first);
    return "cuda:" + first;
  }
  ::setenv("CUDA_VISIBLE_DEVICES", Joined(gpus).c_str(), 1);
  spdlog::info("{}: CUDA_VISIBLE_DEVICES={}, --device cuda:0", given, Joined(gpus));
  return "cuda:0";
}

c10::Device ResolveDevice(const std::string& name) {
  if (name == "auto") return CudaAvailable() ? ResolveDevice("cuda") : c10::Device(c10::kCPU);
  if (name != "cpu" && name.rfind("cuda", 0) != 0) {
    throw UsageError("--device " + name + ": expected cpu, cuda, cuda:N or auto");
  }
  c10::Device device(c10::kCPU);
  try {
    device = c10::Device(name);
  } catch (const c10::Error&) {
    throw UsageError("--device " + name + ": expected cpu, cuda, cuda:N or auto");
  }
  if (device.is_cpu()) return device;
  if (!at::globalContext().hasCUDA()) {
    throw DeviceError("--device " + name +
                      ": this LibTorch was built without CUDA, or no CUDA driver or GPU is "
                      "available on this machine; use --device cpu or a CUDA build of LibTorch");
  }
  // hasCUDA() holds here, so the CUDA hooks are loaded and can count devices.
  int count = at::detail::getCUDAHooks().getNumGPUs();
  if (device.has_index() && device.index() >= count) {
    throw DeviceError("--device " + name + ": this machine has " + std::to_string(count) +
                      " CUDA device(s)");
  }
  if (!device.has_index()) device.set_index(0);
  return device;
}

void ConfigureCpu(int threads) {
  // Thresholds above the largest activation buffers of ordinary batches.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  threads = threads < 1 ? 1 : threads;
  at::set_num_threads(threads);
  // Debian's LibTorch calls the system BLAS, and does not pass its thread count on: OpenBLAS
  // would start a thread per core in every process (measured 1.3-1.8x slower with 2 ranks on 2
  // cores). Found at run time, since the system BLAS may be another library.
  using SetThreads = void (*)(int);
  for (const char* name : {"openblas_set_num_threads", "goto_set_num_threads"}) {
    if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, name))) {
      set(threads);
      break;
    }
  }
  try {
    at::set_num_interop_threads(1);
  } catch (const c10::Error&) {
    // Already set, or inter-op work already started: harmless.
  }
}

int DefaultThreads() {
  if (const char* omp = std::getenv("OMP_NUM_THREADS")) {
    int n = std::atoi(omp);
    if (n >= 1) return n;
  }
  return 1;
}

}  // namespace sparktorch
