#include <cstdio>
#include <stdexcept>
#include <string>

#include "cuda/common.cuh"

void rt_cuda_check_launch(const char * file, int line) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA kernel launch failed at ") + file + ":" + std::to_string(line) + ": " +
                             cudaGetErrorString(err));
  }
}
