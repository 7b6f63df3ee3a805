// The probe behind rt_cuda_programmatic_launch_works (launch.cuh): a writer kernel, then a programmatic reader that
// copies what the writer left, captured as a graph and replayed, as a decode step is.
#include <vector>

#include "cuda/common.cuh"

namespace {

constexpr int PROBE_THREADS = 128;
constexpr int PROBE_BLOCKS = 64;
constexpr int PROBE_VALUES = PROBE_THREADS * PROBE_BLOCKS;

__global__ void __launch_bounds__(PROBE_THREADS) probe_write(int * buf, int salt) {
  rt_cuda::follow_prior_grids();
  const int i = static_cast<int>(blockIdx.x) * PROBE_THREADS + static_cast<int>(threadIdx.x);
  buf[i] = i * 7 + salt;
}

__global__ void __launch_bounds__(PROBE_THREADS) probe_read(const int * buf, int * out) {
  rt_cuda::follow_prior_grids();
  const int i = static_cast<int>(PROBE_BLOCKS - 1 - blockIdx.x) * PROBE_THREADS + static_cast<int>(threadIdx.x);
  out[i] = buf[i];
}

}  // namespace

bool rt_cuda_programmatic_launch_works(cudaStream_t stream) {
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (major < 9) return false;
#if !defined(RT_CUDA_SIM)
  // The kernels must run code built for 9.0+: one JIT-compiled from an older PTX target (a device newer than every
  // architecture this binary lists) lacks griddepcontrol.wait and would read before the kernel before it is done.
  cudaFuncAttributes fa{};
  if (cudaFuncGetAttributes(&fa, reinterpret_cast<const void *>(probe_read)) != cudaSuccess || fa.ptxVersion < 90) {
    cudaGetLastError();
    return false;
  }
#endif
  int * buf = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool ok = cudaMalloc(&buf, sizeof(int) * 2 * PROBE_VALUES) == cudaSuccess &&
            cudaMemsetAsync(buf, 0, sizeof(int) * 2 * PROBE_VALUES, stream) == cudaSuccess &&
            cudaStreamSynchronize(stream) == cudaSuccess;
  const int salt = 12345;
  const rt_cuda::programmatic_scope plain(false);
  if (ok && cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    rt_cuda::launch("probe_write", probe_write, PROBE_BLOCKS, PROBE_THREADS, 0, stream, buf, salt);
    {
      const rt_cuda::programmatic_scope on(true);
      rt_cuda::launch("probe_read", probe_read, PROBE_BLOCKS, PROBE_THREADS, 0, stream, buf, buf + PROBE_VALUES);
    }
    ok = cudaGetLastError() == cudaSuccess;
    ok = cudaStreamEndCapture(stream, &graph) == cudaSuccess && ok && graph != nullptr;
  } else {
    ok = false;
  }
  ok = ok && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess && cudaGraphLaunch(exec, stream) == cudaSuccess &&
       cudaStreamSynchronize(stream) == cudaSuccess;
  if (ok) {
    std::vector<int> got(PROBE_VALUES);
    ok = cudaMemcpy(got.data(), buf + PROBE_VALUES, sizeof(int) * PROBE_VALUES, cudaMemcpyDeviceToHost) == cudaSuccess;
    for (int i = 0; ok && i < PROBE_VALUES; ++i) ok = got[static_cast<size_t>(i)] == i * 7 + salt;
  }
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  if (buf != nullptr) cudaFree(buf);
  cudaGetLastError();
  return ok;
}
