#pragma once
// CUDA simulator: runs the CUDA backend's own sources on the CPU so that CI, which has no GPU, executes every kernel
// and the backend's stream, event, graph and copy logic. Force-included (before anything else) into the sources of
// src/cuda/, which a build step has rewritten: `k<<<cfg>>>(args)` becomes `::rt_sim::launch(cfg).run("k", k, args)`
// and `extern __shared__ T name[];` becomes a pointer to the block's dynamic shared memory.
//
// What it models: every thread of a block is a fiber, so __syncthreads, __syncwarp and warp shuffles are real
// rendezvous (a barrier some threads never reach is reported as a deadlock, a full-mask warp operation naming a lane
// that exited or does not exist is reported as the undefined behaviour it is on a GPU); launch limits (block size,
// grid size, a block larger than the kernel's __launch_bounds__, dynamic shared memory above 48 KiB without the opt-in
// attribute); device, pinned and pageable memory as separate spaces (a copy whose pointers do not match its kind, or
// that overruns its allocation, fails); streams run lazily, only when something waits for them, so a missing
// synchronisation reads stale data; an event's first query reports "not ready"; stream capture refuses the calls that
// CUDA refuses while a thread captures.
// What it does not model: timing, the memory model of concurrent blocks (blocks run one after another), and
// floating-point differences of the device's math library. It is never presented as GPU execution.
// Environment: RT_CUDA_SIM_CC (compute capability, default 75: the smallest shared memory), RT_CUDA_SIM_MEMORY_MIB
// (device memory, default 8192), RT_CUDA_SIM_PINNED_MAX_BYTES (larger pinned allocations fail), RT_CUDA_SIM_DEVICES,
// RT_CUDA_SIM_ORDER=reverse (blocks, warps and lanes run last to first, so that a missing barrier shows whichever
// thread writes).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

/** Kernel sources test it where the simulator stands in for an instruction it cannot run natively (mma). */
#define RT_CUDA_SIM 1

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __constant__
#define __constant__
#undef __forceinline__
#define __forceinline__ inline
// translate.cmake moves a kernel's __launch_bounds__ into the kernel_prologue call it puts first in its body.
#undef __launch_bounds__
#define __launch_bounds__(...)
// One block runs at a time on a host thread, so a function-local static per host thread is the block's shared memory.
#undef __shared__
#define __shared__ static thread_local

namespace rt_sim {

const uint3 & thread_index();
const uint3 & block_index();
const dim3 & block_dim();
const dim3 & grid_dim();
void * dynamic_shared();
void sync_block();
void sync_warp(unsigned mask);
uint64_t warp_exchange(unsigned mask, uint64_t bits, int src_lane);
/** mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 for the calling warp: every lane of a full warp calls it. */
void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
inline int lane() { return static_cast<int>(thread_index().x & 31u); }

void enqueue_kernel(const char * name, const void * func, dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                    int max_threads, std::function<void()> body, bool programmatic = false);
/**
 * griddepcontrol.wait. Blocks run one after another here, so the wait itself has nothing to wait for; what is checked
 * is the rule of src/cuda/launch.cuh: every thread of a programmatic launch waits before it ends.
 */
void grid_dependency_wait();
/** griddepcontrol.launch_dependents: checked to come after the thread's wait (launch.cuh's rule). */
void release_dependent_grids();
/** prefetch.global.L2: checked to name a byte of device memory. */
void check_prefetch(const void * p);

/**
 * First statement of every kernel (translate.cmake puts it there), with the kernel's __launch_bounds__ (0: none).
 * True only while a launch probes the kernel for that bound: the body then returns before doing anything.
 */
bool kernel_prologue(int max_threads, int min_blocks = 0);
/** The bound `call` (a call of the kernel) reports through kernel_prologue. */
int probe_launch_bounds(const std::function<void()> & call);

struct launch {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
  bool programmatic = false;  // cudaLaunchAttributeProgrammaticStreamSerialization
  launch(dim3 g, dim3 b, size_t s = 0, cudaStream_t st = nullptr) : grid(g), block(b), smem(s), stream(st) {}

  template <typename... P, typename... A>
  void run(const char * name, void (*kernel)(P...), A &&... args) {
    // Kernel parameters are copied at launch, as CUDA does.
    std::tuple<std::decay_t<P>...> params(std::forward<A>(args)...);
    // A GPU refuses a block larger than the kernel's __launch_bounds__, which only its body names here.
    const int max_threads = probe_launch_bounds([&kernel, &params]() { std::apply(kernel, params); });
    enqueue_kernel(name, reinterpret_cast<const void *>(kernel), grid, block, smem, stream, max_threads,
                   [kernel, params]() { std::apply(kernel, params); }, programmatic);
  }
};

/** Kernels run (graph replays included) since the process started whose name begins with `prefix`. */
uint64_t kernel_runs(const char * prefix);

/** Bytes moved by copies since the process started, per direction (host-to-device, device-to-host). */
struct copy_totals {
  uint64_t h2d = 0, d2h = 0, d2d = 0;
};
copy_totals totals();

/** What an injected device fault strikes. */
enum class fault_on { kernel, pinned_h2d };
/**
 * Makes the n-th kernel (or copy from pinned host memory to the device) to run from now on fault with a sticky cudaErrorIllegalAddress: it
 * and all later work do not run, and every later launch, copy, record, wait or synchronise returns the error (as a
 * GPU's context after an illegal access). The environment does the same from process start:
 * RT_CUDA_SIM_FAULT_KERNEL=N, RT_CUDA_SIM_FAULT_PINNED_H2D=N. The fault is the process's for good, as on a GPU.
 */
void inject_fault(fault_on what, uint64_t n);

/** Runs blocks, warps and lanes last to first from now on (true) or first to last (false); RT_CUDA_SIM_ORDER=reverse
 * sets it at process start. */
void set_reverse_order(bool reverse);

}  // namespace rt_sim

