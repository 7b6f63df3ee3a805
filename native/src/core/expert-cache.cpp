#include "core/expert-cache.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>
#include <unordered_set>

namespace rt {

namespace {

std::string mib(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

int expert_cache_slots_for_budget(int64_t budget_bytes, size_t expert_bytes, int n_layers, int n_experts) {
  if (budget_bytes <= 0 || expert_bytes == 0 || n_layers <= 0) return 0;
  const int64_t per_slot_all_layers = static_cast<int64_t>(expert_bytes) * n_layers;
  const int64_t slots = budget_bytes / per_slot_all_layers;
  return static_cast<int>(std::min<int64_t>(slots, n_experts));
}

std::string expert_cache_check_config(const expert_cache_config & c) {
  if (c.n_layers <= 0 || c.n_experts <= 0 || c.expert_bytes == 0) {
    return "expert cache: the model has no routed experts to cache";
  }
  if (c.slots_per_layer < 1) {
    return "expert cache: the expert budget gives 0 GPU expert slots per layer; at least 1 slot per layer is needed (" +
           mib(c.expert_bytes * static_cast<size_t>(c.n_layers)) + " for " + std::to_string(c.n_layers) +
           " layers)";
  }
  if (c.slots_per_layer > c.n_experts) {
    return "expert cache: " + std::to_string(c.slots_per_layer) + " slots per layer exceed the " +
           std::to_string(c.n_experts) + " experts per layer";
  }
  if (c.staging_buffers < 1) {
    return "expert cache: no pinned staging buffer could be reserved (at least 1 of " + mib(c.expert_bytes) +
           " is needed)";
  }
  if (c.staging_bytes < c.expert_bytes) {
    return "expert cache: a staging buffer of " + std::to_string(c.staging_bytes) +
           " bytes is smaller than one packed expert (" + std::to_string(c.expert_bytes) + " bytes)";
  }
  return "";
}

expert_cache::expert_cache(const expert_cache_config & config, expert_copy_engine & engine)
    : config_(config), engine_(engine) {
  const std::string problem = expert_cache_check_config(config);
  if (!problem.empty()) throw std::invalid_argument(problem);
  slots_.resize(static_cast<size_t>(config.n_layers) * config.slots_per_layer);
  staging_busy_.assign(static_cast<size_t>(config.staging_buffers), false);
}

int expert_cache::find_slot(int layer, int expert) const {
  for (int s = 0; s < config_.slots_per_layer; ++s) {
    const slot_info & si = slot(layer, s);
    if (si.state != slot_state::empty && si.expert == expert) return s;
  }
  return -1;
}

int expert_cache::slot_of(int layer, int expert) const {
  const int s = find_slot(layer, expert);
  if (s < 0 || slot(layer, s).state != slot_state::ready) return -1;
  return s;
}

uint64_t expert_cache::slot_generation(int layer, int s) const { return slot(layer, s).generation; }

int expert_cache::slot_leases(int layer, int s) const { return slot(layer, s).leases; }

int expert_cache::copies_in_flight() const { return static_cast<int>(in_flight_.size()); }

std::vector<std::vector<int>> expert_cache::plan_stages(int layer, const std::vector<int> & routed) const {
  std::vector<int> resident;
  std::vector<int> missing;
  std::unordered_set<int> seen;
  for (int e : routed) {
    if (!seen.insert(e).second) continue;
    (find_slot(layer, e) >= 0 ? resident : missing).push_back(e);
  }
  std::vector<int> order = resident;
  order.insert(order.end(), missing.begin(), missing.end());
  std::vector<std::vector<int>> stages;
  const size_t per_stage = static_cast<size_t>(config_.slots_per_layer);
  for (size_t i = 0; i < order.size(); i += per_stage) {
    stages.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), i + per_stage)));
  }
  return stages;
}

void expert_cache::complete(const in_flight & copy) {
  slot_info & si = slot(copy.layer, copy.slot);
  si.state = slot_state::ready;
  si.generation = ++generation_;
  staging_busy_[static_cast<size_t>(copy.staging)] = false;
  in_flight_.erase(std::find_if(in_flight_.begin(), in_flight_.end(),
                                [&](const in_flight & f) { return f.ticket == copy.ticket; }));
}

void expert_cache::reap_done() {
  std::vector<in_flight> done;
  for (const in_flight & f : in_flight_) {
    if (engine_.copy_done(f.ticket)) done.push_back(f);
  }
  for (const in_flight & f : done) complete(f);
}

int expert_cache::reserve_staging() {
  for (;;) {
    for (size_t i = 0; i < staging_busy_.size(); ++i) {
      if (!staging_busy_[i]) {
        staging_busy_[i] = true;
        return static_cast<int>(i);
      }
    }
    reap_done();
    if (std::find(staging_busy_.begin(), staging_busy_.end(), false) != staging_busy_.end()) continue;
    // Every staging buffer is in flight: wait for the oldest copy, which frees its buffer.
    const in_flight oldest = in_flight_.front();
    engine_.wait_copy(oldest.ticket);
    complete(oldest);
  }
}

