// The simulator's own checks: what the GPU tests rely on it to model (rendezvous, launch limits, memory spaces,
// lazy streams, events, capture) behaves as CUDA specifies, and what CUDA rejects it rejects. Built only for the
// simulator (translated like src/cuda/*.cu). To add a case, write a function and call it from main().
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/launch.cuh"

static int failures = 0;

static void expect(bool ok, const std::string & what) {
  std::printf("%-64s %s\n", what.c_str(), ok ? "ok" : "FAIL");
  if (!ok) ++failures;
}

namespace {

__global__ void warp_ops_kernel(const int * in, int * out) {
  const int t = threadIdx.x;
  int v = in[t];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int first = __shfl_sync(0xffffffffu, in[t], 0);
  const int below = __shfl_down_sync(0xffffffffu, in[t], 1);
  out[3 * t] = v;
  out[3 * t + 1] = first;
  out[3 * t + 2] = below;
}

__global__ void block_sum_kernel(const float * in, float * out, int n) {
  __shared__ float partial[256];
  extern __shared__ float scratch[];
  const int t = threadIdx.x;
  float s = 0.0f;
  for (int i = t; i < n; i += blockDim.x) s += in[i];
  partial[t] = s;
  scratch[t] = static_cast<float>(blockIdx.x * 1000 + blockIdx.y);
  __syncthreads();
  if (t == 0) {
    float total = 0.0f;
    for (int i = 0; i < static_cast<int>(blockDim.x); ++i) total += partial[i];
    const int b = blockIdx.y * gridDim.x + blockIdx.x;
    out[2 * b] = total;
    out[2 * b + 1] = scratch[blockDim.x - 1];
  }
}

__global__ void add_kernel(int * p, int v) { p[threadIdx.x] += v; }

__global__ void follow_add_kernel(int * p, int v) {
  rt_cuda::follow_prior_grids();
  p[threadIdx.x] += v;
}

__global__ void release_first_kernel(int * p) {
  rt_cuda::release_dependent_grids();
  rt_cuda::wait_for_prior_grids();
  p[threadIdx.x] = 1;
}

// Lane 5 returns early; the others still name it in a full-mask shuffle.
__global__ void exited_lane_shuffle_kernel(int * out) {
  if (threadIdx.x == 5) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, static_cast<int>(threadIdx.x), 1);
}

// Thread 0 publishes a value the block reads with no barrier between: a race on a GPU.
__global__ void unsynchronised_broadcast_kernel(float * out) {
  extern __shared__ float value[];
  if (threadIdx.x == 0) value[0] = 42.0f;
  out[threadIdx.x] = value[0];
}

// Each block reads its dynamic shared memory before writing it, then notes where it ran among the blocks.
__global__ void block_order_kernel(float * first_read, int * position, int * counter) {
  extern __shared__ float scratch[];
  if (threadIdx.x == 0) {
    first_read[blockIdx.x] = scratch[0];
    scratch[0] = static_cast<float>(blockIdx.x);
    position[blockIdx.x] = (*counter)++;
  }
}

__global__ void noop_kernel(int) {}

__global__ void __launch_bounds__(64) bounded_kernel(int * p) { p[threadIdx.x] = 1; }

// Half of a warp waits at __syncthreads while the other half waits to exchange a value with it.
__global__ void divergent_rendezvous_kernel(int * out) {
  if ((threadIdx.x & 31) < 16) {
    __syncthreads();
  } else {
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, static_cast<int>(threadIdx.x), 1);
  }
}

template <typename T>
T * device_copy(const std::vector<T> & h) {
  T * d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(T));
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

