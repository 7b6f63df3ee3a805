#pragma once
// The compute-backend contract. A backend (cpu/, cuda/) receives the backend-independent model_weights, makes its
// own copy or residency plan of them, owns per-sequence KV caches and runs a batched forward step.
//
// To add a backend: implement `backend`, add a factory like `cpu_backend_create`, and select it by name in
// core/runtime.cpp (`backend_create`). The generation loop (`rt_model_generate`, core/runtime.cpp) only talks to this
// interface; every backend checks a batch with `check_batch` (core/batch-check.h).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/model-weights.h"

namespace rt {

/** Sets `error` and returns false, so a failing check reads `return fail(error, code, "...")`. */
inline bool fail(rt_error & error, rt_status code, std::string message, int prompt_index = -1) {
  error = rt_error{code, prompt_index, std::move(message)};
  return false;
}

/**
 * Whether environment variable `name` is "0": how the app's HORIZON_CUDA_GRAPHS, _TAILS, _PDL, _LM_SCREEN and
 * HORIZON_CPU_LM_SCREEN switch off what backend_options leave on.
 */
inline bool env_off(const char * name) {
  const char * v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "0") == 0;
}

/** Options given to a backend factory. */
struct backend_options {
  int threads = 0;                 // CPU worker threads; 0 = hardware concurrency
  int max_context = 0;             // per-sequence KV capacity in tokens; 0 = config max_position_embeddings
  int max_sequences = 0;           // CUDA: sequences whose KV is reserved before sizing the expert cache; 0 = 8
  int64_t expert_budget_bytes = 0;  // CUDA: bytes of device memory for resident experts; 0 = backend default
  int device = 0;                  // CUDA device index
  int expert_slots = 0;            // CUDA: GPU expert slots per layer (overrides expert_budget_bytes); 0 = unused
  bool cuda_graphs = true;         // CUDA: capture batch-1 decode steps as CUDA graphs
  bool matmul_tails = true;        // CUDA: small kernels run in the last block of the matmul before them (decode)
  bool programmatic_launch = true;  // CUDA 9.0+: kernels launch while the one before them finishes (full residency)
  // CUDA: where `automatic` kernel choices take the tensor cores (0 = the built-in thresholds): entries an expert
  // averages in a W4A16 matmul, tokens in an FP16 one. For the GPU benchmark, which sets them from its kernel table.
  int w4a16_mma_min_entries = 0;
  int f16_mma_min_tokens = 0;
  int attention_blocks_per_sm = 0;  // CUDA: blocks an SM that decode attention's split aims at; 0 = built in
  int f16_gemv_blocks_per_sm = 0;   // CUDA: blocks an SM below which the FP16 decode GEMVs split columns; 0 = built in
  // Greedy steps find the argmax through an INT8 copy of the LM head and compute only the rows that can still win
  // from the FP16 weights (cpu/lm-head-screen.h, cuda/lm-screen.cuh: the same tokens, fewer bytes; CUDA: steps of
  // up to 8 outputs under full residency, at 103 MB more device memory for OLMoE). HORIZON_CPU_LM_SCREEN=0 /
  // HORIZON_CUDA_LM_SCREEN=0 also turn it off.
  bool lm_head_screen = true;
};

/** One sequence's share of a batched step. */
struct batch_entry {
  int seq_id = 0;
  /** Tokens to append; the first lands at `start_pos`. */
  std::vector<int32_t> tokens;
  /** Position of tokens[0]; the sequence's cache is truncated to this length first (0 = fresh prompt). */
  int start_pos = 0;
  /** With `all_positions`, logits only for tokens[logits_from..] (the rows before it are not computed). */
  int logits_from = 0;
};

/** Counters a backend accumulates between `counters_reset` calls; fields that do not apply stay 0. */
struct backend_counters {
  // Expert counts have two grains: the CPU and full residency count every routed (token, expert) use as a hit;
  // partial residency counts per layer step, once for each distinct expert it needs (a hit when that expert's GPU
  // copy is already there, a miss when it must be copied in), since that is what the cache decides on.
  uint64_t expert_hits = 0;
  uint64_t expert_misses = 0;
  uint64_t h2d_bytes = 0;        // host-to-device bytes copied
  uint64_t d2h_bytes = 0;        // device-to-host bytes copied
  uint64_t peak_memory_bytes = 0;  // CPU: peak KV + scratch bytes; CUDA: see peak_memory_scope
  // What peak_memory_bytes measures: "estimate" (CPU: KV + scratch), "process" (CUDA: this process's GPU memory,
  // from NVML), "device" (CUDA without NVML's per-process figure: the device's used memory, other processes included).
  std::string peak_memory_scope = "estimate";
  uint64_t expert_evictions = 0;   // CUDA partial residency: GPU expert copies discarded to make room
  uint64_t lm_head_screened = 0;   // greedy tokens whose argmax the LM head's INT8 screen found
  uint64_t lm_head_exact_rows = 0;  // FP16 LM head rows computed for them (the screen's candidates)
};

