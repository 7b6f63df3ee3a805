// Host-only helpers of the kernels' launch code (declared in common.cuh).
#include <cuda_runtime.h>

#include <initializer_list>
#include <stdexcept>
#include <string>

void rt_cuda_check_launch(const char * file, int line) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA kernel launch failed at ") + file + ":" + std::to_string(line) + ": " +
                             cudaGetErrorString(err));
  }
}

int rt_cuda_allow_optin_smem(std::initializer_list<const void *> kernels) {
  int dev = 0;
  cudaGetDevice(&dev);
  int optin = 48 * 1024;
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  for (const void * k : kernels) cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  return optin;
}