template <typename T>
std::vector<T> host_copy(const T * d, size_t n) {
  std::vector<T> h(n);
  cudaDeviceSynchronize();
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

void test_warp_ops() {
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[static_cast<size_t>(i)] = i * i + 1;
  int * din = device_copy(in);
  int * dout = nullptr;
  cudaMalloc(&dout, 64 * 3 * sizeof(int));
  warp_ops_kernel<<<1, 64>>>(din, dout);
  const std::vector<int> out = host_copy(dout, 64 * 3);
  bool sum_ok = true, bcast_ok = true, down_ok = true;
  for (int t = 0; t < 64; ++t) {
    int sum = 0;
    for (int l = 0; l < 32; ++l) sum += in[static_cast<size_t>((t & ~31) + l)];
    sum_ok = sum_ok && out[static_cast<size_t>(3 * t)] == sum;
    bcast_ok = bcast_ok && out[static_cast<size_t>(3 * t + 1)] == in[static_cast<size_t>(t & ~31)];
    const int src = (t & 31) < 31 ? t + 1 : t;
    down_ok = down_ok && out[static_cast<size_t>(3 * t + 2)] == in[static_cast<size_t>(src)];
  }
  expect(sum_ok, "xor-butterfly sum stays within each warp");
  expect(bcast_ok, "__shfl_sync broadcasts lane 0 of each warp");
  expect(down_ok, "__shfl_down_sync reads lane + 1, the last lane keeps its own");
  cudaFree(din);
  cudaFree(dout);
}

void test_block_sync_and_shared() {
  const int n = 1000;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i % 7);
  float * din = device_copy(in);
  float * dout = nullptr;
  cudaMalloc(&dout, 6 * 2 * sizeof(float));
  block_sum_kernel<<<dim3(3, 2), 256, 256 * sizeof(float)>>>(din, dout, n);
  const std::vector<float> out = host_copy(dout, 12);
  float want = 0.0f;
  for (float v : in) want += v;
  bool sums = true, ids = true;
  for (int b = 0; b < 6; ++b) {
    sums = sums && out[static_cast<size_t>(2 * b)] == want;
    ids = ids && out[static_cast<size_t>(2 * b + 1)] == static_cast<float>((b % 3) * 1000 + b / 3);
  }
  expect(sums, "__syncthreads publishes static shared memory to the block");
  expect(ids, "dynamic shared memory and block indices per block of a 3x2 grid");
  cudaFree(din);
  cudaFree(dout);
}

void test_scheduling_order() {
  float * bcast = nullptr;
  cudaMalloc(&bcast, 64 * sizeof(float));
  unsynchronised_broadcast_kernel<<<1, 64, sizeof(float)>>>(bcast);
  const std::vector<float> forward = host_copy(bcast, 64);
  rt_sim::set_reverse_order(true);
  unsynchronised_broadcast_kernel<<<1, 64, sizeof(float)>>>(bcast);
  const std::vector<float> reverse = host_copy(bcast, 64);
  rt_sim::set_reverse_order(false);
  bool forward_hides = true, reverse_shows = true;
  for (int t = 0; t < 64; ++t) {
    forward_hides = forward_hides && forward[static_cast<size_t>(t)] == 42.0f;
    reverse_shows = reverse_shows && (t == 0 ? reverse[0] == 42.0f : std::isnan(reverse[static_cast<size_t>(t)]));
  }
  expect(forward_hides, "(limit) first-to-last order hides a reader after its writer");
  expect(reverse_shows, "last-to-first order shows a broadcast missing __syncthreads");

  float * first_read = nullptr;
  int * position = nullptr;
  int * counter = nullptr;
  cudaMalloc(&first_read, 4 * sizeof(float));
  cudaMalloc(&position, 4 * sizeof(int));
  cudaMalloc(&counter, sizeof(int));
  cudaMemset(counter, 0, sizeof(int));
  rt_sim::set_reverse_order(true);
  block_order_kernel<<<4, 32, sizeof(float)>>>(first_read, position, counter);
  const std::vector<int> pos = host_copy(position, 4);
  rt_sim::set_reverse_order(false);
  block_order_kernel<<<4, 32, sizeof(float)>>>(first_read, position, counter);
  const std::vector<float> fresh = host_copy(first_read, 4);
  expect(pos == std::vector<int>{3, 2, 1, 0}, "last-to-first order runs the last block first");
  bool all_nan = true;
  for (float v : fresh) all_nan = all_nan && std::isnan(v);
  expect(all_nan, "a block's dynamic shared memory starts as garbage, not the last's");
  cudaFree(bcast);
  cudaFree(first_read);
  cudaFree(position);
  cudaFree(counter);
}