#undef threadIdx
#define threadIdx (::rt_sim::thread_index())
#undef blockIdx
#define blockIdx (::rt_sim::block_index())
#undef blockDim
#define blockDim (::rt_sim::block_dim())
#undef gridDim
#define gridDim (::rt_sim::grid_dim())

inline void __syncthreads() { ::rt_sim::sync_block(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::rt_sim::sync_warp(mask); }

template <typename T>
T rt_sim_shuffle(unsigned mask, T v, int src) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffle of a value wider than 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  const uint64_t got = ::rt_sim::warp_exchange(mask, bits, src);
  T out;
  std::memcpy(&out, &got, sizeof(T));
  return out;
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const int lane = ::rt_sim::lane();
  return rt_sim_shuffle(mask, v, (lane & ~(width - 1)) | ((lane ^ lane_mask) & (width - 1)));
}
template <typename T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const int lane = ::rt_sim::lane();
  return rt_sim_shuffle(mask, v, (lane & ~(width - 1)) | (src & (width - 1)));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = ::rt_sim::lane();
  const int in = lane & (width - 1);
  return rt_sim_shuffle(mask, v, in + static_cast<int>(delta) < width ? lane + static_cast<int>(delta) : lane);
}

template <typename T>
T __ldg(const T * p) {
  return *p;
}
template <typename T>
T __ldcg(const T * p) {
  return *p;
}
// Blocks run one after another, so every write is visible to the blocks that follow.
inline void __threadfence() {}
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline float __uint_as_float(unsigned i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline int __float_as_int(float f) {
  int i;
  std::memcpy(&i, &f, 4);
  return i;
}
// CUDA's __byte_perm: byte n of the result is byte (s >> 4n) & 7 of y:x.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t in = (static_cast<uint64_t>(y) << 32) | x;
  unsigned r = 0;
  for (int n = 0; n < 4; ++n) r |= static_cast<unsigned>((in >> (8 * ((s >> (4 * n)) & 7))) & 0xFFu) << (8 * n);
  return r;
}
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
using std::isfinite;
using std::isinf;
using std::isnan;

// nvcc's C++ overload for kernels (the host compiler only sees the `const void *` one).
template <typename... P>
cudaError_t cudaFuncSetAttribute(void (*kernel)(P...), cudaFuncAttribute attr, int value) {
  return cudaFuncSetAttribute(reinterpret_cast<const void *>(kernel), attr, value);
}

// __ballot_sync through the warp's shuffles: every lane of `mask` calls it, as on a GPU.
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  unsigned v = predicate != 0 ? 1u << ::rt_sim::lane() : 0u;
  for (int o = 16; o > 0; o >>= 1) v |= __shfl_xor_sync(mask, v, o);
  return v & mask;
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
// dp4a: the four signed byte products of a and b added to c.
inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; ++i) {
    c += static_cast<int>(static_cast<int8_t>(static_cast<unsigned>(a) >> (8 * i))) *
         static_cast<int>(static_cast<int8_t>(static_cast<unsigned>(b) >> (8 * i)));
  }
  return c;
}

namespace rt_sim {
/** The float nearest v + e (v + e exact, |e| below half an ulp of v) rounded up (`up`) or down. */
inline float round_directed(double v, double e, bool up) {
  float f = static_cast<float>(v);
  const double d = f;
  if (up && (d < v || (d == v && e > 0))) f = std::nextafter(f, INFINITY);
  if (!up && (d > v || (d == v && e < 0))) f = std::nextafter(f, -INFINITY);
  return f;
}
/** a + b as an unevaluated pair (s, e), exactly (Knuth's two-sum). */
inline void two_sum(double a, double b, double & s, double & e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}
inline float add_directed(float a, float b, bool up) {
  double s, e;
  two_sum(a, b, s, e);
  return round_directed(s, e, up);
}
inline float fma_directed(float a, float b, float c, bool up) {
  double s, e;
  two_sum(static_cast<double>(a) * b, c, s, e);  // a float product is exact in double
  return round_directed(s, e, up);
}
}  // namespace rt_sim

// The directed-rounding intrinsics, from exact double intermediates.
inline float __fadd_ru(float a, float b) { return ::rt_sim::add_directed(a, b, true); }
inline float __fadd_rd(float a, float b) { return ::rt_sim::add_directed(a, b, false); }
inline float __fmul_ru(float a, float b) { return ::rt_sim::round_directed(static_cast<double>(a) * b, 0, true); }
inline float __fmul_rd(float a, float b) { return ::rt_sim::round_directed(static_cast<double>(a) * b, 0, false); }
inline float __fmaf_ru(float a, float b, float c) { return ::rt_sim::fma_directed(a, b, c, true); }
inline float __fmaf_rd(float a, float b, float c) { return ::rt_sim::fma_directed(a, b, c, false); }
inline float __int2float_ru(int i) { return ::rt_sim::round_directed(i, 0, true); }
inline float __int2float_rd(int i) { return ::rt_sim::round_directed(i, 0, false); }

// Fibers switch only at barriers and shuffles, so a plain read-modify-write is atomic here.
template <typename T>
T atomicAdd(T * p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
template <typename T>
T atomicExch(T * p, T v) {
  const T old = *p;
  *p = v;
  return old;
}
template <typename T>
T atomicMax(T * p, T v) {
  const T old = *p;
  if (v > old) *p = v;
  return old;
}
