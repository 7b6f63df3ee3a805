#pragma once
#include <string>
#include <vector>

namespace rt {

/** One CUDA device as reported by the driver; empty list means the CPU backend is used. */
struct device_info {
  int index = 0;
  std::string name;
  size_t total_memory_bytes = 0;
  size_t free_memory_bytes = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int driver_version = 0;  // CUDA driver API version, e.g. 13000
};

/** Result of probing for CUDA devices; `error` explains why the list is empty. */
struct device_probe {
  bool cuda_compiled = false;
  std::vector<device_info> devices;
  std::string error;
  /** The CPU backend's INT4 kernel path on this host: "scalar", "avx2", "avx-vnni" or "avx512-vnni". */
  std::string cpu_isa;
};

device_probe rt_device_probe();

/**
 * Why CUDA cannot be used, in words a user can act on. Versions as CUDA encodes them (1000 * major + 10 * minor); a
 * driver version of 0 means no NVIDIA driver was found. `insufficient_driver`: the runtime said the driver is too old.
 */
std::string cuda_unavailable_reason(const std::string & error, bool insufficient_driver, int driver_version,
                                    int runtime_version);

}  // namespace rt