void expert_cache::record_fault(const char * what) {
  if (fault_.empty()) fault_ = what;
  for (slot_info & si : slots_) {
    if (si.state != slot_state::loading) continue;
    si.state = slot_state::empty;
    si.expert = -1;
    si.generation = 0;
    si.ticket = 0;
  }
  in_flight_.clear();
}

bool expert_cache::begin_acquire(int layer, const std::vector<int> & experts, expert_lease & lease,
                                 std::string & error) {
  if (!fault_.empty()) {
    error = "expert cache: no more experts can be loaded after a failed copy (" + fault_ + ")";
    return false;
  }
  if (layer < 0 || layer >= config_.n_layers) {
    error = "expert cache: layer " + std::to_string(layer) + " is out of range";
    return false;
  }
  if (static_cast<int>(experts.size()) > config_.slots_per_layer) {
    error = "expert cache: layer " + std::to_string(layer) + " group of " + std::to_string(experts.size()) +
            " experts exceeds the " + std::to_string(config_.slots_per_layer) + " slots per layer (plan stages first)";
    return false;
  }
  std::unordered_set<int> wanted;
  for (int e : experts) {
    if (e < 0 || e >= config_.n_experts || !wanted.insert(e).second) {
      error = "expert cache: layer " + std::to_string(layer) + " group has an invalid or repeated expert " +
              std::to_string(e);
      return false;
    }
  }

  int misses = 0;
  for (int e : experts) misses += find_slot(layer, e) < 0 ? 1 : 0;
  std::vector<int> victims;
  for (int s = 0; s < config_.slots_per_layer; ++s) {
    const slot_info & si = slot(layer, s);
    if (si.leases == 0 && si.state == slot_state::empty) victims.push_back(s);
  }
  std::vector<int> lru;
  for (int s = 0; s < config_.slots_per_layer; ++s) {
    const slot_info & si = slot(layer, s);
    if (si.leases == 0 && si.state == slot_state::ready && wanted.count(si.expert) == 0) lru.push_back(s);
  }
  std::sort(lru.begin(), lru.end(), [&](int a, int b) { return slot(layer, a).last_use < slot(layer, b).last_use; });
  victims.insert(victims.end(), lru.begin(), lru.end());
  if (static_cast<int>(victims.size()) < misses) {
    error = "expert cache: layer " + std::to_string(layer) + " needs " + std::to_string(misses) +
            " free slots but only " + std::to_string(victims.size()) + " of " +
            std::to_string(config_.slots_per_layer) + " are not leased";
    return false;
  }

  expert_lease granted;
  granted.id = next_lease_++;
  granted.layer = layer;
  size_t next_victim = 0;
  try {
    for (int e : experts) {
      int s = find_slot(layer, e);
      if (s >= 0) {
        slot_info & si = slot(layer, s);
        if (si.state == slot_state::loading) granted.pending.push_back(si.ticket);
        ++counters_.hits;
      } else {
        s = victims[next_victim++];
        slot_info & si = slot(layer, s);
        if (si.state == slot_state::ready) ++counters_.evictions;
        si.state = slot_state::loading;
        si.expert = e;
        si.generation = 0;
        const int staging = reserve_staging();
        expert_copy_request req;
        req.ticket = next_ticket_++;
        req.layer = layer;
        req.expert = e;
        req.slot = s;
        req.staging = staging;
        req.bytes = config_.expert_bytes;
        si.ticket = req.ticket;
        in_flight_.push_back(in_flight{req.ticket, layer, s, staging});
        engine_.start_copy(req);
        granted.pending.push_back(req.ticket);
        ++counters_.misses;
        counters_.h2d_bytes += config_.expert_bytes;
      }
      slot_info & si = slot(layer, s);
      ++si.leases;
      si.last_use = ++tick_;
      granted.experts.push_back(e);
      granted.slots.push_back(s);
    }
  } catch (const std::exception & ex) {
    record_fault(ex.what());
    release(granted);
    throw;
  }
  lease = std::move(granted);
  return true;
}

void expert_cache::finish_acquire(expert_lease & lease) {
  for (uint64_t ticket : lease.pending) {
    auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                           [&](const in_flight & f) { return f.ticket == ticket; });
    if (it == in_flight_.end()) continue;  // already observed complete (e.g. while reserving staging)
    const in_flight copy = *it;
    try {
      engine_.wait_copy(ticket);
    } catch (const std::exception & ex) {
      record_fault(ex.what());
      throw;
    }
    complete(copy);
  }
  lease.pending.clear();
  for (int s : lease.slots) {
    // Only after a fault: another lease's failed copy discarded a slot this lease was waiting for.
    if (slot(lease.layer, s).state != slot_state::ready) {
      throw std::runtime_error("expert cache: a copy this group waited for failed (" + fault_ + ")");
    }
  }
  lease.generation = generation_;
}

void expert_cache::release(const expert_lease & lease) {
  for (int s : lease.slots) {
    slot_info & si = slot(lease.layer, s);
    if (si.leases > 0) --si.leases;
    si.last_use = ++tick_;
  }
}

}  // namespace rt
