#include <cuda_runtime.h>

#include "rt/rt-device.h"

namespace rt {

device_probe rt_cuda_device_probe() {
  device_probe probe;
  probe.cuda_compiled = true;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    probe.error = std::string("no CUDA device: ") + cudaGetErrorString(err);
    cudaGetLastError();
    return probe;
  }
  int driver = 0;
  cudaDriverGetVersion(&driver);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    device_info info;
    info.index = i;
    info.name = prop.name;
    info.total_memory_bytes = prop.totalGlobalMem;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.driver_version = driver;
    size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
      info.free_memory_bytes = free_b;
    }
    probe.devices.push_back(info);
  }
  if (probe.devices.empty()) probe.error = "no CUDA device found";
  return probe;
}

}  // namespace rt
