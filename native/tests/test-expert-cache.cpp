// Host-side expert cache (core/expert-cache.h) driven by a fake copy engine that completes copies only when asked.
// Each check is a CHECK(cond, message); to add a case write a `static void test_<what>()` and call it from main.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/expert-cache.h"

static int failures = 0;
#define CHECK(cond, msg)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, msg, #cond); \
      ++failures;                                                            \
    }                                                                        \
  } while (0)

namespace {

// Records every request; a copy completes only when the test calls finish() or the cache calls wait_copy().
struct fake_engine : rt::expert_copy_engine {
  std::vector<rt::expert_copy_request> requests;
  std::set<uint64_t> done;
  int max_in_flight = 0;
  std::set<int> staging_in_use;
  bool staging_conflict = false;
  int fail_start_at = -1;        // index of the start_copy call that throws (-1: none)
  uint64_t fail_wait_ticket = 0;  // ticket whose wait_copy throws (0: none)

  void start_copy(const rt::expert_copy_request & r) override {
    if (static_cast<int>(requests.size()) == fail_start_at) throw std::runtime_error("device fault in start_copy");
    if (staging_in_use.count(r.staging) != 0) staging_conflict = true;
    staging_in_use.insert(r.staging);
    requests.push_back(r);
    max_in_flight = std::max(max_in_flight, in_flight());
  }
  bool copy_done(uint64_t ticket) override {
    if (done.count(ticket) == 0) return false;
    release_staging(ticket);
    return true;
  }
  void wait_copy(uint64_t ticket) override {
    if (ticket == fail_wait_ticket) throw std::runtime_error("device fault in wait_copy");
    done.insert(ticket);
    release_staging(ticket);
  }
  void finish(uint64_t ticket) { done.insert(ticket); }
  int in_flight() const { return static_cast<int>(staging_in_use.size()); }
  void release_staging(uint64_t ticket) {
    for (const auto & r : requests) {
      if (r.ticket == ticket) staging_in_use.erase(r.staging);
    }
  }
};

rt::expert_cache_config small_config(int slots, int staging) {
  rt::expert_cache_config c;
  c.n_layers = 2;
  c.n_experts = 8;
  c.slots_per_layer = slots;
  c.staging_buffers = staging;
  c.expert_bytes = 1000;
  c.staging_bytes = 1000;
  return c;
}

bool acquire(rt::expert_cache & cache, int layer, const std::vector<int> & experts, rt::expert_lease & lease) {
  std::string error;
  if (!cache.begin_acquire(layer, experts, lease, error)) return false;
  cache.finish_acquire(lease);
  return true;
}

void test_hit_miss_evict_order() {
  fake_engine eng;
  rt::expert_cache cache(small_config(3, 2), eng);
  rt::expert_lease l;
  CHECK(acquire(cache, 0, {1, 2, 3}, l), "first group fits");
  cache.release(l);
  CHECK(cache.counters().misses == 3 && cache.counters().hits == 0, "three cold misses");
  CHECK(acquire(cache, 0, {2}, l), "hit");
  cache.release(l);
  CHECK(cache.counters().hits == 1, "expert 2 is a hit");
  // LRU order now: 1 (oldest), 3, 2. A new expert evicts 1.
  CHECK(acquire(cache, 0, {5}, l), "miss with eviction");
  cache.release(l);
  CHECK(cache.slot_of(0, 1) == -1, "least recently used expert 1 was evicted");
  CHECK(cache.slot_of(0, 3) >= 0 && cache.slot_of(0, 2) >= 0 && cache.slot_of(0, 5) >= 0, "others stay resident");
  CHECK(cache.counters().evictions == 1, "one eviction counted");
  CHECK(cache.counters().h2d_bytes == 4000, "h2d bytes = 4 misses x expert bytes");
  CHECK(cache.counters().d2h_bytes == 0, "no device-to-host traffic");
  CHECK(cache.slot_of(1, 2) == -1, "layers are independent");
  cache.counters_reset();
  CHECK(cache.counters().misses == 0 && cache.counters().hits == 0, "reset clears counters");
}

void test_leased_slot_never_reused() {
  fake_engine eng;
  rt::expert_cache cache(small_config(2, 1), eng);
  rt::expert_lease old_reader;
  CHECK(acquire(cache, 0, {0, 1}, old_reader), "old reader holds both slots");
  const uint64_t old_gen = old_reader.generation;
  rt::expert_lease l;
  std::string error;
  CHECK(!cache.begin_acquire(0, {4}, l, error), "no slot while both are leased");
  CHECK(error.find("not leased") != std::string::npos, "error says slots are leased");
  CHECK(cache.slot_of(0, 0) == old_reader.slots[0] && cache.slot_of(0, 1) == old_reader.slots[1],
        "old reader's slots are untouched");
  cache.release(old_reader);
  CHECK(acquire(cache, 0, {4}, l), "slot available after release");
  CHECK(l.generation > old_gen, "new group is published under a newer generation");
  cache.release(l);

  // A reader of expert 4 keeps it; a later group may only take the other slot.
  rt::expert_lease reader4;
  CHECK(acquire(cache, 0, {4}, reader4), "reader of expert 4");
  const int slot4 = reader4.slots[0];
  for (int e : {5, 6, 7}) {
    rt::expert_lease x;
    CHECK(acquire(cache, 0, {e}, x), "single-expert group");
    CHECK(x.slots[0] != slot4, "leased slot is never the victim");
    cache.release(x);
  }
  CHECK(cache.slot_of(0, 4) == slot4, "leased expert still resident");
  cache.release(reader4);
}

void test_publication_after_completion() {
  fake_engine eng;
  rt::expert_cache cache(small_config(4, 4), eng);
  rt::expert_lease l;
  std::string error;
  CHECK(cache.begin_acquire(1, {3, 6}, l, error), "begin");
  CHECK(eng.requests.size() == 2, "two copies started");
  CHECK(cache.slot_of(1, 3) == -1 && cache.slot_of(1, 6) == -1, "unpublished while copies run");
  CHECK(cache.slot_generation(1, l.slots[0]) == 0, "slot has no generation before completion");
  eng.finish(eng.requests[0].ticket);
  CHECK(cache.slot_of(1, 3) == -1, "completion is observed by the cache, not assumed");
  cache.finish_acquire(l);
  CHECK(cache.slot_of(1, 3) == l.slots[0] && cache.slot_of(1, 6) == l.slots[1], "published after completion");
  CHECK(cache.slot_generation(1, l.slots[1]) == l.generation, "lease generation covers all its slots");
  CHECK(cache.copies_in_flight() == 0, "nothing in flight after finish");
  for (const auto & r : eng.requests) CHECK(r.bytes == 1000 && r.layer == 1, "request carries layer and bytes");
  for (size_t i = 0; i < 2; ++i) {
    CHECK(eng.requests[i].expert == l.experts[i] && eng.requests[i].slot == l.slots[i],
          "request names the expert and the slot the lease reads it from");
  }
  CHECK(eng.requests[0].ticket != eng.requests[1].ticket, "each copy has its own ticket");

  // A second group asking for an expert whose copy is in flight waits for that copy, it does not copy again.
  rt::expert_lease a;
  rt::expert_lease b;
  CHECK(cache.begin_acquire(1, {5}, a, error), "begin a");
  CHECK(cache.begin_acquire(1, {5}, b, error), "begin b on the same expert");
  CHECK(eng.requests.size() == 3, "one copy for expert 5");
  CHECK(b.pending.size() == 1, "b waits for a's copy");
  cache.finish_acquire(b);
  cache.finish_acquire(a);
  CHECK(a.slots[0] == b.slots[0] && cache.slot_of(1, 5) == a.slots[0], "same slot for both readers");
  CHECK(cache.slot_leases(1, a.slots[0]) == 2, "two leases on the shared slot");
  cache.release(a);
  cache.release(b);
  cache.release(l);
}

void test_staging_bounded_and_reused() {
  fake_engine eng;
  rt::expert_cache cache(small_config(8, 2), eng);
  rt::expert_lease l;
  CHECK(acquire(cache, 0, {0, 1, 2, 3, 4, 5, 6}, l), "seven misses through two staging buffers");
  CHECK(eng.requests.size() == 7, "seven copies");
  CHECK(eng.max_in_flight <= 2, "never more copies in flight than staging buffers");
  CHECK(!eng.staging_conflict, "a staging buffer is reused only after its copy completed");
  std::set<int> used;
  for (const auto & r : eng.requests) used.insert(r.staging);
  CHECK(used.size() == 2 && *used.begin() == 0 && *used.rbegin() == 1, "both buffers reused");
  cache.release(l);
}

void test_plan_stages() {
  fake_engine eng;
  rt::expert_cache cache(small_config(3, 1), eng);
  rt::expert_lease l;
  CHECK(acquire(cache, 0, {6, 7}, l), "make 6 and 7 resident");
  cache.release(l);
  const std::vector<int> routed = {0, 6, 2, 7, 2, 5, 1, 0, 3};
  const auto stages = cache.plan_stages(0, routed);
  std::set<int> uni;
  size_t total = 0;
  for (const auto & s : stages) {
    CHECK(!s.empty() && s.size() <= 3, "a stage fits the slots");
    total += s.size();
    uni.insert(s.begin(), s.end());
  }
  CHECK(uni == std::set<int>(routed.begin(), routed.end()), "union of stages is the routed set");
  CHECK(total == uni.size(), "stages are disjoint");
  CHECK(stages.size() == 3, "7 experts over 3 slots = 3 stages");
  CHECK(std::count(stages[0].begin(), stages[0].end(), 6) == 1 && std::count(stages[0].begin(), stages[0].end(), 7) == 1,
        "resident experts run in the first stage");
  CHECK(stages[0] == std::vector<int>({6, 7, 0}) && stages[1] == std::vector<int>({2, 5, 1}) && stages[2] == std::vector<int>({3}),
        "resident experts first, then the missing ones, each in first-routed order");
  // Running every stage leaves D2H at zero and computes each routed expert exactly once.
  std::map<int, int> computed;
  for (const auto & s : stages) {
    rt::expert_lease sl;
    CHECK(acquire(cache, 0, s, sl), "stage acquired");
    for (int e : sl.experts) ++computed[e];
    cache.release(sl);
  }
  for (int e : uni) CHECK(computed[e] == 1, "each routed expert in exactly one stage");
  CHECK(cache.counters().d2h_bytes == 0, "still no D2H");
  CHECK(cache.plan_stages(0, {}).empty(), "nothing routed, no stage");
}

void test_startup_errors() {
  CHECK(rt::expert_cache_slots_for_budget(int64_t(10) * 1000, 1000, 2, 8) == 5, "budget to slots");
  CHECK(rt::expert_cache_slots_for_budget(int64_t(1) << 40, 1000, 2, 8) == 8, "budget capped at all experts");
  CHECK(rt::expert_cache_slots_for_budget(1999, 1000, 2, 8) == 0, "budget below one slot per layer");
  CHECK(rt::expert_cache_slots_for_budget(-5000, 1000, 2, 8) == 0, "negative budget gives no slot");
  CHECK(rt::expert_cache_slots_for_budget(5000, 0, 2, 8) == 0, "experts of 0 bytes give no slot");
  CHECK(rt::expert_cache_slots_for_budget(5000, 1000, 0, 8) == 0, "no layers give no slot");
  for (int field = 0; field < 3; ++field) {
    auto none = small_config(2, 1);
    if (field == 0) none.n_layers = 0;
    if (field == 1) none.n_experts = 0;
    if (field == 2) none.expert_bytes = 0;
    CHECK(rt::expert_cache_check_config(none).find("no routed experts") != std::string::npos, "model without experts named");
  }
  CHECK(rt::expert_cache_check_config(small_config(1, 1)).empty(), "one slot per layer is enough");
  auto c = small_config(0, 1);
  std::string m = rt::expert_cache_check_config(c);
  CHECK(m.find("0 GPU expert slots") != std::string::npos, "zero slots named");
  c.expert_bytes = size_t(3) << 19;
  m = rt::expert_cache_check_config(c);
  CHECK(m.find("(3.0 MiB for 2 layers)") != std::string::npos, "one slot per layer's size in MiB");
  c = small_config(2, 0);
  m = rt::expert_cache_check_config(c);
  CHECK(m.find("staging") != std::string::npos, "missing staging named");
  c = small_config(2, 1);
  c.staging_bytes = 10;
  m = rt::expert_cache_check_config(c);
  CHECK(m.find("smaller than one packed expert") != std::string::npos, "small staging named");
  c = small_config(9, 1);
  CHECK(!rt::expert_cache_check_config(c).empty(), "more slots than experts rejected");
  CHECK(rt::expert_cache_check_config(small_config(2, 1)).empty(), "valid config accepted");
  fake_engine eng;
  bool threw = false;
  try {
    rt::expert_cache bad(small_config(0, 1), eng);
  } catch (const std::exception & e) {
    threw = std::string(e.what()).find("slots") != std::string::npos;
  }
  CHECK(threw, "constructor refuses an invalid config with the message");
  rt::expert_cache cache(small_config(2, 1), eng);
  rt::expert_lease l;
  std::string error;
  CHECK(!cache.begin_acquire(0, {1, 2, 3}, l, error) && error.find("plan stages") != std::string::npos,
        "group larger than the slots is refused");
  CHECK(!cache.begin_acquire(0, {1, 1}, l, error), "duplicate expert refused");
  CHECK(eng.requests.empty(), "refused groups start no copy");
}

// A copy that fails (starting it, or found failed while waiting) is never published, the group that asked for it
// holds no lease afterwards (or still holds one it can release), and the cache refuses further loads with the cause.
void test_fault_in_start_copy() {
  fake_engine eng;
  rt::expert_cache cache(small_config(4, 4), eng);
  rt::expert_lease ok;
  CHECK(acquire(cache, 0, {7}, ok), "expert 7 resident before the fault");
  cache.release(ok);
  eng.fail_start_at = 2;  // the second miss of the next group
  rt::expert_lease l;
  std::string error;
  std::string thrown;
  try {
    cache.begin_acquire(0, {7, 1, 2}, l, error);
  } catch (const std::exception & e) {
    thrown = e.what();
  }
  CHECK(thrown == "device fault in start_copy", "the engine's exception is passed on");
  CHECK(l.slots.empty() && l.experts.empty(), "no lease is handed out for the failed group");
  for (int s = 0; s < 4; ++s) CHECK(cache.slot_leases(0, s) == 0, "the failed group's slots are not leased");
  CHECK(cache.slot_of(0, 1) == -1 && cache.slot_of(0, 2) == -1, "neither copy of the failed group is published");
  CHECK(cache.slot_of(0, 7) >= 0, "a copy published before the fault stays readable");
  CHECK(cache.copies_in_flight() == 0, "no copy is waited for after the fault");
  CHECK(cache.fault() == "device fault in start_copy", "the fault is recorded");
  const auto after = cache.plan_stages(0, {3, 1, 2, 7});
  CHECK(after.size() == 1 && after[0] == std::vector<int>({7, 3, 1, 2}),
        "the discarded copies of 1 and 2 no longer count as resident");
  const size_t started = eng.requests.size();
  CHECK(!cache.begin_acquire(0, {3}, l, error), "no load after a fault");
  CHECK(error.find("after a failed copy") != std::string::npos && error.find("start_copy") != std::string::npos,
        "the refusal names the fault");
  CHECK(eng.requests.size() == started, "the refusal starts no copy");
  CHECK(cache.counters().d2h_bytes == 0, "no D2H");
}

void test_fault_in_wait_copy() {
  fake_engine eng;
  rt::expert_cache cache(small_config(4, 4), eng);
  rt::expert_lease a;
  rt::expert_lease b;
  std::string error;
  CHECK(cache.begin_acquire(1, {4, 5}, a, error), "begin a");
  CHECK(cache.begin_acquire(1, {5}, b, error), "b shares a's copy of 5");
  eng.fail_wait_ticket = eng.requests[1].ticket;  // expert 5
  std::string thrown;
  try {
    cache.finish_acquire(a);
  } catch (const std::exception & e) {
    thrown = e.what();
  }
  CHECK(thrown == "device fault in wait_copy", "the wait's exception is passed on");
  CHECK(cache.slot_of(1, 5) == -1, "the copy whose wait failed is not published");
  CHECK(cache.fault() == "device fault in wait_copy", "the fault is recorded");
  thrown.clear();
  try {
    cache.finish_acquire(b);
  } catch (const std::exception & e) {
    thrown = e.what();
  }
  CHECK(thrown.find("a copy this group waited for failed") != std::string::npos,
        "a group waiting for the discarded copy is not told it is readable");
  cache.release(a);
  cache.release(b);
  for (int s = 0; s < 4; ++s) CHECK(cache.slot_leases(1, s) == 0, "leases are released after a fault");
  rt::expert_lease c;
  CHECK(!cache.begin_acquire(1, {4}, c, error) && error.find("wait_copy") != std::string::npos,
        "no load after the fault");
}


// Expert ids outside 0..n_experts-1 are refused like repeated ones, before any slot or copy is touched.
void test_invalid_expert_refused() {
  fake_engine eng;
  rt::expert_cache cache(small_config(4, 2), eng);
  rt::expert_lease l;
  std::string error;
  for (int bad : {-1, 8}) {
    error.clear();
    CHECK(!cache.begin_acquire(0, {1, bad}, l, error), "expert id outside the layer refused");
    CHECK(error.find("invalid or repeated expert " + std::to_string(bad)) != std::string::npos, "error names the id");
  }
  CHECK(!cache.begin_acquire(2, {1}, l, error) && error.find("layer 2 is out of range") != std::string::npos,
        "layer past the last refused");
  CHECK(!cache.begin_acquire(-1, {1}, l, error) && error.find("layer -1 is out of range") != std::string::npos,
        "negative layer refused");
  CHECK(eng.requests.empty() && cache.counters().misses == 0, "refused groups start no copy and count nothing");
  for (int s = 0; s < 4; ++s) CHECK(cache.slot_leases(0, s) == 0, "refused groups lease no slot");
}

// A layer's lookup sees only its own slots: an expert resident in the next layer is a miss here.
void test_layer_slots_disjoint() {
  fake_engine eng;
  rt::expert_cache cache(small_config(2, 1), eng);
  rt::expert_lease l;
  CHECK(acquire(cache, 1, {3}, l), "expert 3 resident in layer 1");
  cache.release(l);
  CHECK(cache.slot_of(1, 3) == 0, "layer 1 holds expert 3 in its first slot");
  CHECK(cache.slot_of(0, 3) == -1, "layer 0 does not see layer 1's expert 3");
  const auto stages = cache.plan_stages(0, {3, 5});
  CHECK(stages.size() == 1 && stages[0] == std::vector<int>({3, 5}), "expert 3 is not resident in layer 0");
  CHECK(acquire(cache, 0, {3}, l), "layer 0 group");
  CHECK(eng.requests.size() == 2 && eng.requests[1].layer == 0 && cache.counters().misses == 2,
        "expert 3 is copied again for layer 0");
  cache.release(l);
  // Layer 1's expert 3 is now the least recently used slot of the cache, yet a miss in layer 0 evicts within layer 0.
  CHECK(acquire(cache, 0, {4}, l), "fill layer 0");
  cache.release(l);
  CHECK(acquire(cache, 0, {6}, l), "miss in a full layer 0");
  CHECK(l.slots[0] >= 0 && l.slots[0] < 2, "the victim is one of layer 0's slots");
  CHECK(cache.slot_of(1, 3) == 0 && cache.slot_of(0, 3) == -1, "layer 1 keeps expert 3; layer 0 evicted its own LRU");
  cache.release(l);
}

// Eviction forgets the old expert at once: while the new copy runs the slot has no generation and neither expert
// is readable from it.
void test_evicted_slot_unpublished_while_loading() {
  fake_engine eng;
  rt::expert_cache cache(small_config(2, 2), eng);
  rt::expert_lease l;
  CHECK(acquire(cache, 0, {1, 2}, l), "fill both slots");
  cache.release(l);
  rt::expert_lease m;
  std::string error;
  CHECK(cache.begin_acquire(0, {5}, m, error), "miss that evicts");
  const int s = m.slots[0];
  CHECK(cache.slot_generation(0, s) == 0, "the victim slot has no generation while its new copy runs");
  CHECK(cache.slot_of(0, 1) == -1 && cache.slot_of(0, 5) == -1, "neither the old nor the new expert is readable");
  cache.finish_acquire(m);
  CHECK(cache.slot_of(0, 5) == s && cache.slot_generation(0, s) == m.generation, "published after the copy");
  cache.release(m);
}

// Recency counts from the end of a lease: of two overlapping leases the one released first is evicted first.
void test_lru_counts_release() {
  fake_engine eng;
  rt::expert_cache cache(small_config(2, 2), eng);
  rt::expert_lease a;
  rt::expert_lease b;
  CHECK(acquire(cache, 0, {0}, a), "a reads expert 0");
  CHECK(acquire(cache, 0, {1}, b), "b reads expert 1");
  CHECK(a.id != 0 && b.id != 0 && a.id != b.id, "each lease has its own id");
  cache.release(b);
  cache.release(a);
  rt::expert_lease c;
  CHECK(acquire(cache, 0, {2}, c), "miss");
  CHECK(cache.slot_of(0, 1) == -1 && cache.slot_of(0, 0) >= 0, "expert 1, released first, is the victim");
  cache.release(c);
  cache.release(c);
  CHECK(cache.slot_leases(0, c.slots[0]) == 0, "releasing a lease twice leaves no negative count");
  rt::expert_lease d;
  CHECK(acquire(cache, 0, {2}, d) && cache.slot_leases(0, c.slots[0]) == 1, "the slot is leased once again");
  cache.release(d);
}

}  // namespace

int main() {
  test_hit_miss_evict_order();
  test_leased_slot_never_reused();
  test_publication_after_completion();
  test_staging_bounded_and_reused();
  test_plan_stages();
  test_startup_errors();
  test_fault_in_start_copy();
  test_fault_in_wait_copy();
  test_invalid_expert_refused();
  test_layer_slots_disjoint();
  test_evicted_slot_unpublished_while_loading();
  test_lru_counts_release();
  if (failures != 0) {
    std::fprintf(stderr, "test-expert-cache: %d failure(s)\n", failures);
    return 1;
  }
  std::printf("test-expert-cache: ok\n");
  return 0;
}