void test_launch_limits() {
  cudaGetLastError();
  noop_kernel<<<1, 1025>>>(0);
  expect(cudaGetLastError() == cudaErrorInvalidValue, "a block of 1025 threads is refused");
  noop_kernel<<<dim3(1, 65536), 32>>>(0);
  expect(cudaGetLastError() == cudaErrorInvalidValue, "a grid with y = 65536 is refused");
  noop_kernel<<<1, 32, 60 * 1024>>>(0);
  expect(cudaGetLastError() == cudaErrorInvalidValue, "60 KiB of dynamic shared memory needs the opt-in attribute");
  expect(cudaFuncSetAttribute(noop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 60 * 1024) == cudaSuccess,
         "the opt-in attribute within the device limit is accepted");
  noop_kernel<<<1, 32, 60 * 1024>>>(0);
  expect(cudaGetLastError() == cudaSuccess, "... and the launch then runs");
  int optin = 0;
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  expect(cudaFuncSetAttribute(noop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin + 1) ==
             cudaErrorInvalidValue,
         "an opt-in above the device limit is refused");
  cudaGetLastError();
  int * d = nullptr;
  cudaMalloc(&d, 128 * sizeof(int));
  cudaMemset(d, 0, 128 * sizeof(int));
  bounded_kernel<<<1, 128>>>(d);
  expect(cudaGetLastError() == cudaErrorLaunchOutOfResources, "a block above the kernel's __launch_bounds__ is refused");
  bounded_kernel<<<1, 64>>>(d);
  expect(cudaGetLastError() == cudaSuccess, "... and one within them runs");
  const std::vector<int> h = host_copy(d, 128);
  expect(h[63] == 1 && h[64] == 0, "... only the launch within the bounds ran");
  cudaFree(d);
}

