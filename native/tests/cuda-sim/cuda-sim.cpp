// The simulator's runtime: fibers for the threads of a block, and the CUDA runtime API calls the backend and its
// tests use, over host memory. See cuda-sim.h for what is modelled and what is not.
#include "cuda-sim.h"

#include <cuda_profiler_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct CUstream_st;
struct CUevent_st;

namespace {

using clock_type = std::chrono::steady_clock;

[[noreturn]] void die(const std::string & msg) {
  std::fprintf(stderr, "cuda-sim: %s\n", msg.c_str());
  std::fflush(stderr);
  std::abort();
}

// ---------------------------------------------------------------------------------------------------------------
// Threads of a block as fibers.

enum class fiber_state { run, wait_block, wait_warp, done };

// A context switch happens at every barrier and twice per shuffle, for every thread: on x86-64 it is a few
// instructions (callee-saved registers and the stack pointer); elsewhere ucontext, which costs a system call each.
#if defined(__x86_64__) && !defined(_WIN32)
struct context {
  void * sp = nullptr;
  const void * stack_bottom = nullptr;  // for AddressSanitizer's fiber annotations
  size_t stack_size = 0;
};
extern "C" void rt_sim_switch(void ** save_sp, void * next_sp);
__asm__(
    ".text\n"
    ".globl rt_sim_switch\n"
    ".type rt_sim_switch,@function\n"
    "rt_sim_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size rt_sim_switch, .-rt_sim_switch\n");
void raw_switch(context & from, context & to) { rt_sim_switch(&from.sp, to.sp); }
void make_context(context & c, char * stack, size_t bytes, void (*entry)()) {
  c.stack_bottom = stack;
  c.stack_size = bytes;
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~static_cast<uintptr_t>(15);
  void ** sp = reinterpret_cast<void **>(top);
  *--sp = nullptr;                             // the entry's return address: it never returns
  *--sp = reinterpret_cast<void *>(entry);     // where rt_sim_switch's `ret` goes
  for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp, rbx, r12-r15
  c.sp = sp;
}
#else
}  // namespace
#include <ucontext.h>
namespace {
struct context {
  ucontext_t uc{};
  const void * stack_bottom = nullptr;
  size_t stack_size = 0;
};
void raw_switch(context & from, context & to) { swapcontext(&from.uc, &to.uc); }
void make_context(context & c, char * stack, size_t bytes, void (*entry)()) {
  c.stack_bottom = stack;
  c.stack_size = bytes;
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = bytes;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
}
#endif

// Under AddressSanitizer (RT_CUDA_SIM_ASAN builds) every switch is announced, so that it follows the stacks.
#if defined(__SANITIZE_ADDRESS__)
}  // namespace
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
namespace {
void switch_context(context & from, context & to, bool from_exits = false) {
  void * fake_stack = nullptr;
  __sanitizer_start_switch_fiber(from_exits ? nullptr : &fake_stack, to.stack_bottom, to.stack_size);
  raw_switch(from, to);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
}
void fiber_started() { __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr); }
// A thread that ended at a switch leaves its frames' redzones poisoned on a stack the next block reuses.
void stack_reused(char * stack, size_t bytes) { __asan_unpoison_memory_region(stack, bytes); }
void thread_stack(context & c) {
  pthread_attr_t attr;
  void * addr = nullptr;
  size_t size = 0;
  pthread_getattr_np(pthread_self(), &attr);
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  c.stack_bottom = addr;
  c.stack_size = size;
}
#else
void switch_context(context & from, context & to, bool = false) { raw_switch(from, to); }
void fiber_started() {}
void stack_reused(char *, size_t) {}
void thread_stack(context &) {}
#endif

constexpr size_t STACK_BYTES = 64 * 1024;
constexpr uint64_t STACK_CANARY = 0x5AFE57ACC0FFEE11ull;

struct fiber {
  context ctx;
  std::unique_ptr<char[]> stack;
  fiber_state state = fiber_state::done;
  uint3 tid{};
  int linear = 0;
  unsigned exchanges = 0;
  bool waited_prior = false;  // called grid_dependency_wait
};

// Lanes of a warp hand control to each other directly; the scheduler only sees a warp once all its lanes wait at
// __syncthreads or have exited.
struct warp_run {
  int first = 0, count = 0;
  int live = 0;     // lanes not exited
  int arrived = 0;  // lanes waiting at the current warp rendezvous
};

struct block_run {
  const char * kernel = "";
  const std::function<void()> * body = nullptr;
  bool programmatic = false;
  uint3 bidx{};
  dim3 bdim, gdim;
  std::vector<char> smem;
  std::vector<fiber> fibers;
  std::vector<warp_run> warps;
  int n_threads = 0;
  context sched;
  std::vector<uint64_t> warp_slots;
  std::vector<uint32_t> mma_slots;  // two banks of kMmaWords per thread, as warp_slots
};

constexpr size_t kMmaWords = 6;

float half_bits_to_float(uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}  // an m16n8k16 lane's A (4 words) and B (2) fragments

thread_local block_run * g_block = nullptr;
thread_local fiber * g_fiber = nullptr;

// RT_CUDA_SIM_ORDER=reverse runs blocks, warps and the lanes of a warp last to first. Between two barriers the lanes
// run one after another, so a missing barrier only shows when the reader runs before the writer: running the tests
// in both orders shows it whichever thread writes.
std::atomic<bool> g_reverse_order{[] {
  const char * v = std::getenv("RT_CUDA_SIM_ORDER");
  return v != nullptr && std::strcmp(v, "reverse") == 0;
}()};

bool reversed_order() { return g_reverse_order.load(std::memory_order_relaxed); }

