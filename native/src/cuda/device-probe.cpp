#include <cuda_runtime.h>

#include "rt/rt-device.h"

namespace rt {

device_probe rt_cuda_device_probe() {
  device_probe probe;
  probe.cuda_compiled = true;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (err != cudaSuccess) {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    probe.error = cuda_unavailable_reason(cudaGetErrorString(err), err == cudaErrorInsufficientDriver, driver, runtime);
    cudaGetLastError();
    return probe;
  }
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
