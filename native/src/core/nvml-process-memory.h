#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rt {

/**
 * This process's memory on one GPU, from NVML's per-process accounting. NVML ships with the driver, not the toolkit,
 * so it is loaded at run time and its absence is not an error. bytes() is nullopt, with why_unavailable() saying why,
 * when NVML cannot tell: no library, a bus id it does not know, this process not in its list (a container's PID
 * namespace), or a driver that does not account memory per process (Windows WDDM reports "not available").
 */
class nvml_process_memory {
 public:
  /** `pci_bus_id` as cudaDeviceGetPCIBusId writes it; `library` is a path or a name for the system's loader. */
  explicit nvml_process_memory(std::string pci_bus_id, std::string library = default_library());
  ~nvml_process_memory();
  nvml_process_memory(const nvml_process_memory &) = delete;
  nvml_process_memory & operator=(const nvml_process_memory &) = delete;

  std::optional<uint64_t> bytes();
  const std::string & why_unavailable() const { return why_; }

  /** The driver's NVML: nvml.dll on Windows, libnvidia-ml.so.1 elsewhere; HORIZON_NVML_LIBRARY overrides it. */
  static std::string default_library();

 private:
  using list_fn = int (*)(void * device, unsigned int * count, void * infos);

  void * lib_ = nullptr;
  void * device_ = nullptr;
  list_fn list_ = nullptr;
  int (*shutdown_)() = nullptr;
  uint32_t pid_ = 0;
  std::string why_;
};

}  // namespace rt