class backend {
 public:
  virtual ~backend() = default;

  /** The CPU backend is always backend_kind::cpu. */
  virtual backend_kind kind() const = 0;

  /** Routed experts of each layer held in device memory: 0 on the CPU, num_experts under full residency. */
  virtual int device_expert_slots() const { return 0; }

  /** Bytes of device memory the backend holds now (weights, expert slots, KV, scratch): 0 on the CPU. */
  virtual uint64_t device_bytes() const { return 0; }

  /** Sequences that may exist at once; generate never runs more together. */
  virtual int sequence_limit() const { return 1 << 30; }

  /** Operations (kernels) in the captured one-sequence decode step: 0 on the CPU and until one is captured. */
  virtual int decode_step_ops() const { return 0; }

  /** Whether steps launch their kernels as programmatic dependent launches (CUDA, compute capability 9.0+). */
  virtual bool programmatic_launch() const { return false; }

  /**
   * Rounds the experts as `r` says in the forwards that follow (rt_model_logits sets it for one call and puts `none`
   * back); false, and no change, where this backend cannot.
   */
  virtual bool set_expert_rounding(expert_rounding r) { return r == expert_rounding::none; }

  /** Creates an empty sequence (KV cache) and returns its id (>= 0), or -1 with `error` set. */
  virtual int seq_create(rt_error & error) = 0;
  /** Releases a sequence and its KV cache. */
  virtual void seq_free(int seq_id) = 0;
  /** Number of tokens currently cached for a sequence. */
  virtual int seq_length(int seq_id) const = 0;

  /**
   * Runs one batched step. For each entry, its tokens are appended at start_pos.. and logits are written to
   * `logits[i]`: vocab_size floats for the last token, or (tokens.size() - logits_from) * vocab_size (row-major) when
   * `all_positions`. Returns false with `error` set on failure (invalid_request for a bad seq id, token or context
   * overflow; device_fault or out_of_memory from the device).
   */
  virtual bool forward(const std::vector<batch_entry> & batch, bool all_positions,
                       std::vector<std::vector<float>> & logits, rt_error & error) = 0;

  /**
   * Greedy variant of `forward`: next[i] = argmax of entry i's last-position logits (ties to the lowest id), or -1
   * when that row holds a NaN. Backends may override it to avoid copying logits back; the default calls `forward`.
   */
  virtual bool forward_greedy(const std::vector<batch_entry> & batch, std::vector<int32_t> & next, rt_error & error) {
    std::vector<std::vector<float>> logits;
    if (!forward(batch, false, logits, error)) return false;
    next.assign(batch.size(), 0);
    for (size_t i = 0; i < logits.size(); ++i) {
      int32_t best = 0;
      for (size_t v = 0; v < logits[i].size() && best >= 0; ++v) {
        if (std::isnan(logits[i][v])) best = -1;
        else if (logits[i][v] > logits[i][static_cast<size_t>(best)]) best = static_cast<int32_t>(v);
      }
      next[i] = best;
    }
    return true;
  }

  /**
   * Empty while the backend can run; otherwise the error after which it refuses every request (a device error leaves
   * the device context unusable, so only a new process can use the device again). The CPU backend never faults.
   */
  virtual std::string fault() const { return {}; }

  /** Counters since the last reset. */
  virtual backend_counters counters() const = 0;
  virtual void counters_reset() = 0;
};

/** The CPU backend (always available). Returns nullptr with `error` set on failure. */
std::unique_ptr<backend> cpu_backend_create(const model_weights & weights, const backend_options & options,
                                            rt_error & error);

#ifdef RT_WITH_CUDA
/** The CUDA backend (implemented in src/cuda/). Returns nullptr with `error` set on failure. */
std::unique_ptr<backend> cuda_backend_create(const model_weights & weights, const backend_options & options,
                                             rt_error & error);
#endif

}  // namespace rt