void test_memory_spaces() {
  int * d = nullptr;
  int * pinned = nullptr;
  cudaMalloc(&d, 16 * sizeof(int));
  cudaHostAlloc(reinterpret_cast<void **>(&pinned), 16 * sizeof(int), cudaHostAllocDefault);
  std::vector<int> host(16, 5);
  expect(cudaMemcpy(d, host.data(), 64, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue,
         "a copy whose pointers contradict its kind is refused");
  expect(cudaMemcpy(host.data(), pinned, 64, cudaMemcpyHostToDevice) == cudaErrorInvalidValue,
         "pinned host memory is not device memory");
  cudaGetLastError();
  size_t free_before = 0, free_after = 0, total = 0;
  cudaMemGetInfo(&free_before, &total);
  int * big = nullptr;
  cudaMalloc(&big, 1 << 20);
  cudaMemGetInfo(&free_after, &total);
  expect(free_before - free_after == (1u << 20), "cudaMemGetInfo accounts for allocations");
  expect(cudaMalloc(&big, total) == cudaErrorMemoryAllocation, "an allocation beyond the device's memory fails");
  cudaGetLastError();
  cudaFree(d);
  cudaFreeHost(pinned);
}

void test_lazy_streams_and_events() {
  cudaStream_t a = nullptr, b = nullptr;
  cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  int * d = nullptr;
  int * pinned = nullptr;
  cudaMalloc(&d, 32 * sizeof(int));
  cudaMemset(d, 0, 32 * sizeof(int));
  cudaHostAlloc(reinterpret_cast<void **>(&pinned), 32 * sizeof(int), cudaHostAllocDefault);
  for (int i = 0; i < 32; ++i) pinned[i] = -1;

  add_kernel<<<1, 32, 0, a>>>(d, 7);
  cudaMemcpyAsync(pinned, d, 32 * sizeof(int), cudaMemcpyDeviceToHost, a);
  expect(pinned[0] == -1, "queued work has not run before anything waits for it");
  cudaEvent_t ev = nullptr;
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  cudaEventRecord(ev, a);
  expect(cudaEventQuery(ev) == cudaErrorNotReady, "the first query of pending work says not ready");
  expect(cudaEventQuery(ev) == cudaSuccess && pinned[0] == 7, "the work then completes");

  // Stream b waits for a's later work through an event; syncing b alone must run a's work first.
  add_kernel<<<1, 32, 0, a>>>(d, 100);
  cudaEventRecord(ev, a);
  cudaStreamWaitEvent(b, ev, 0);
  cudaMemcpyAsync(pinned, d, 32 * sizeof(int), cudaMemcpyDeviceToHost, b);
  cudaStreamSynchronize(b);
  expect(pinned[31] == 107, "a cross-stream event wait orders the other stream's work first");

  // A pageable source is staged by the call: overwriting it afterwards does not change what is copied.
  std::vector<int> src(32, 3);
  cudaMemcpyAsync(d, src.data(), 32 * sizeof(int), cudaMemcpyHostToDevice, a);
  src.assign(32, 9);
  cudaMemcpyAsync(pinned, d, 32 * sizeof(int), cudaMemcpyDeviceToHost, a);
  cudaStreamSynchronize(a);
  expect(pinned[5] == 3, "a pageable source is captured when the copy is queued");
  // A pinned source is read when the copy runs: reusing it before the copy completes changes what arrives.
  for (int i = 0; i < 32; ++i) pinned[i] = 4;
  cudaMemcpyAsync(d, pinned, 32 * sizeof(int), cudaMemcpyHostToDevice, a);
  for (int i = 0; i < 32; ++i) pinned[i] = 8;
  std::vector<int> back(32);
  cudaStreamSynchronize(a);
  cudaMemcpy(back.data(), d, 32 * sizeof(int), cudaMemcpyDeviceToHost);
  expect(back[0] == 8, "a pinned source is read only when the copy runs");

  cudaEventDestroy(ev);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
  cudaFree(d);
  cudaFreeHost(pinned);
}

void test_capture() {
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  int * d = nullptr;
  cudaMalloc(&d, 32 * sizeof(int));
  cudaMemset(d, 0, 32 * sizeof(int));
  cudaGraph_t g = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  add_kernel<<<1, 32, 0, s>>>(d, 1);
  cudaStreamEndCapture(s, &g);
  cudaGraphExec_t x = nullptr;
  cudaGraphInstantiate(&x, g, 0);
  std::vector<int> h(32);
  cudaStreamSynchronize(s);
  cudaMemcpy(h.data(), d, 32 * sizeof(int), cudaMemcpyDeviceToHost);
  expect(h[0] == 0, "captured work does not run while it is captured");
  cudaGraphLaunch(x, s);
  cudaGraphLaunch(x, s);
  cudaStreamSynchronize(s);
  cudaMemcpy(h.data(), d, 32 * sizeof(int), cudaMemcpyDeviceToHost);
  expect(h[0] == 2, "each graph launch runs the captured kernel once");

  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  int * more = nullptr;
  expect(cudaMalloc(&more, 64) == cudaErrorStreamCaptureUnsupported, "cudaMalloc while capturing is refused");
  std::vector<int> pageable(32, 1);
  expect(cudaMemcpyAsync(d, pageable.data(), 64, cudaMemcpyHostToDevice, s) == cudaErrorStreamCaptureUnsupported,
         "a captured copy from pageable memory is refused");
  expect(cudaStreamEndCapture(s, &g) == cudaErrorStreamCaptureInvalidated && g == nullptr,
         "the capture is then invalidated");
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  expect(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported &&
             cudaStreamEndCapture(s, &g) == cudaErrorStreamCaptureInvalidated,
         "waiting for the stream being captured is refused");
  cudaGetLastError();
  cudaGraphExecDestroy(x);
  cudaStreamDestroy(s);
  cudaFree(d);
}

// Runs `body` in a child process and reports whether it aborted (the simulator's verdict on a kernel bug).
template <typename F>
bool aborts(F body) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stderr);
    body();
    std::_Exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

