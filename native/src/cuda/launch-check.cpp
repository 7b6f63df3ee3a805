// Host-only helpers of the kernels' launch code (declared in common.cuh and launch.cuh).
#include <cuda_runtime.h>

#include <initializer_list>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda/launch.cuh"

namespace {
// Dynamic shared memory each kernel may use, per device: CUDA keeps function attributes per device, and models on
// different devices launch from different threads.
std::mutex g_smem_mu;
std::map<std::pair<int, const void *>, int> g_smem_allowed;
std::map<std::pair<int, cudaDeviceAttr>, int> g_attributes;  // per device, asked of the runtime once

// The current device's `attr`, asked once per device; `fallback` when the runtime cannot say.
int cached_attribute(cudaDeviceAttr attr, int fallback) {
  int dev = 0;
  cudaGetDevice(&dev);
  std::lock_guard<std::mutex> lock(g_smem_mu);
  auto [it, added] = g_attributes.try_emplace({dev, attr}, fallback);
  if (added && cudaDeviceGetAttribute(&it->second, attr, dev) != cudaSuccess) {
    it->second = fallback;
    cudaGetLastError();
  }
  return it->second;
}
}  // namespace

void rt_cuda_check_launch(const char * file, int line) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA kernel launch failed at ") + file + ":" + std::to_string(line) + ": " +
                             cudaGetErrorString(err));
  }
}

void rt_cuda_allow_smem(const void * kernel, size_t bytes) {
  int dev = 0;
  cudaGetDevice(&dev);
  std::lock_guard<std::mutex> lock(g_smem_mu);
  auto it = g_smem_allowed.try_emplace({dev, kernel}, 48 * 1024).first;
  if (bytes <= static_cast<size_t>(it->second)) return;
  // A size the device cannot give is left to the launch, which then fails naming the kernel's file and line.
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)) == cudaSuccess) {
    it->second = static_cast<int>(bytes);
  } else {
    cudaGetLastError();
  }
}

int rt_cuda_allow_optin_smem(std::initializer_list<const void *> kernels) {
  const int optin = cached_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, 48 * 1024);
  for (const void * k : kernels) rt_cuda_allow_smem(k, static_cast<size_t>(optin));
  return optin;
}

namespace rt_cuda {

bool mma_available() { return cached_attribute(cudaDevAttrComputeCapabilityMajor, 0) >= 8; }

int sm_count() { return cached_attribute(cudaDevAttrMultiProcessorCount, 1); }

int l2_bytes() { return cached_attribute(cudaDevAttrL2CacheSize, 0); }

namespace {
thread_local bool g_programmatic = false;
}

bool programmatic_launch_on() { return g_programmatic; }

programmatic_scope::programmatic_scope(bool on) : before_(g_programmatic) { g_programmatic = on; }

programmatic_scope::~programmatic_scope() { g_programmatic = before_; }

}  // namespace rt_cuda