std::string where(const block_run & b) {
  return std::string("kernel ") + b.kernel + " block (" + std::to_string(b.bidx.x) + "," + std::to_string(b.bidx.y) +
         "," + std::to_string(b.bidx.z) + ")";
}

// Switches from the current lane to the next runnable lane of its warp, or to the scheduler when there is none.
void pass_on(fiber * f, bool exits = false) {
  block_run & b = *g_block;
  warp_run & w = b.warps[static_cast<size_t>(f->linear / 32)];
  const int lane = f->linear - w.first;
  const int dir = reversed_order() ? w.count - 1 : 1;
  for (int step = 1; step <= w.count; ++step) {
    fiber & next = b.fibers[static_cast<size_t>(w.first + (lane + step * dir) % w.count)];
    if (next.state == fiber_state::run) {
      if (&next == f) return;
      g_fiber = &next;
      switch_context(f->ctx, next.ctx, exits);
      return;
    }
  }
  if (w.arrived > 0) {
    die(where(b) + ": a warp rendezvous (shuffle or __syncwarp) that some lanes of the warp wait for at "
        "__syncthreads instead");
  }
  g_fiber = nullptr;
  switch_context(f->ctx, b.sched, exits);
}

void release_warp(warp_run & w) {
  for (int i = w.first; i < w.first + w.count; ++i) {
    fiber & l = g_block->fibers[static_cast<size_t>(i)];
    if (l.state == fiber_state::wait_warp) l.state = fiber_state::run;
  }
  w.arrived = 0;
}

void fiber_entry() {
  fiber_started();
  (*g_block->body)();
  fiber * f = g_fiber;
  if (g_block->programmatic && !f->waited_prior) {
    die(where(*g_block) + " thread (" + std::to_string(f->tid.x) + "," + std::to_string(f->tid.y) + "," +
        std::to_string(f->tid.z) + "): launched as a programmatic dependent launch, it ended without waiting for the "
        "kernel before it (rt_cuda::wait_for_prior_grids), which may still be writing what it read");
  }
  f->state = fiber_state::done;
  warp_run & w = g_block->warps[static_cast<size_t>(f->linear / 32)];
  --w.live;
  if (w.arrived > 0 && w.arrived == w.live) release_warp(w);
  pass_on(f, true);
}

void wait_at_block_barrier() {
  fiber * f = g_fiber;
  f->state = fiber_state::wait_block;
  pass_on(f);
}

void wait_at_warp_rendezvous() {
  fiber * f = g_fiber;
  warp_run & w = g_block->warps[static_cast<size_t>(f->linear / 32)];
  if (++w.arrived == w.live) {
    // The last lane to arrive opens the rendezvous and goes on; the others resume after it.
    release_warp(w);
    return;
  }
  f->state = fiber_state::wait_warp;
  pass_on(f);
}