void test_reported_bugs() {
  expect(aborts([] {
           int * d = nullptr;
           cudaMalloc(&d, 64 * sizeof(int));
           divergent_rendezvous_kernel<<<1, 64>>>(d);
           cudaDeviceSynchronize();
         }),
         "a warp rendezvous half the warp never reaches is reported");
  expect(aborts([] {
           int * d = nullptr;
           cudaMalloc(&d, 64 * sizeof(int));
           exited_lane_shuffle_kernel<<<1, 64>>>(d);
           cudaDeviceSynchronize();
         }),
         "a full-mask shuffle naming a lane that exited is reported");
  expect(aborts([] {
           int * d = nullptr;
           cudaMalloc(&d, 48 * sizeof(int));
           warp_ops_kernel<<<1, 48>>>(d, d);
           cudaDeviceSynchronize();
         }),
         "a full-mask shuffle in a warp of 16 lanes is reported");
  expect(aborts([] {
           int * d = nullptr;
           cudaMalloc(&d, 16);
           std::vector<int> h(8);
           cudaMemcpy(d, h.data(), 32, cudaMemcpyHostToDevice);
         }),
         "a copy overrunning its device allocation is reported");
  expect(aborts([] {
           int * d = nullptr;
           cudaMalloc(&d, 32 * sizeof(int));
           add_kernel<<<1, 32>>>(d, 1);
           const rt_cuda::programmatic_scope on(true);
           rt_cuda::launch("add_kernel", add_kernel, 1, 32, 0, nullptr, d, 1);
           cudaDeviceSynchronize();
         }),
         "a programmatic launch of a kernel that never waits for the kernel before it is reported");
  expect(aborts([] {
           int * d = nullptr;
           cudaMalloc(&d, 32 * sizeof(int));
           release_first_kernel<<<1, 32>>>(d);
           cudaDeviceSynchronize();
         }),
         "releasing the next kernel before waiting for the previous one is reported");
  expect(!aborts([] {
           int * d = nullptr;
           cudaMalloc(&d, 32 * sizeof(int));
           add_kernel<<<1, 32>>>(d, 1);
           cudaDeviceSynchronize();
         }),
         "(control) a correct kernel in a child process does not abort");
  expect(!aborts([] {
           int * d = nullptr;
           cudaMalloc(&d, 32 * sizeof(int));
           cudaMemset(d, 0, 32 * sizeof(int));
           add_kernel<<<1, 32>>>(d, 1);
           {
             const rt_cuda::programmatic_scope on(true);
             rt_cuda::launch("follow_add_kernel", follow_add_kernel, 1, 32, 0, nullptr, d, 2);
           }
           std::vector<int> h(32);
           cudaMemcpy(h.data(), d, 32 * sizeof(int), cudaMemcpyDeviceToHost);
           for (int v : h) {
             if (v != 3) std::abort();
           }
         }),
         "(control) a programmatic launch that waits first runs after the kernel before it");
}

