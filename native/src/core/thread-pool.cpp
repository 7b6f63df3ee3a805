#include "core/thread-pool.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/cpu-topology.h"

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#define RT_CPU_RELAX() _mm_pause()
#else
#define RT_CPU_RELAX() std::this_thread::yield()
#endif

namespace rt {

namespace {

/** Polls `done` for up to about 50 microseconds; true as soon as it holds. */
template <class F>
bool spin_until(F done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  for (int i = 0;; ++i) {
    if (done()) return true;
    RT_CPU_RELAX();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return false;
  }
}

}  // namespace

thread_pool::thread_pool(int threads) {
  if (threads <= 0) threads = default_cpu_threads();
  try {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  } catch (...) {
    // The system refused a thread: stop and join the ones started (destroying them joinable would terminate,
    // and the members' destructors would wait on a condition variable they still block on).
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_start_.notify_all();
    for (auto & t : workers_) t.join();
    throw;
  }
}

thread_pool::~thread_pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_start_.notify_all();
  for (auto & t : workers_) t.join();
}

void thread_pool::run_chunks() {
  while (true) {
    const int64_t b = next_.fetch_add(chunk_);
    if (b >= n_) break;
    try {
      (*fn_)(b, std::min(n_, b + chunk_));
    } catch (...) {
      // An exception escaping a worker thread would call std::terminate; hand it to the caller instead.
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      next_.store(n_);
    }
  }
}

void thread_pool::worker_loop() {
  uint64_t seen = 0;
  while (true) {
    spin_until([&] { return generation_seen_.load(std::memory_order_acquire) != seen; });
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    run_chunks();
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_seen_.store(busy_ - 1, std::memory_order_release);
      if (--busy_ == 0) cv_done_.notify_one();
    }
  }
}

void thread_pool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)> & fn, int64_t min_chunk) {
  if (n <= 0) return;
  const int64_t parts = static_cast<int64_t>(size()) * 4;
  const int64_t chunk = std::max<int64_t>(std::max<int64_t>(min_chunk, 1), (n + parts - 1) / parts);
  if (workers_.empty() || chunk >= n) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    next_.store(0);
    error_ = nullptr;
    busy_ = static_cast<int>(workers_.size());
    busy_seen_.store(busy_, std::memory_order_relaxed);
    ++generation_;
    generation_seen_.store(generation_, std::memory_order_release);
  }
  cv_start_.notify_all();
  run_chunks();
  spin_until([&] { return busy_seen_.load(std::memory_order_acquire) == 0; });
  std::unique_lock<std::mutex> lock(mu_);
  cv_done_.wait(lock, [&] { return busy_ == 0; });
  fn_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace rt
