#pragma once
// Kernel launches with programmatic dependent launch (PDL, compute capability 9.0+): a kernel may start while the
// kernel before it on the stream finishes, so its blocks are resident and its weights on their way into L2 when the
// previous results land, instead of paying launch latency after them. A decode step is ~100 short kernels, so the gap
// between two of them is a large share of its time.
//
// The rule every kernel here follows (the simulator checks what it can see of it: every thread of a programmatic
// launch waits, releases only after waiting, and prefetches only device memory):
//   1. before wait_for_prior_grids(): index arithmetic, L2 prefetches (never stale: they bypass L1), and reads
//      through L2 of what was copied in before the step's first kernel, which launches plainly (positions, slots);
//      no other global memory access (the previous kernel may still be reading or writing any buffer);
//   2. release_dependent_grids() only after that wait, so the kernel after this one cannot start before every
//      block here has seen the kernel before it complete: waiting on the previous kernel alone then also orders
//      everything earlier on the stream.
#include <cuda_runtime.h>

#include <utility>

namespace rt_cuda {

/** Whether launches from this host thread use programmatic dependent launch (set by programmatic_scope). */
bool programmatic_launch_on();

/** Turns programmatic launches on or off for this host thread while it lives (a backend step, a test). */
class programmatic_scope {
 public:
  explicit programmatic_scope(bool on);
  ~programmatic_scope();
  programmatic_scope(const programmatic_scope &) = delete;
  programmatic_scope & operator=(const programmatic_scope &) = delete;

 private:
  bool before_;
};

/** Waits until the kernel before this one on the stream has completed and its writes are visible. */
__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(RT_CUDA_SIM)
  ::rt_sim::grid_dependency_wait();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/** Lets the kernel after this one launch once every block of this one has called it (or exited). */
__device__ __forceinline__ void release_dependent_grids() {
#if defined(RT_CUDA_SIM)
  ::rt_sim::release_dependent_grids();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

/** Both, in the order the rule above needs: the start of a kernel that has nothing to prefetch. */
__device__ __forceinline__ void follow_prior_grids() {
  wait_for_prior_grids();
  release_dependent_grids();
}

/** A hint that the 128-byte line at `p` will be read soon: brought into L2, never into L1 (so never stale). */
__device__ __forceinline__ void prefetch_l2(const void * p) {
#if defined(RT_CUDA_SIM)
  ::rt_sim::check_prefetch(p);
#elif defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

#if defined(__CUDACC__) || defined(RT_CUDA_SIM)
/**
 * kernel<<<grid, block, smem, stream>>>(args...), programmatic when this thread's scope says so. Launch errors are
 * left for RT_CUDA_LAUNCH_CHECK, as with <<<>>>; `name` names the kernel in the simulator's reports.
 */
template <typename... P, typename... A>
void launch(const char * name, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
            A &&... args) {
#if defined(RT_CUDA_SIM)
  ::rt_sim::launch l(grid, block, smem, stream);
  l.programmatic = programmatic_launch_on();
  l.run(name, kernel, std::forward<A>(args)...);
#else
  (void)name;
  if (!programmatic_launch_on()) {
    kernel<<<grid, block, smem, stream>>>(std::forward<A>(args)...);
    return;
  }
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
#endif
}
#endif

}  // namespace rt_cuda

/**
 * Whether programmatic dependent launch works on the current device in a captured and replayed graph: compute
 * capability 9.0+, and a probe (one kernel writing, a programmatic one reading after its wait) that gives the right
 * values. Any error is cleared; false then.
 */
bool rt_cuda_programmatic_launch_works(cudaStream_t stream);
