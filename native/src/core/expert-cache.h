#pragma once
// Host-side bookkeeping of "resident-qpacked-cache-v1": a fixed number of GPU expert slots per layer filled from a
// complete, immutable host copy of every packed expert. Pure C++ (no CUDA): the device side is an
// `expert_copy_engine` that performs host-to-device copies only, so the logic is testable on a CPU-only machine.
//
// Life of a routed group: `begin_acquire` leases hits, reserves an unpublished slot and a staging buffer per miss
// and starts its copy; `finish_acquire` waits for those copies and publishes each slot under a new generation;
// `release` ends the lease. A leased slot is never chosen for eviction; eviction only forgets the GPU copy.
//
// When the engine throws (a failed copy, or a device error seen while waiting for one), no copy whose completion
// was not observed is ever published: every loading slot goes back to empty, the cache records the fault and refuses
// further acquisitions. Leases already handed out stay valid for `release`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rt {

/** Sizes of the cache; `slots_per_layer == n_experts` is full residency. */
struct expert_cache_config {
  int n_layers = 0;
  int n_experts = 0;
  int slots_per_layer = 0;
  int staging_buffers = 0;       // bounded pinned staging; each in-flight copy holds one
  size_t expert_bytes = 0;       // bytes of one packed expert (gate + up + down qweight and scales)
  size_t staging_bytes = 0;      // bytes of one staging buffer (>= expert_bytes)
};

/** One host-to-device copy the cache asks for; `staging` indexes a staging buffer held until completion. */
struct expert_copy_request {
  uint64_t ticket = 0;
  int layer = 0;
  int expert = 0;
  int slot = 0;
  int staging = 0;
  size_t bytes = 0;
};

/** The device side: starts host-to-device copies and reports their completion. There is no device-to-host call. */
class expert_copy_engine {
 public:
  virtual ~expert_copy_engine() = default;
  /** Starts an asynchronous host-to-device copy; must not block on its completion. */
  virtual void start_copy(const expert_copy_request & request) = 0;
  /** True once the copy with `ticket` completed (non-blocking). */
  virtual bool copy_done(uint64_t ticket) = 0;
  /** Blocks until the copy with `ticket` completed. */
  virtual void wait_copy(uint64_t ticket) = 0;
};

/** Counters of cache traffic since the last reset. */
struct expert_cache_counters {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  uint64_t h2d_bytes = 0;
  uint64_t d2h_bytes = 0;  // always 0: the cache never copies device memory back
};

/** Slots granted to one routed group; `slots[i]` holds `experts[i]`. Valid until `release`. */
struct expert_lease {
  uint64_t id = 0;
  int layer = 0;
  uint64_t generation = 0;      // cache generation at which every slot of the group was published
  std::vector<int> experts;
  std::vector<int> slots;
  std::vector<uint64_t> pending;  // tickets still in flight (empty after finish_acquire)
};

/** Slots per layer that fit `budget_bytes` (capped at n_experts); 0 when not even one slot per layer fits. */
int expert_cache_slots_for_budget(int64_t budget_bytes, size_t expert_bytes, int n_layers, int n_experts);

/** Empty when `config` is usable, else a startup error message that names the missing resource. */
std::string expert_cache_check_config(const expert_cache_config & config);

class expert_cache {
 public:
  /** `config` must pass expert_cache_check_config; the engine must outlive the cache. */
  expert_cache(const expert_cache_config & config, expert_copy_engine & engine);

  const expert_cache_config & config() const { return config_; }

  /**
   * Splits a layer's routed experts (duplicates ignored) into stages of at most slots_per_layer experts, resident
   * ones first; the stages are disjoint and their union is exactly the routed set.
   */
  std::vector<std::vector<int>> plan_stages(int layer, const std::vector<int> & routed) const;

  /**
   * Leases a slot for each expert (at most slots_per_layer, no duplicates) and starts copies for misses.
   * Returns false with `error` set when not enough unleased slots exist or after a fault (nothing is changed then).
   * An exception of the engine is passed on after recording the fault; the group is then not leased.
   */
  bool begin_acquire(int layer, const std::vector<int> & experts, expert_lease & lease, std::string & error);
  /** Waits for the lease's copies and publishes their slots; afterwards every slot of the lease is readable. An
   * exception of the engine is passed on after recording the fault; the lease must still be released. */
  void finish_acquire(expert_lease & lease);
  /** Ends a lease; its slots become eligible for eviction again. */
  void release(const expert_lease & lease);

  /** Published slot of an expert, or -1 when the expert has no readable GPU copy. */
  int slot_of(int layer, int expert) const;
  /** Generation at which a slot was last published (0 = never). */
  uint64_t slot_generation(int layer, int slot) const;
  /** Number of leases currently holding a slot. */
  int slot_leases(int layer, int slot) const;
  /** Current generation (incremented by each publication). */
  uint64_t generation() const { return generation_; }
  /** Copies started but not yet observed complete. */
  int copies_in_flight() const;

  /** Empty, or the engine's error that made the cache refuse further acquisitions. */
  const std::string & fault() const { return fault_; }

  expert_cache_counters counters() const { return counters_; }
  void counters_reset() { counters_ = expert_cache_counters{}; }

 private:
  enum class slot_state { empty, loading, ready };
  struct slot_info {
    slot_state state = slot_state::empty;
    int expert = -1;
    int leases = 0;
    uint64_t last_use = 0;
    uint64_t generation = 0;
    uint64_t ticket = 0;
  };
  struct in_flight {
    uint64_t ticket = 0;
    int layer = 0;
    int slot = 0;
    int staging = 0;
  };

  slot_info & slot(int layer, int s) { return slots_[static_cast<size_t>(layer) * config_.slots_per_layer + s]; }
  const slot_info & slot(int layer, int s) const {
    return slots_[static_cast<size_t>(layer) * config_.slots_per_layer + s];
  }
  int find_slot(int layer, int expert) const;
  int reserve_staging();
  void complete(const in_flight & copy);
  void reap_done();
  void record_fault(const char * what);

  expert_cache_config config_;
  expert_copy_engine & engine_;
  std::vector<slot_info> slots_;
  std::vector<bool> staging_busy_;
  std::vector<in_flight> in_flight_;
  expert_cache_counters counters_;
  uint64_t generation_ = 0;
  uint64_t tick_ = 0;
  uint64_t next_ticket_ = 1;
  uint64_t next_lease_ = 1;
  std::string fault_;
};

}  // namespace rt
