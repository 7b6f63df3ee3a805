#include "core/nvml-process-memory.h"

#include <cstdlib>
#include <vector>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#include <unistd.h>
#endif

namespace rt {
namespace {

// From nvml.h (not part of the CUDA toolkit's default install, so the few facts needed are spelled out here).
constexpr int NVML_SUCCESS = 0;
constexpr int NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;

// nvmlProcessInfo_v2_t, which both nvmlDeviceGetComputeRunningProcesses_v3 and _v2 fill.
struct process_info {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

void * open_library(const std::string & name) {
#ifdef _WIN32
  return reinterpret_cast<void *>(LoadLibraryA(name.c_str()));
#else
  return dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
#endif
}

void close_library(void * lib) {
#ifdef _WIN32
  FreeLibrary(static_cast<HMODULE>(lib));
#else
  dlclose(lib);
#endif
}

void * symbol(void * lib, const char * name) {
#ifdef _WIN32
  return reinterpret_cast<void *>(GetProcAddress(static_cast<HMODULE>(lib), name));
#else
  return dlsym(lib, name);
#endif
}

template <typename F>
F fn(void * lib, const char * name) {
  return reinterpret_cast<F>(symbol(lib, name));
}

uint32_t this_pid() {
#ifdef _WIN32
  return static_cast<uint32_t>(GetCurrentProcessId());
#else
  return static_cast<uint32_t>(getpid());
#endif
}

}  // namespace

std::string nvml_process_memory::default_library() {
  const char * env = std::getenv("HORIZON_NVML_LIBRARY");
  if (env != nullptr && *env != '\0') return env;
#ifdef _WIN32
  return "nvml.dll";
#else
  return "libnvidia-ml.so.1";
#endif
}

nvml_process_memory::nvml_process_memory(std::string pci_bus_id, std::string library) : pid_(this_pid()) {
  lib_ = open_library(library);
  if (lib_ == nullptr) {
    why_ = "NVML (" + library + ") could not be loaded";
    return;
  }
  auto init = fn<int (*)()>(lib_, "nvmlInit_v2");
  auto by_bus = fn<int (*)(const char *, void **)>(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
  list_ = fn<list_fn>(lib_, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (list_ == nullptr) list_ = fn<list_fn>(lib_, "nvmlDeviceGetComputeRunningProcesses_v2");
  auto shutdown = fn<int (*)()>(lib_, "nvmlShutdown");
  if (init == nullptr || by_bus == nullptr || list_ == nullptr || shutdown == nullptr) {
    why_ = "NVML (" + library + ") lacks the per-process memory functions (driver too old)";
    list_ = nullptr;
    return;
  }
  if (const int r = init(); r != NVML_SUCCESS) {
    why_ = "NVML (" + library + ") failed to initialise (error " + std::to_string(r) + ")";
    list_ = nullptr;
    return;
  }
  shutdown_ = shutdown;
  if (const int r = by_bus(pci_bus_id.c_str(), &device_); r != NVML_SUCCESS) {
    why_ = "NVML does not know the GPU at PCI bus " + pci_bus_id + " (error " + std::to_string(r) + ")";
    list_ = nullptr;
  }
}

nvml_process_memory::~nvml_process_memory() {
  if (shutdown_ != nullptr) shutdown_();
  if (lib_ != nullptr) close_library(lib_);
}

std::optional<uint64_t> nvml_process_memory::bytes() {
  if (list_ == nullptr) return std::nullopt;
  std::vector<process_info> infos(64);
  // The list can grow between the call that sizes it and the one that fills it; a few tries are plenty.
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned int count = static_cast<unsigned int>(infos.size());
    const int r = list_(device_, &count, infos.data());
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
      infos.resize(static_cast<size_t>(count) + 16);
      continue;
    }
    if (r != NVML_SUCCESS) {
      why_ = "NVML could not list the GPU's processes (error " + std::to_string(r) + ")";
      return std::nullopt;
    }
    // A process can appear once per MIG instance of the device; its memory is the sum.
    bool listed = false;
    uint64_t total = 0;
    for (unsigned int i = 0; i < count && i < infos.size(); ++i) {
      if (infos[i].pid != pid_) continue;
      if (infos[i].used_gpu_memory == NVML_VALUE_NOT_AVAILABLE) {
        why_ = "the driver does not report memory per process";
        return std::nullopt;
      }
      listed = true;
      total += infos[i].used_gpu_memory;
    }
    if (!listed) {
      why_ = "NVML does not list this process (process " + std::to_string(pid_) + ")";
      return std::nullopt;
    }
    why_.clear();
    return total;
  }
  why_ = "NVML's process list kept growing";
  return std::nullopt;
}

}  // namespace rt
