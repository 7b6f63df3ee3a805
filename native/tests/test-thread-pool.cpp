// thread_pool: every index of [0, n) is visited exactly once for each pool size, and an exception thrown by one
// chunk reaches the caller (instead of terminating the process) while the pool stays usable.
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/thread-pool.h"
#include "test-helpers.h"

int main() {
  for (int threads : {1, 2, 3, 8}) {
    rt::thread_pool pool(threads);
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000}}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      int wrong = 0;
      for (auto & h : hits) wrong += h.load() != 1;
      CHECK(wrong == 0, "threads=%d n=%lld: %d indices not visited exactly once", threads, static_cast<long long>(n), wrong);
    }

    std::string caught;
    try {
      pool.parallel_for(1000, [&](int64_t b, int64_t e) {
        if (b <= 500 && 500 < e) throw std::runtime_error("chunk with 500 failed");
      });
    } catch (const std::runtime_error & err) {
      caught = err.what();
    }
    CHECK(caught == "chunk with 500 failed", "threads=%d: caller got '%s'", threads, caught.c_str());

    std::atomic<int64_t> sum{0};
    pool.parallel_for(100, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum.fetch_add(i);
    });
    CHECK(sum.load() == 4950, "threads=%d: pool unusable after an exception (sum %lld)", threads, static_cast<long long>(sum.load()));
  }
  if (test_util::g_failures == 0) std::printf("test-thread-pool: ok\n");
  return test_util::g_failures == 0 ? 0 : 1;
}