void run_block(block_run & b) {
  thread_stack(b.sched);
  const int n_warps = (b.n_threads + 31) / 32;
  b.warps.assign(static_cast<size_t>(n_warps), warp_run{});
  for (int w = 0; w < n_warps; ++w) {
    warp_run & wr = b.warps[static_cast<size_t>(w)];
    wr.first = w * 32;
    wr.count = std::min(32, b.n_threads - w * 32);
    wr.live = wr.count;
  }
  for (int i = 0; i < b.n_threads; ++i) {
    fiber & f = b.fibers[static_cast<size_t>(i)];
    if (!f.stack) {
      f.stack.reset(new char[STACK_BYTES]);
      std::memcpy(f.stack.get(), &STACK_CANARY, sizeof STACK_CANARY);
    }
    stack_reused(f.stack.get(), STACK_BYTES);
    // Stacks of equal size would put every thread's frames in the same cache sets; stagger their tops.
    make_context(f.ctx, f.stack.get(), STACK_BYTES - static_cast<size_t>(i % 61) * 64, fiber_entry);
    f.state = fiber_state::run;
    f.linear = i;
    f.exchanges = 0;
    f.waited_prior = false;
    f.tid.x = static_cast<unsigned>(i) % b.bdim.x;
    f.tid.y = (static_cast<unsigned>(i) / b.bdim.x) % b.bdim.y;
    f.tid.z = static_cast<unsigned>(i) / (b.bdim.x * b.bdim.y);
  }
  for (;;) {
    bool any_waiting = false;
    const bool rev = reversed_order();
    for (int wi = 0; wi < n_warps; ++wi) {
      const warp_run & wr = b.warps[static_cast<size_t>(rev ? n_warps - 1 - wi : wi)];
      for (int li = 0; li < wr.count; ++li) {
        fiber & f = b.fibers[static_cast<size_t>(wr.first + (rev ? wr.count - 1 - li : li))];
        if (f.state != fiber_state::run) continue;
        g_fiber = &f;
        switch_context(b.sched, f.ctx);  // returns once no lane of this warp can run
        break;
      }
    }
    for (int i = 0; i < b.n_threads; ++i) {
      fiber & f = b.fibers[static_cast<size_t>(i)];
      if (f.state == fiber_state::wait_block) {
        f.state = fiber_state::run;
        any_waiting = true;
      } else if (f.state != fiber_state::done) {
        die(where(b) + ": a thread is still waiting at a warp rendezvous while the rest of the block is at "
            "__syncthreads or has exited");
      }
    }
    if (!any_waiting) break;
  }
  for (int i = 0; i < b.n_threads; ++i) {
    if (std::memcmp(b.fibers[static_cast<size_t>(i)].stack.get(), &STACK_CANARY, sizeof STACK_CANARY) != 0) {
      die(where(b) + ": a thread overflowed its " + std::to_string(STACK_BYTES) + "-byte simulator stack");
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Memory spaces.

enum class space { device, pinned };

struct allocation {
  size_t size;
  space where;
};

std::recursive_mutex g_mu;
std::map<uintptr_t, allocation> g_allocs;
size_t g_device_used = 0;
rt_sim::copy_totals g_totals;

size_t env_size(const char * name, size_t fallback) {
  const char * v = std::getenv(name);
  return v != nullptr && *v != '\0' ? static_cast<size_t>(std::strtoull(v, nullptr, 10)) : fallback;
}

size_t device_total() {
  static const size_t total = env_size("RT_CUDA_SIM_MEMORY_MIB", 8192) << 20;
  return total;
}

int compute_capability() {
  static const int cc = static_cast<int>(env_size("RT_CUDA_SIM_CC", 75));
  return cc;
}

int smem_optin() {
  switch (compute_capability()) {
    case 75: return 64 * 1024;
    case 80: return 163 * 1024;
    case 90:
    case 100: return 227 * 1024;
    default: return 99 * 1024;  // 8.6, 8.9 and 12.0: the RTX 30, 40 and 50 cards
  }
}

// The allocation containing [p, p + n), if any; `partial` is set when p is inside one but the range overruns it.
const allocation * find_alloc(const void * p, size_t n, bool & partial, uintptr_t * start = nullptr) {
  partial = false;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = g_allocs.upper_bound(a);
  if (it == g_allocs.begin()) return nullptr;
  --it;
  if (a >= it->first + it->second.size) return nullptr;
  if (start != nullptr) *start = it->first;
  if (a + n > it->first + it->second.size) partial = true;
  return &it->second;
}

enum class mem_kind { device, pinned, pageable };

mem_kind kind_of(const void * p, size_t n, const char * call, const char * role) {
  bool partial = false;
  const allocation * al = find_alloc(p, n, partial);
  if (al == nullptr) return mem_kind::pageable;
  if (partial) {
    die(std::string(call) + ": the " + role + " range of " + std::to_string(n) + " bytes overruns its " +
        (al->where == space::device ? "device" : "pinned host") + " allocation of " + std::to_string(al->size) + " bytes");
  }
  return al->where == space::device ? mem_kind::device : mem_kind::pinned;
}

// ---------------------------------------------------------------------------------------------------------------
// Streams, events, graphs.

struct op {
  enum kind_t { work, record, wait } kind = work;
  enum class what { other, kernel, pinned_h2d } counts_as = what::other;  // for fault injection
  std::function<void()> fn;
  CUevent_st * event = nullptr;
  uint64_t token = 0;
  uint64_t seq = 0;
};

uint64_t g_seq = 0;
uint64_t g_token = 0;
thread_local cudaError_t g_last_error = cudaSuccess;
// A device fault is sticky, as on a GPU: the faulting work and all later work do not run, and every later call that
// launches, copies, records, waits or synchronises returns the error. Injected by RT_CUDA_SIM_FAULT_KERNEL=N (the
// N-th kernel to run faults) or RT_CUDA_SIM_FAULT_PINNED_H2D=N (the N-th copy from pinned host memory to the device,
// that is an expert copy: the backend uploads its control data from pageable memory), counted from 1.
cudaError_t g_sticky = cudaSuccess;
uint64_t g_kernels_run = 0;
uint64_t g_pinned_h2d_run = 0;
uint64_t g_kernel_fault_at = 0;  // 0: none injected by rt_sim::inject_fault (the environment may still name one)
uint64_t g_pinned_h2d_fault_at = 0;
thread_local int g_capturing = 0;  // streams this host thread is capturing
// cudaFuncAttributeMaxDynamicSharedMemorySize per (device, kernel): CUDA keeps function attributes per device.
std::map<std::pair<int, const void *>, int> g_func_smem;
// The current device is the calling host thread's, as in CUDA.
thread_local int g_current_device = 0;

}  // namespace

struct CUevent_st {
  unsigned flags = 0;
  uint64_t last = 0;  // token of the latest record call
  uint64_t done = 0;  // highest token executed
  bool reported_pending = false;
  clock_type::time_point at{};
};

struct CUgraph_st {
  std::vector<op> ops;
};

struct CUgraphExec_st {
  std::vector<op> ops;
};

struct CUstream_st {
  unsigned flags = 0;
  std::deque<op> q;
  CUgraph_st * capture = nullptr;
  bool capture_invalid = false;
};

namespace {

std::vector<CUstream_st *> g_streams;
std::vector<std::unique_ptr<CUevent_st>> g_dead_events;  // a pending record may still name a destroyed event

void flush(CUstream_st * s, uint64_t upto_seq);

void wait_for(CUevent_st * ev, uint64_t token) {
  if (ev->done >= token) return;
  for (CUstream_st * s : g_streams) {
    for (const op & o : s->q) {
      if (o.kind == op::record && o.event == ev && o.token == token) {
        flush(s, o.seq);
        return;
      }
    }
  }
  die("an event waits for a record that no stream holds");
}

uint64_t kernel_fault_at() {
  static const uint64_t from_env = env_size("RT_CUDA_SIM_FAULT_KERNEL", 0);
  return g_kernel_fault_at != 0 ? g_kernel_fault_at : from_env;
}

uint64_t pinned_h2d_fault_at() {
  static const uint64_t from_env = env_size("RT_CUDA_SIM_FAULT_PINNED_H2D", 0);
  return g_pinned_h2d_fault_at != 0 ? g_pinned_h2d_fault_at : from_env;
}

// False when the work must not run: the context already faulted, or this work is the injected fault.
bool survives(const op & o) {
  if (g_sticky != cudaSuccess) return false;
  if (o.counts_as == op::what::kernel && ++g_kernels_run == kernel_fault_at()) {
    g_sticky = cudaErrorIllegalAddress;
  } else if (o.counts_as == op::what::pinned_h2d && ++g_pinned_h2d_run == pinned_h2d_fault_at()) {
    g_sticky = cudaErrorIllegalAddress;
  }
  return g_sticky == cudaSuccess;
}

void execute(op & o) {
  switch (o.kind) {
    case op::work:
      if (survives(o)) o.fn();
      break;
    case op::record:
      o.event->done = std::max(o.event->done, o.token);
      o.event->at = clock_type::now();
      break;
    case op::wait:
      wait_for(o.event, o.token);
      break;
  }
}

void flush(CUstream_st * s, uint64_t upto_seq) {
  while (!s->q.empty() && s->q.front().seq <= upto_seq) {
    op o = std::move(s->q.front());
    s->q.pop_front();
    execute(o);
  }
}

void flush_all() {
  for (size_t i = 0; i < g_streams.size(); ++i) flush(g_streams[i], UINT64_MAX);
}

// Work on the legacy default stream waits for every blocking stream and runs at once.
void flush_blocking() {
  for (size_t i = 0; i < g_streams.size(); ++i) {
    if ((g_streams[i]->flags & cudaStreamNonBlocking) == 0) flush(g_streams[i], UINT64_MAX);
  }
}

cudaError_t fail(cudaError_t e) {
  g_last_error = e;
  return e;
}

// The result of a call that did its work: the sticky fault if the context has one.
cudaError_t done() { return g_sticky != cudaSuccess ? fail(g_sticky) : cudaSuccess; }

// While this thread captures, CUDA refuses calls that would synchronise or allocate; so does the simulator.
cudaError_t refuse_if_capturing(const char * call) {
  if (g_capturing == 0) return cudaSuccess;
  std::fprintf(stderr, "cuda-sim: %s during stream capture is not permitted\n", call);
  for (CUstream_st * s : g_streams) {
    if (s->capture != nullptr) s->capture_invalid = true;
  }
  return fail(cudaErrorStreamCaptureUnsupported);
}

// Queues an op on a stream (or its capture), or runs it now on the legacy stream.
cudaError_t submit(cudaStream_t s, op o, const char * call) {
  if (s == nullptr || s == cudaStreamLegacy) {
    if (cudaError_t e = refuse_if_capturing(call); e != cudaSuccess) return e;
    flush_blocking();
    execute(o);
    return cudaSuccess;
  }
  o.seq = ++g_seq;
  if (s->capture != nullptr) {
    s->capture->ops.push_back(std::move(o));
  } else {
    s->q.push_back(std::move(o));
  }
  return cudaSuccess;
}

bool in_captured_stream(cudaStream_t s) { return s != nullptr && s != cudaStreamLegacy && s->capture != nullptr; }

cudaError_t do_copy(void * dst, const void * src, size_t n, cudaMemcpyKind kind, cudaStream_t stream, bool async,
                    const char * call) {
  if (n == 0) return cudaSuccess;
  const mem_kind dk = kind_of(dst, n, call, "destination");
  const mem_kind sk = kind_of(src, n, call, "source");
  const bool dst_dev = dk == mem_kind::device, src_dev = sk == mem_kind::device;
  bool ok = true;
  switch (kind) {
    case cudaMemcpyHostToDevice: ok = dst_dev && !src_dev; break;
    case cudaMemcpyDeviceToHost: ok = !dst_dev && src_dev; break;
    case cudaMemcpyDeviceToDevice: ok = dst_dev && src_dev; break;
    case cudaMemcpyHostToHost: ok = !dst_dev && !src_dev; break;
    default: break;
  }
  if (!ok) {
    std::fprintf(stderr, "cuda-sim: %s: pointers do not match the copy kind %d (destination %s, source %s)\n", call,
                 static_cast<int>(kind), dst_dev ? "device" : "host", src_dev ? "device" : "host");
    return fail(cudaErrorInvalidValue);
  }
  uint64_t * counter = dst_dev && src_dev ? &g_totals.d2d : dst_dev ? &g_totals.h2d : src_dev ? &g_totals.d2h : nullptr;
  const bool pageable_src = sk == mem_kind::pageable, pageable_dst = dk == mem_kind::pageable;
  if (in_captured_stream(stream) && (pageable_src || pageable_dst)) {
    std::fprintf(stderr, "cuda-sim: %s: a captured copy must not use pageable host memory\n", call);
    stream->capture_invalid = true;
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  if (g_sticky != cudaSuccess) return fail(g_sticky);
  op o;
  if (dst_dev && sk == mem_kind::pinned) o.counts_as = op::what::pinned_h2d;
  if (pageable_src && async) {
    // CUDA stages a pageable source before the call returns, so the caller may reuse it at once.
    auto copy = std::make_shared<std::vector<char>>(static_cast<const char *>(src), static_cast<const char *>(src) + n);
    o.fn = [dst, copy, n, counter]() {
      std::memcpy(dst, copy->data(), n);
      if (counter != nullptr) *counter += n;
    };
  } else {
    o.fn = [dst, src, n, counter]() {
      std::memcpy(dst, src, n);
      if (counter != nullptr) *counter += n;
    };
  }
  if (!async) {
    if (cudaError_t e = refuse_if_capturing(call); e != cudaSuccess) return e;
    flush_blocking();
    execute(o);
    return done();
  }
  if (pageable_dst && src_dev && stream != nullptr && stream != cudaStreamLegacy) {
    // A copy into pageable memory returns only once it is done.
    flush(stream, UINT64_MAX);
    execute(o);
    return done();
  }
  return submit(stream, std::move(o), call);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Kernel side.

namespace rt_sim {

const uint3 & thread_index() { return g_fiber->tid; }
const uint3 & block_index() { return g_block->bidx; }
const dim3 & block_dim() { return g_block->bdim; }
const dim3 & grid_dim() { return g_block->gdim; }
void * dynamic_shared() { return g_block->smem.data(); }
void sync_block() { wait_at_block_barrier(); }
void sync_warp(unsigned mask) {
  if (mask != 0xffffffffu) die(where(*g_block) + ": partial-mask warp sync is not modelled");
  // A full mask names all 32 lanes; on a GPU a lane that has exited or does not exist (a block whose size is not a
  // multiple of 32) leaves the result undefined.
  const warp_run & w = g_block->warps[static_cast<size_t>(g_fiber->linear / 32)];
  if (w.count < 32) die(where(*g_block) + ": a full-mask warp operation in a warp of " + std::to_string(w.count) + " lanes");
  if (w.live < 32) die(where(*g_block) + ": a full-mask warp operation after some lanes of the warp exited");
  wait_at_warp_rendezvous();
}
// Two slot banks used in turn: a lane can write the next exchange's value only after every lane has arrived at it,
// that is, after every lane has read this one, so one rendezvous per exchange suffices.
uint64_t warp_exchange(unsigned mask, uint64_t bits, int src_lane) {
  fiber * f = g_fiber;
  const size_t bank = static_cast<size_t>(f->exchanges++ & 1) * g_block->warp_slots.size() / 2;
  const int me = f->linear;
  const int src = (me & ~31) + (src_lane & 31);
  g_block->warp_slots[bank + static_cast<size_t>(me)] = bits;
  sync_warp(mask);
  return src < g_block->n_threads ? g_block->warp_slots[bank + static_cast<size_t>(src)] : bits;
}

// The PTX ISA's fragment layout, lane = 4 * g + t: A (16 x 16, row-major) a0 = A[g][2t..2t+1], a1 = A[g+8][2t..],
// a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]; B (16 x 8) b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]; C and D (16 x 8)
// c0..c1 = C[g][2t..2t+1], c2..c3 = C[g+8][2t..2t+1]. Lower half of a word = lower column (or k). Products are exact
// in FP32 and summed in k order, then added to C; a GPU may sum in another order (differences of FP32 rounding).
void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  fiber * f = g_fiber;
  const size_t bank = static_cast<size_t>(f->exchanges++ & 1) * g_block->mma_slots.size() / 2;
  const int me = f->linear;
  uint32_t * mine = &g_block->mma_slots[bank + static_cast<size_t>(me) * kMmaWords];
  for (int i = 0; i < 4; ++i) mine[i] = a[i];
  mine[4] = b[0];
  mine[5] = b[1];
  sync_warp(0xffffffffu);
  const uint32_t * warp = &g_block->mma_slots[bank + static_cast<size_t>(me & ~31) * kMmaWords];
  const auto half_at = [&](int lane, int word, int which) {
    const uint32_t w = warp[static_cast<size_t>(lane) * kMmaWords + static_cast<size_t>(word)];
    return half_bits_to_float(static_cast<uint16_t>(which != 0 ? w >> 16 : w & 0xFFFFu));
  };
  // A[m][k] and B[k][n] from the lanes that hold them.
  const auto A = [&](int m, int k) {
    const int lane = 4 * (m & 7) + (k & 7) / 2;
    return half_at(lane, (m >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0), k & 1);
  };
  const auto B = [&](int k, int n) { return half_at(4 * n + (k & 7) / 2, 4 + (k >= 8 ? 1 : 0), k & 1); };
  const int g = (me & 31) / 4, t = (me & 31) % 4;
  for (int i = 0; i < 4; ++i) {
    const int m = g + (i >= 2 ? 8 : 0), n = 2 * t + (i & 1);
    float sum = 0.0f;
    for (int k = 0; k < 16; ++k) sum += A(m, k) * B(k, n);
    d[i] += sum;
  }
}

void set_reverse_order(bool reverse) { g_reverse_order.store(reverse, std::memory_order_relaxed); }

void inject_fault(fault_on what, uint64_t n) {
  std::lock_guard<std::recursive_mutex> lock(g_mu);
  if (what == fault_on::kernel) {
    g_kernel_fault_at = g_kernels_run + n;
  } else {
    g_pinned_h2d_fault_at = g_pinned_h2d_run + n;
  }
}

copy_totals totals() {
  std::lock_guard<std::recursive_mutex> lock(g_mu);
  return g_totals;
}

namespace {
thread_local int * g_probed_bound = nullptr;  // set while a launch probes its kernel's __launch_bounds__
}  // namespace

bool kernel_prologue(int max_threads, int) {
  if (g_probed_bound == nullptr) return false;
  *g_probed_bound = max_threads;
  return true;
}

int probe_launch_bounds(const std::function<void()> & call) {
  int bound = 0;
  g_probed_bound = &bound;
  call();
  g_probed_bound = nullptr;
  return bound;
}

void grid_dependency_wait() { g_fiber->waited_prior = true; }

void check_prefetch(const void * p) {
  std::lock_guard<std::recursive_mutex> lock(g_mu);
  bool partial = false;
  const allocation * al = find_alloc(p, 1, partial);
  if (al == nullptr || al->where != space::device) {
    die(where(*g_block) + ": an L2 prefetch of an address outside every device allocation");
  }
}

void release_dependent_grids() {
  if (!g_fiber->waited_prior) {
    die(where(*g_block) + ": a thread released the kernel after it before waiting for the kernel before it; the "
        "next kernel could then start, and read, before this one's predecessor completed (src/cuda/launch.cuh)");
  }
}

namespace {
std::mutex g_runs_mu;
std::map<std::string, uint64_t> g_kernel_runs;  // by kernel name, under g_runs_mu
}  // namespace

uint64_t kernel_runs(const char * prefix) {
  std::lock_guard<std::mutex> lock(g_runs_mu);
  const std::string p = prefix;
  uint64_t n = 0;
  for (const auto & [name, runs] : g_kernel_runs) {
    if (name.compare(0, p.size(), p) == 0) n += runs;
  }
  return n;
}

void enqueue_kernel(const char * name, const void * func, dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                    int max_threads, std::function<void()> body, bool programmatic) {
  std::lock_guard<std::recursive_mutex> lock(g_mu);
  const uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  std::string bad;
  cudaError_t refusal = cudaErrorInvalidValue;
  if (threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64) {
    bad = "block of " + std::to_string(block.x) + "x" + std::to_string(block.y) + "x" + std::to_string(block.z);
  } else if (max_threads > 0 && threads > static_cast<uint64_t>(max_threads)) {
    bad = "block of " + std::to_string(threads) + " threads for a kernel whose __launch_bounds__ allow " +
          std::to_string(max_threads);
    refusal = cudaErrorLaunchOutOfResources;
  } else if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535) {
    bad = "grid of " + std::to_string(grid.x) + "x" + std::to_string(grid.y) + "x" + std::to_string(grid.z);
  } else if (smem > 48 * 1024) {
    auto it = g_func_smem.find({g_current_device, func});
    const int allowed = it == g_func_smem.end() ? 48 * 1024 : it->second;
    if (smem > static_cast<size_t>(allowed)) {
      bad = std::to_string(smem) + " bytes of dynamic shared memory (the kernel allows " + std::to_string(allowed) + ")";
    }
  }
  if (!bad.empty()) {
    std::fprintf(stderr, "cuda-sim: launch of %s refused: %s\n", name, bad.c_str());
    g_last_error = refusal;
    return;
  }
  if ((stream == nullptr || stream == cudaStreamLegacy) && g_capturing != 0) {
    refuse_if_capturing(name);
    return;
  }
  if (g_sticky != cudaSuccess) {
    g_last_error = g_sticky;
    return;
  }
  auto shared_body = std::make_shared<std::function<void()>>(std::move(body));
  op o;
  o.counts_as = op::what::kernel;
  o.fn = [name, grid, block, smem, shared_body, programmatic]() {
    {
      std::lock_guard<std::mutex> lock(g_runs_mu);
      ++g_kernel_runs[name];
    }
    thread_local block_run b;
    b.kernel = name;
    b.programmatic = programmatic;
    b.body = shared_body.get();
    b.bdim = block;
    b.gdim = grid;
    b.n_threads = static_cast<int>(block.x * block.y * block.z);
    if (b.fibers.size() < static_cast<size_t>(b.n_threads)) b.fibers.resize(static_cast<size_t>(b.n_threads));
    b.warp_slots.assign(static_cast<size_t>((b.n_threads + 31) / 32 * 32) * 2, 0);
    b.mma_slots.assign(static_cast<size_t>((b.n_threads + 31) / 32 * 32) * 2 * kMmaWords, 0);
    block_run * outer = g_block;
    g_block = &b;
    const bool rev = reversed_order();
    for (unsigned zi = 0; zi < grid.z; ++zi) {
      for (unsigned yi = 0; yi < grid.y; ++yi) {
        for (unsigned xi = 0; xi < grid.x; ++xi) {
          b.bidx.x = rev ? grid.x - 1 - xi : xi;
          b.bidx.y = rev ? grid.y - 1 - yi : yi;
          b.bidx.z = rev ? grid.z - 1 - zi : zi;
          // Uninitialised shared memory holds garbage on a GPU, not what the previous block left; NaN bytes make
          // reading it before writing visible. A fresh allocation of exactly the launch's size lets AddressSanitizer
          // see an access past it.
          b.smem = std::vector<char>(std::max<size_t>(smem, 16), static_cast<char>(0xFF));
          run_block(b);
        }
      }
    }
    g_block = outer;
  };
  submit(stream, std::move(o), name);
}

}  // namespace rt_sim

// ---------------------------------------------------------------------------------------------------------------
// Runtime API.

#define SIM_LOCK std::lock_guard<std::recursive_mutex> sim_lock_(g_mu)

const char * cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error (cuda-sim)";
    case cudaErrorInvalidValue: return "invalid argument (cuda-sim)";
    case cudaErrorMemoryAllocation: return "out of memory (cuda-sim)";
    case cudaErrorInvalidDevice: return "invalid device ordinal (cuda-sim)";
    case cudaErrorNotReady: return "device not ready (cuda-sim)";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing (cuda-sim)";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture (cuda-sim)";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected (cuda-sim)";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle (cuda-sim)";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered (cuda-sim)";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch (cuda-sim)";
    default: return "cuda-sim error";
  }
}

const char * cudaGetErrorName(cudaError_t e) { return cudaGetErrorString(e); }

cudaError_t cudaGetLastError() {
  if (g_sticky != cudaSuccess) return g_sticky;
  const cudaError_t e = g_last_error;
  g_last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() { return g_sticky != cudaSuccess ? g_sticky : g_last_error; }

cudaError_t cudaGetDeviceCount(int * count) {
  *count = static_cast<int>(env_size("RT_CUDA_SIM_DEVICES", 1));
  return *count == 0 ? fail(cudaErrorNoDevice) : cudaSuccess;
}

static bool device_exists(int device) {
  int n = 0;
  cudaGetDeviceCount(&n);
  return device >= 0 && device < n;
}

cudaError_t cudaSetDevice(int device) {
  if (!device_exists(device)) return fail(cudaErrorInvalidDevice);
  g_current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int * device) {
  *device = g_current_device;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int * v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int * v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp * prop, int device) {
  if (!device_exists(device)) return fail(cudaErrorInvalidDevice);
  std::memset(prop, 0, sizeof(*prop));
  std::snprintf(prop->name, sizeof prop->name, "CUDA simulator on the CPU");
  prop->major = compute_capability() / 10;
  prop->minor = compute_capability() % 10;
  prop->totalGlobalMem = device_total();
  prop->sharedMemPerBlock = 48 * 1024;
  prop->sharedMemPerBlockOptin = static_cast<size_t>(smem_optin());
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = 1024;
  prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = 65535;
  prop->maxGridSize[2] = 65535;
  prop->multiProcessorCount = 4;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char * bus_id, int len, int device) {
  if (!device_exists(device)) return fail(cudaErrorInvalidDevice);
  if (bus_id == nullptr || len < 13) return fail(cudaErrorInvalidValue);
  std::snprintf(bus_id, static_cast<size_t>(len), "0000:%02x:00.0", device + 1);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int * value, cudaDeviceAttr attr, int device) {
  if (!device_exists(device)) return fail(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = smem_optin(); return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = 48 * 1024; return cudaSuccess;
    case cudaDevAttrMultiProcessorCount: *value = 4; return cudaSuccess;
    // Small, so that the prefetch budgets it sets cut the tests' matrices too.
    case cudaDevAttrL2CacheSize: *value = 1 << 20; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = compute_capability() / 10; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = compute_capability() % 10; return cudaSuccess;
    default: return fail(cudaErrorInvalidValue);
  }
}

cudaError_t cudaFuncSetAttribute(const void * func, cudaFuncAttribute attr, int value) {
  SIM_LOCK;
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;
  if (value < 0 || value > smem_optin()) return fail(cudaErrorInvalidValue);
  g_func_smem[{g_current_device, func}] = value;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void ** p, size_t size) {
  SIM_LOCK;
  *p = nullptr;
  if (cudaError_t e = refuse_if_capturing("cudaMalloc"); e != cudaSuccess) return e;
  if (g_sticky != cudaSuccess) return fail(g_sticky);
  if (size == 0) return cudaSuccess;
  const size_t rounded = (size + 255) / 256 * 256;
  if (g_device_used + rounded > device_total()) return fail(cudaErrorMemoryAllocation);
  // Exactly `size` bytes (aligned as cudaMalloc aligns), so that AddressSanitizer sees a kernel read past the end.
  void * m = nullptr;
  if (posix_memalign(&m, 256, size) != 0) return fail(cudaErrorMemoryAllocation);
  // Fresh device memory is not zeroed on a GPU either; NaN bytes make reading it before writing visible.
  std::memset(m, 0xFF, size);
  g_allocs[reinterpret_cast<uintptr_t>(m)] = {size, space::device};
  g_device_used += rounded;
  *p = m;
  return cudaSuccess;
}

cudaError_t cudaFree(void * p) {
  SIM_LOCK;
  if (p == nullptr) return cudaSuccess;
  if (cudaError_t e = refuse_if_capturing("cudaFree"); e != cudaSuccess) return e;
  auto it = g_allocs.find(reinterpret_cast<uintptr_t>(p));
  if (it == g_allocs.end() || it->second.where != space::device) return fail(cudaErrorInvalidValue);
  flush_all();  // cudaFree waits for the device
  g_device_used -= (it->second.size + 255) / 256 * 256;
  g_allocs.erase(it);
  std::free(p);
  return done();
}

cudaError_t cudaHostAlloc(void ** p, size_t size, unsigned int) {
  SIM_LOCK;
  *p = nullptr;
  // A limit on one pinned allocation lets a test take the backend's pageable-host-copy path.
  if (size > env_size("RT_CUDA_SIM_PINNED_MAX_BYTES", SIZE_MAX)) return fail(cudaErrorMemoryAllocation);
  void * m = std::aligned_alloc(4096, (std::max<size_t>(size, 1) + 4095) / 4096 * 4096);
  if (m == nullptr) return fail(cudaErrorMemoryAllocation);
  g_allocs[reinterpret_cast<uintptr_t>(m)] = {size, space::pinned};
  *p = m;
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void ** p, size_t size) { return cudaHostAlloc(p, size, 0); }

cudaError_t cudaFreeHost(void * p) {
  SIM_LOCK;
  if (p == nullptr) return cudaSuccess;
  auto it = g_allocs.find(reinterpret_cast<uintptr_t>(p));
  if (it == g_allocs.end() || it->second.where != space::pinned) return fail(cudaErrorInvalidValue);
  flush_all();
  g_allocs.erase(it);
  std::free(p);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t * free_b, size_t * total_b) {
  SIM_LOCK;
  *total_b = device_total();
  *free_b = device_total() - g_device_used;
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void * dst, const void * src, size_t n, cudaMemcpyKind kind) {
  SIM_LOCK;
  return do_copy(dst, src, n, kind, nullptr, false, "cudaMemcpy");
}

cudaError_t cudaMemcpyAsync(void * dst, const void * src, size_t n, cudaMemcpyKind kind, cudaStream_t stream) {
  SIM_LOCK;
  return do_copy(dst, src, n, kind, stream, true, "cudaMemcpyAsync");
}

cudaError_t cudaMemset(void * p, int value, size_t n) {
  SIM_LOCK;
  if (n == 0) return cudaSuccess;
  if (kind_of(p, n, "cudaMemset", "destination") != mem_kind::device) return fail(cudaErrorInvalidValue);
  if (cudaError_t e = refuse_if_capturing("cudaMemset"); e != cudaSuccess) return e;
  flush_blocking();
  if (g_sticky == cudaSuccess) std::memset(p, value, n);
  return done();
}

cudaError_t cudaMemsetAsync(void * p, int value, size_t n, cudaStream_t stream) {
  SIM_LOCK;
  if (n == 0) return cudaSuccess;
  if (kind_of(p, n, "cudaMemsetAsync", "destination") != mem_kind::device) return fail(cudaErrorInvalidValue);
  if (g_sticky != cudaSuccess) return fail(g_sticky);
  op o;
  o.fn = [p, value, n]() { std::memset(p, value, n); };
  return submit(stream, std::move(o), "cudaMemsetAsync");
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t * s, unsigned int flags) {
  SIM_LOCK;
  auto * st = new CUstream_st();
  st->flags = flags;
  g_streams.push_back(st);
  *s = st;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t * s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  SIM_LOCK;
  if (s == nullptr) return cudaSuccess;
  auto it = std::find(g_streams.begin(), g_streams.end(), s);
  if (it == g_streams.end()) return fail(cudaErrorInvalidResourceHandle);
  flush(s, UINT64_MAX);  // CUDA finishes the queued work before releasing the stream
  g_streams.erase(it);
  delete s;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  SIM_LOCK;
  if (s == nullptr || s == cudaStreamLegacy) {
    if (cudaError_t e = refuse_if_capturing("cudaStreamSynchronize of the legacy stream"); e != cudaSuccess) return e;
    flush_blocking();
  } else if (s->capture != nullptr) {
    s->capture_invalid = true;
    return fail(cudaErrorStreamCaptureUnsupported);
  } else {
    flush(s, UINT64_MAX);
  }
  return done();
}

// A profiler's collection range: nothing to collect here.
cudaError_t cudaProfilerStart() { return cudaSuccess; }
cudaError_t cudaProfilerStop() { return cudaSuccess; }

cudaError_t cudaDeviceSynchronize() {
  SIM_LOCK;
  if (cudaError_t e = refuse_if_capturing("cudaDeviceSynchronize"); e != cudaSuccess) return e;
  flush_all();
  return done();
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t * e, unsigned int flags) {
  SIM_LOCK;
  auto * ev = new CUevent_st();
  ev->flags = flags;
  *e = ev;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t * e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  SIM_LOCK;
  if (e == nullptr) return fail(cudaErrorInvalidResourceHandle);
  g_dead_events.emplace_back(e);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  SIM_LOCK;
  if (g_sticky != cudaSuccess) return fail(g_sticky);
  op o;
  o.kind = op::record;
  o.event = e;
  o.token = ++g_token;
  if (!in_captured_stream(s)) {
    e->last = o.token;
    e->reported_pending = false;
  }
  return submit(s, std::move(o), "cudaEventRecord");
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
  SIM_LOCK;
  if (g_sticky != cudaSuccess) return fail(g_sticky);
  if (e->last == 0) return cudaSuccess;  // never recorded: nothing to wait for
  op o;
  o.kind = op::wait;
  o.event = e;
  o.token = e->last;
  return submit(s, std::move(o), "cudaStreamWaitEvent");
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  SIM_LOCK;
  if (cudaError_t err = refuse_if_capturing("cudaEventQuery"); err != cudaSuccess) return err;
  if (e->done >= e->last) return done();
  // The first query of pending work says "not ready" (so that path runs); the work then completes.
  if (!e->reported_pending) {
    e->reported_pending = true;
    wait_for(e, e->last);
    return cudaErrorNotReady;
  }
  wait_for(e, e->last);
  return done();
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  SIM_LOCK;
  if (cudaError_t err = refuse_if_capturing("cudaEventSynchronize"); err != cudaSuccess) return err;
  wait_for(e, e->last);
  return done();
}

cudaError_t cudaEventElapsedTime(float * ms, cudaEvent_t start, cudaEvent_t end) {
  SIM_LOCK;
  if ((start->flags & cudaEventDisableTiming) != 0 || (end->flags & cudaEventDisableTiming) != 0) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  if (start->done < start->last || end->done < end->last || start->last == 0 || end->last == 0) {
    return fail(cudaErrorNotReady);
  }
  *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  SIM_LOCK;
  if (s == nullptr || s == cudaStreamLegacy || s->capture != nullptr) return fail(cudaErrorStreamCaptureUnsupported);
  if (g_sticky != cudaSuccess) return fail(g_sticky);
  flush(s, UINT64_MAX);
  s->capture = new CUgraph_st();
  s->capture_invalid = false;
  ++g_capturing;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t * graph) {
  SIM_LOCK;
  *graph = nullptr;
  if (!in_captured_stream(s)) return fail(cudaErrorInvalidValue);
  CUgraph_st * g = s->capture;
  s->capture = nullptr;
  --g_capturing;
  if (s->capture_invalid) {
    delete g;
    return fail(cudaErrorStreamCaptureInvalidated);
  }
  *graph = g;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t * exec, cudaGraph_t graph, unsigned long long) {
  SIM_LOCK;
  auto * x = new CUgraphExec_st();
  x->ops = graph->ops;
  *exec = x;
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  SIM_LOCK;
  if (g_sticky != cudaSuccess) return fail(g_sticky);
  for (const op & captured : exec->ops) {
    op o = captured;
    if (o.kind == op::record) {
      o.token = ++g_token;
      o.event->last = o.token;
      o.event->reported_pending = false;
    }
    if (cudaError_t e = submit(s, std::move(o), "cudaGraphLaunch"); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// Only the count: the backend reads how many operations a captured step holds.
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t * nodes, size_t * count) {
  SIM_LOCK;
  if (graph == nullptr || count == nullptr || nodes != nullptr) return fail(cudaErrorInvalidValue);
  *count = graph->ops.size();
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  SIM_LOCK;
  delete g;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) {
  SIM_LOCK;
  delete x;
  return cudaSuccess;
}