// Runs `body` in a child process (an injected fault is sticky for the process) and returns its verdict.
template <typename F>
bool in_child(F body) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) std::_Exit(body() ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void test_sticky_faults() {
  expect(in_child([] {
           int * d = nullptr;
           cudaMalloc(&d, 32 * sizeof(int));
           cudaMemset(d, 0, 32 * sizeof(int));
           rt_sim::inject_fault(rt_sim::fault_on::kernel, 2);
           add_kernel<<<1, 32>>>(d, 1);
           add_kernel<<<1, 32>>>(d, 10);  // faults: does not run
           const bool reported = cudaDeviceSynchronize() == cudaErrorIllegalAddress;
           std::vector<int> h(32, -1);
           const bool copy_refused = cudaMemcpy(h.data(), d, 32 * sizeof(int), cudaMemcpyDeviceToHost) == cudaErrorIllegalAddress;
           return reported && copy_refused && h[0] == -1;
         }),
         "an injected kernel fault is reported at the next synchronise");
  expect(in_child([] {
           int * d = nullptr;
           cudaMalloc(&d, 32 * sizeof(int));
           rt_sim::inject_fault(rt_sim::fault_on::kernel, 1);
           add_kernel<<<1, 32>>>(d, 1);
           cudaDeviceSynchronize();
           cudaStream_t s = nullptr;
           cudaStreamCreate(&s);
           cudaEvent_t e = nullptr;
           cudaEventCreate(&e);
           const bool record = cudaEventRecord(e, s) == cudaErrorIllegalAddress;
           add_kernel<<<1, 32>>>(d, 1);
           const bool launch = cudaGetLastError() == cudaErrorIllegalAddress;
           const bool still = cudaGetLastError() == cudaErrorIllegalAddress;
           const bool sync = cudaStreamSynchronize(s) == cudaErrorIllegalAddress;
           return record && launch && still && sync;
         }),
         "after a fault every launch, record and sync fails (sticky)");
  expect(in_child([] {
           std::vector<int> pageable(64, 1);
           int * pinned = nullptr;
           cudaHostAlloc(reinterpret_cast<void **>(&pinned), 64 * sizeof(int), 0);
           int * d = nullptr;
           cudaMalloc(&d, 64 * sizeof(int));
           rt_sim::inject_fault(rt_sim::fault_on::pinned_h2d, 1);
           const bool pageable_ok = cudaMemcpy(d, pageable.data(), 64 * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess;
           const bool pinned_faults = cudaMemcpy(d, pinned, 64 * sizeof(int), cudaMemcpyHostToDevice) == cudaErrorIllegalAddress;
           return pageable_ok && pinned_faults;
         }),
         "an injected copy fault strikes copies from pinned memory only");
}

// mma.sync m16n8k16 as the PTX ISA lays out its fragments, written here the way llama.cpp's mma.cuh indexes them (l:
// a thread's 32-bit element). Each warp multiplies its own matrices; small integers keep every sum exact.
__global__ void mma_kernel(const __half * a, const __half * b, const float * c, float * d) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  a += w * 256;
  b += w * 128;
  c += w * 128;
  d += w * 128;
  uint32_t af[4], bf[2];
  float acc[4];
  for (int l = 0; l < 4; ++l) {
    const int i = (l % 2) * 8 + lane / 4, j = (l / 2) * 4 + lane % 4;  // row, half2 column
    __half2 h = __halves2half2(a[i * 16 + 2 * j], a[i * 16 + 2 * j + 1]);
    std::memcpy(&af[l], &h, 4);
  }
  for (int l = 0; l < 2; ++l) {
    const int n = lane / 4, j = l * 4 + lane % 4;  // column of B, half2 index along k
    __half2 h = __halves2half2(b[(2 * j) * 8 + n], b[(2 * j + 1) * 8 + n]);
    std::memcpy(&bf[l], &h, 4);
  }
  for (int l = 0; l < 4; ++l) acc[l] = c[((l / 2) * 8 + lane / 4) * 8 + (lane % 4) * 2 + l % 2];
  ::rt_sim::mma_m16n8k16(acc, af, bf);
  for (int l = 0; l < 4; ++l) d[((l / 2) * 8 + lane / 4) * 8 + (lane % 4) * 2 + l % 2] = acc[l];
}

void test_mma() {
  std::vector<__half> a(512), b(256);
  std::vector<float> c(256), ref(256);
  for (int i = 0; i < 512; ++i) a[static_cast<size_t>(i)] = __float2half(static_cast<float>((i * 7) % 11 - 5));
  for (int i = 0; i < 256; ++i) b[static_cast<size_t>(i)] = __float2half(static_cast<float>((i * 5) % 9 - 4));
  for (int i = 0; i < 256; ++i) c[static_cast<size_t>(i)] = static_cast<float>(i % 13);
  for (int w = 0; w < 2; ++w) {
    for (int m = 0; m < 16; ++m) {
      for (int n = 0; n < 8; ++n) {
        float sum = c[static_cast<size_t>(w * 128 + m * 8 + n)];
        for (int k = 0; k < 16; ++k) {
          sum += __half2float(a[static_cast<size_t>(w * 256 + m * 16 + k)]) * __half2float(b[static_cast<size_t>(w * 128 + k * 8 + n)]);
        }
        ref[static_cast<size_t>(w * 128 + m * 8 + n)] = sum;
      }
    }
  }
  __half * da = device_copy(a);
  __half * db = device_copy(b);
  float * dc = device_copy(c);
  float * dd = nullptr;
  cudaMalloc(&dd, 256 * sizeof(float));
  mma_kernel<<<1, 64>>>(da, db, dc, dd);
  expect(host_copy(dd, 256) == ref, "mma m16n8k16: D = A B + C by the PTX fragment layout, per warp");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dd);
}

}  // namespace

int main() {
  test_mma();
  test_warp_ops();
  test_block_sync_and_shared();
  test_scheduling_order();
  test_launch_limits();
  test_memory_spaces();
  test_lazy_streams_and_events();
  test_capture();
  test_reported_bugs();
  test_sticky_faults();
  if (failures != 0) {
    std::printf("test-cuda-sim: %d failure(s)\n", failures);
    return 1;
  }
  std::printf("test-cuda-sim: all checks passed\n");
  return 0;
}
