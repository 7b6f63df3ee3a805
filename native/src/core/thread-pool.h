#pragma once
// A small fixed thread pool: parallel_for splits [0, n) into chunks that the workers and the caller take in turn.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rt {

class thread_pool {
 public:
  /** `threads` total workers including the caller; <= 0 means default_cpu_threads() (core/cpu-topology.h). */
  explicit thread_pool(int threads);
  ~thread_pool();
  thread_pool(const thread_pool &) = delete;
  thread_pool & operator=(const thread_pool &) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  /**
   * Calls fn(begin, end) over disjoint ranges covering [0, n); returns when all are done. Not reentrant. If a call
   * throws, the ranges not yet started are skipped and the first exception is rethrown in the caller.
   */
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)> & fn, int64_t min_chunk = 1);

 private:
  void worker_loop();
  void run_chunks();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  uint64_t generation_ = 0;
  int busy_ = 0;
  // Mirrors of generation_ and busy_ that waiting threads poll for a few microseconds before sleeping on the
  // condition variables: a decode step runs over a hundred parallel_for calls, and a sleep and wake-up each costs
  // tens of microseconds.
  std::atomic<uint64_t> generation_seen_{0};
  std::atomic<int> busy_seen_{0};
  bool stop_ = false;
  const std::function<void(int64_t, int64_t)> * fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 1;
  std::atomic<int64_t> next_{0};
  std::exception_ptr error_;
};

}  // namespace rt
