// Host-only: turns the last kernel-launch error into an exception naming the call site (declared in common.cuh).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

void rt_cuda_check_launch(const char * file, int line) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA kernel launch failed at ") + file + ":" + std::to_string(line) + ": " +
                             cudaGetErrorString(err));
  }
}
