// Whole-model checks of the CUDA backend on tiny INT4 (qpacked-v2) models: logits against the CPU backend, full vs
// partial expert residency (same greedy tokens, D2H always 0, staged layers when a step routes more experts than a
// layer has slots), CUDA graphs on vs off, batched vs one-by-one decode. To add a case, add a function taking the
// packed folder and call it from main(). Without a CUDA device it prints "SKIP: no CUDA device (<reason>)".
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/safetensors.h"
#include "rt/rt-runtime.h"
#include "test-helpers.h"

/** ctest's SKIP_RETURN_CODE for the gpu label (CMakeLists.txt): no device is a skip, not a pass. */
constexpr int kSkip = 77;

#ifdef RT_WITH_CUDA
#include <cuda_runtime.h>
#ifndef _WIN32
#include <dlfcn.h>
#include <unistd.h>
#endif

using namespace rt;

namespace fs = std::filesystem;

#ifdef RT_TEST_ON_CUDA_SIM
namespace rt_sim {
uint64_t kernel_runs(const char * prefix);  // tests/cuda-sim/cuda-sim.h
}
#endif

/** Max |cuda - cpu| logit difference relative to the largest |logit|: FP16 activations and KV vs FP32 on the CPU. */
static const float MAX_REL_ERR_MODEL_LOGITS = 3e-2f;
/**
 * Full and partial residency compute each (token, expert) with the same kernels and arithmetic; only the grouping
 * and where SwiGLU is applied differ. Expected exact; the slack only absorbs a last-bit difference, a wrong or stale
 * expert moves logits by orders of magnitude more.
 */
static const float MAX_ABS_ERR_FULL_VS_PARTIAL = 1e-4f;

/**
 * A prompt prefilled in chunks attends to the chunks before it through the FP16 KV cache, as it does whole; chunks of
 * a few tokens take the decode-sized W4A16 kernels instead of the tiled ones, which sum in another order.
 */
static const float MAX_REL_ERR_CHUNKED_PREFILL = 1e-2f;

static const std::vector<int32_t> PROMPT_A = {3, 17, 42, 5, 9, 60, 11, 2, 33, 48, 7, 21};
static const std::vector<int32_t> PROMPT_B = {8, 1, 64, 30, 12};

namespace {

fs::path pack(const fs::path & src, const fs::path & dst) {
  test_util::pack_model(src, dst, 2);
  return dst;
}

std::unique_ptr<backend> make(const model_weights & w, const char * kind, int slots, bool graphs = true,
                              int max_context = 64, bool tails = true, bool programmatic = true) {
  backend_options o;
  o.programmatic_launch = programmatic;
  o.threads = 2;
  o.max_context = max_context;
  o.expert_slots = slots;
  o.cuda_graphs = graphs;
  o.matmul_tails = tails;
  rt_error err;
  std::unique_ptr<backend> be = std::string(kind) == "cpu" ? cpu_backend_create(w, o, err) : cuda_backend_create(w, o, err);
  CHECK(be != nullptr, "%s backend: %s", kind, err.message.c_str());
  return be;
}

std::vector<std::vector<float>> all_logits(backend & be, const std::vector<int32_t> & tokens) {
  rt_error err;
  const int s = be.seq_create(err);
  CHECK(s >= 0, "seq_create: %s", err.message.c_str());
  std::vector<batch_entry> b(1);
  b[0].seq_id = s;
  b[0].tokens = tokens;
  std::vector<std::vector<float>> out;
  CHECK(be.forward(b, true, out, err), "forward: %s", err.message.c_str());
  be.seq_free(s);
  return out;
}

// Greedy generation of `steps` tokens for each prompt, batched: one prefill step, then one token per sequence per
// step. With `last_leaves_after` >= 0 the last sequence leaves the batch after that many tokens.
std::vector<std::vector<int32_t>> greedy(backend & be, const std::vector<std::vector<int32_t>> & prompts, int steps,
                                         int last_leaves_after = -1) {
  rt_error err;
  std::vector<batch_entry> b(prompts.size());
  std::vector<int> ids;
  for (size_t i = 0; i < prompts.size(); ++i) {
    b[i].seq_id = be.seq_create(err);
    b[i].tokens = prompts[i];
    b[i].start_pos = 0;
    ids.push_back(b[i].seq_id);
  }
  std::vector<std::vector<int32_t>> out(prompts.size());
  for (int s = 0; s < steps; ++s) {
    if (s == last_leaves_after) b.pop_back();
    std::vector<int32_t> next;
    if (!be.forward_greedy(b, next, err)) {
      CHECK(false, "forward_greedy: %s", err.message.c_str());
      break;
    }
    for (size_t i = 0; i < b.size(); ++i) {
      out[i].push_back(next[i]);
      b[i].start_pos += static_cast<int>(b[i].tokens.size());
      b[i].tokens = {next[i]};
    }
  }
  for (int id : ids) be.seq_free(id);
  return out;
}

float max_abs(const std::vector<std::vector<float>> & a) {
  float m = 0;
  for (const auto & r : a) for (float v : r) m = std::max(m, std::fabs(v));
  return m;
}

float max_diff(const std::vector<std::vector<float>> & a, const std::vector<std::vector<float>> & b) {
  float m = a.size() == b.size() ? 0.0f : INFINITY;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].size() != b[i].size()) return INFINITY;
    for (size_t j = 0; j < a[i].size(); ++j) {
      const float d = std::fabs(a[i][j] - b[i][j]);
      m = std::isnan(d) ? INFINITY : std::max(m, d);
    }
  }
  return m;
}

void cuda_matches_cpu(const fs::path & dir, const char * label) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  CHECK(w != nullptr, "%s: %s", label, err.message.c_str());
  if (!w) return;
  auto cpu = make(*w, "cpu", 0);
  auto gpu = make(*w, "cuda", 0);
  if (!cpu || !gpu) return;
  CHECK(gpu->kind() == backend_kind::cuda, "backend kind");
  const auto lc = all_logits(*cpu, PROMPT_A);
  const auto lg = all_logits(*gpu, PROMPT_A);
  const float rel = max_diff(lc, lg) / std::max(1e-6f, max_abs(lc));
  std::printf("%s: cuda vs cpu logits rel err %.3g (tol %.3g)\n", label, rel, MAX_REL_ERR_MODEL_LOGITS);
  CHECK(rel <= MAX_REL_ERR_MODEL_LOGITS, "%s: cuda vs cpu logits rel err %g", label, rel);
  const backend_counters c = gpu->counters();
  CHECK(c.d2h_bytes == 0 && c.expert_misses == 0, "%s: full residency moves no experts", label);
  CHECK(c.expert_hits > 0 && c.peak_memory_bytes > 0, "%s: hits and peak memory are reported", label);
}

// The kernel choices of backend_options (the GPU benchmark sets them from its kernel table) reach the kernels: tensor
// cores for every matmul or for none, each within the model tolerance of the CPU's logits, prefill and decode. On the
// simulator, which counts kernel runs by name, the first runs tensor-core kernels exactly where the device has them
// (sm_80+) and the second never. The first also splits decode attention for 8 blocks an SM (a 512-position context
// leaves room for 8 splits of a head) and aims the FP16 decode GEMVs at 8 blocks an SM, the second at 1.
void kernel_thresholds(const fs::path & dir, const char * label) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  if (!w) return;
  auto cpu = make(*w, "cpu", 0);
  if (!cpu) return;
  const auto lc = all_logits(*cpu, PROMPT_A);
  int dev = 0, major = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  for (const bool tensor_cores : {true, false}) {
    backend_options o;
    o.threads = 2;
    o.max_context = 512;
    o.attention_blocks_per_sm = tensor_cores ? 8 : 0;
    o.f16_gemv_blocks_per_sm = tensor_cores ? 8 : 1;
    o.w4a16_mma_min_entries = tensor_cores ? 1 : 1 << 30;
    o.f16_mma_min_tokens = tensor_cores ? 1 : 1 << 30;
    const char * which = tensor_cores ? "tensor cores for every matmul" : "tensor cores for none";
    auto gpu = cuda_backend_create(*w, o, err);
    CHECK(gpu != nullptr, "%s, %s: %s", label, which, err.message.c_str());
    if (!gpu) continue;
#ifdef RT_TEST_ON_CUDA_SIM
    const uint64_t mma_before = rt_sim::kernel_runs("w4a16_mma") + rt_sim::kernel_runs("f16_mma");
#endif
    const auto lg = all_logits(*gpu, PROMPT_A);
    const float rel = max_diff(lc, lg) / std::max(1e-6f, max_abs(lc));
    CHECK(rel <= MAX_REL_ERR_MODEL_LOGITS, "%s, %s: cuda vs cpu logits rel err %g", label, which, rel);
    const auto tokens = greedy(*gpu, {PROMPT_B}, 4);
    CHECK(tokens.size() == 1 && tokens[0].size() == 4, "%s, %s: decode runs", label, which);
#ifdef RT_TEST_ON_CUDA_SIM
    const uint64_t mma_runs = rt_sim::kernel_runs("w4a16_mma") + rt_sim::kernel_runs("f16_mma") - mma_before;
    std::printf("%s, %s: %llu tensor-core kernel runs (sm_%d.x)\n", label, which,
                static_cast<unsigned long long>(mma_runs), major);
    CHECK(tensor_cores && major >= 8 ? mma_runs > 0 : mma_runs == 0, "%s, %s: %llu tensor-core kernel runs on sm_%d.x",
          label, which, static_cast<unsigned long long>(mma_runs), major);
#endif
  }
}

// What peak memory measures. Under the simulator with RT_TEST_FAKE_NVML (tests/fake-nvml), NVML's per-process figure
// must be the one reported, and without it the whole device's used memory; on a GPU, a per-process peak must cover
// at least the backend's own allocations and fit the device.
void peak_memory_scope(const fs::path & dir, const char * label) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  if (!w) return;
  const char * fake_path = std::getenv("RT_TEST_FAKE_NVML");
#ifndef _WIN32
  if (fake_path != nullptr) {
    void * h = dlopen(fake_path, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != nullptr, "%s: load %s", label, fake_path);
    if (h == nullptr) return;
    auto configure = reinterpret_cast<void (*)(int, const char *, int, int)>(dlsym(h, "fake_nvml_configure"));
    auto add_process = reinterpret_cast<void (*)(unsigned int, unsigned long long)>(dlsym(h, "fake_nvml_add_process"));
    setenv("HORIZON_NVML_LIBRARY", fake_path, 1);
    constexpr unsigned long long FAKE_PROCESS_BYTES = 3ull << 30;
    configure(0, "00000000:01:00.0", 0, 0);  // the simulator's device 0
    add_process(static_cast<unsigned int>(getpid()), FAKE_PROCESS_BYTES);
    add_process(static_cast<unsigned int>(getpid()) + 1, 1ull << 40);
    {
      auto gpu = make(*w, "cuda", 0);
      if (!gpu) return;
      all_logits(*gpu, PROMPT_B);
      const backend_counters c = gpu->counters();
      CHECK(c.peak_memory_scope == "process" && c.peak_memory_bytes == FAKE_PROCESS_BYTES,
            "%s: NVML's per-process figure: scope %s, %llu bytes", label, c.peak_memory_scope.c_str(),
            static_cast<unsigned long long>(c.peak_memory_bytes));
    }
    configure(0, "00000000:01:00.0", 0, 0);
    add_process(static_cast<unsigned int>(getpid()) + 1, 1ull << 40);  // this process not listed: a PID namespace
    {
      auto gpu = make(*w, "cuda", 0);
      if (!gpu) return;
      all_logits(*gpu, PROMPT_B);
      const backend_counters c = gpu->counters();
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      CHECK(c.peak_memory_scope == "device" && c.peak_memory_bytes >= total_b - free_b && c.peak_memory_bytes > 0,
            "%s: without NVML's figure, the device's used memory: scope %s, %llu bytes (used now %zu)", label,
            c.peak_memory_scope.c_str(), static_cast<unsigned long long>(c.peak_memory_bytes), total_b - free_b);
    }
    unsetenv("HORIZON_NVML_LIBRARY");
    return;
  }
#endif
  auto gpu = make(*w, "cuda", 0);
  if (!gpu) return;
  all_logits(*gpu, PROMPT_B);
  const backend_counters c = gpu->counters();
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("%s: peak memory %llu bytes, scope %s\n", label, static_cast<unsigned long long>(c.peak_memory_bytes),
              c.peak_memory_scope.c_str());
  CHECK(c.peak_memory_scope == "process" || c.peak_memory_scope == "device", "%s: scope %s", label,
        c.peak_memory_scope.c_str());
  CHECK(c.peak_memory_bytes >= gpu->device_bytes() && c.peak_memory_bytes <= prop.totalGlobalMem,
        "%s: peak %llu bytes, backend holds %llu, device has %zu", label,
        static_cast<unsigned long long>(c.peak_memory_bytes), static_cast<unsigned long long>(gpu->device_bytes()),
        prop.totalGlobalMem);
}

// Decode past the attention kernel's 256-position split (decode steps attend in splits of 256 positions, combined
// afterwards): after a 300-token prefill, each decoded token's logits against the CPU backend's.
void long_context_decode(const fs::path & dir, const char * label, int vocab) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  if (!w) return;
  auto cpu = make(*w, "cpu", 0, true, 320);
  auto gpu = make(*w, "cuda", 0, true, 320);
  if (!cpu || !gpu) return;
  std::vector<int32_t> prompt(300);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 37 + 11) % static_cast<size_t>(vocab));
  std::vector<batch_entry> b(1);
  b[0].tokens = prompt;
  const int sc = cpu->seq_create(err), sg = gpu->seq_create(err);
  float worst = 0;
  for (int step = 0; step < 4; ++step) {
    std::vector<std::vector<float>> lc, lg;
    b[0].seq_id = sc;
    CHECK(cpu->forward(b, false, lc, err), "cpu forward: %s", err.message.c_str());
    b[0].seq_id = sg;
    CHECK(gpu->forward(b, false, lg, err), "cuda forward: %s", err.message.c_str());
    if (lc.empty() || lg.empty()) return;
    worst = std::max(worst, max_diff(lc, lg) / std::max(1e-6f, max_abs(lc)));
    b[0].start_pos += static_cast<int>(b[0].tokens.size());
    b[0].tokens = {static_cast<int32_t>((step * 13 + 5) % vocab)};
  }
  std::printf("%s: decode at positions 300-302, cuda vs cpu logits rel err %.3g (tol %.3g)\n", label, worst,
              MAX_REL_ERR_MODEL_LOGITS);
  CHECK(worst <= MAX_REL_ERR_MODEL_LOGITS, "%s: long-context decode rel err %g", label, worst);
}

void full_vs_partial(const fs::path & dir, const char * label, int n_experts, int top_k) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  if (!w) return;
  auto full = make(*w, "cuda", 0);
  const auto lf = full ? all_logits(*full, PROMPT_A) : std::vector<std::vector<float>>{};
  const auto gf = full ? greedy(*full, {PROMPT_A, PROMPT_B}, 12) : std::vector<std::vector<int32_t>>{};
  const uint64_t layers = static_cast<uint64_t>(w->config.num_hidden_layers);
  struct run_counts {
    int slots;
    uint64_t bytes_at_start;
    backend_counters c;
  };
  std::vector<run_counts> runs;
  for (int slots : {1, top_k, n_experts - 1}) {
    auto part = make(*w, "cuda", slots);
    if (!part) continue;
    CHECK(!part->programmatic_launch(),
          "%s: %d slots: partial residency launches plainly (copies and waits between kernels)", label, slots);
    const uint64_t bytes_at_start = part->device_bytes();
    part->counters_reset();
    const auto lp = all_logits(*part, PROMPT_A);
    const float d = max_diff(lf, lp);
    CHECK(d <= MAX_ABS_ERR_FULL_VS_PARTIAL, "%s: %d slots: logits differ from full residency by %g", label, slots, d);
    const auto gp = greedy(*part, {PROMPT_A, PROMPT_B}, 12);
    CHECK(gp == gf, "%s: %d slots: greedy tokens differ from full residency", label, slots);
    const backend_counters c = part->counters();
    std::printf("%s: %d slots: hits %llu misses %llu evictions %llu h2d %llu d2h %llu\n", label, slots,
                static_cast<unsigned long long>(c.expert_hits), static_cast<unsigned long long>(c.expert_misses),
                static_cast<unsigned long long>(c.expert_evictions), static_cast<unsigned long long>(c.h2d_bytes),
                static_cast<unsigned long long>(c.d2h_bytes));
    CHECK(c.d2h_bytes == 0, "%s: %d slots: D2H bytes must stay 0", label, slots);
    CHECK(c.expert_misses > 0 && c.h2d_bytes > 0 && c.h2d_bytes % c.expert_misses == 0,
          "%s: %d slots: misses copy whole experts", label, slots);
    if (slots < top_k) CHECK(c.expert_evictions > 0, "%s: %d slots: staged layers evict", label, slots);
    // A miss fills an empty slot (each layer has `slots`) or evicts a ready expert; one slot per layer is empty only
    // until its layer's first miss.
    CHECK(c.expert_evictions <= c.expert_misses && c.expert_evictions + layers * slots >= c.expert_misses,
          "%s: %d slots: %llu evictions for %llu misses", label, slots,
          static_cast<unsigned long long>(c.expert_evictions), static_cast<unsigned long long>(c.expert_misses));
    if (slots == 1) {
      CHECK(c.expert_evictions + layers == c.expert_misses, "%s: 1 slot: every miss after a layer's first evicts",
            label);
    }
    runs.push_back({slots, bytes_at_start, c});
    part->counters_reset();
    const backend_counters z = part->counters();
    CHECK(z.expert_hits == 0 && z.expert_misses == 0 && z.expert_evictions == 0 && z.h2d_bytes == 0,
          "%s: %d slots: counters_reset zeroes the cache counters", label, slots);
  }
  // Every configuration routes the same tokens to the same experts, so each looks up as many experts (a hit or a
  // miss each); a miss copies one slot's worth of bytes, which the slot allocations' difference measures.
  if (runs.size() == 3) {
    const uint64_t expert_bytes = (runs[1].bytes_at_start - runs[0].bytes_at_start) /
                                  (layers * static_cast<uint64_t>(runs[1].slots - runs[0].slots));
    for (const run_counts & r : runs) {
      CHECK(r.c.expert_hits + r.c.expert_misses == runs[0].c.expert_hits + runs[0].c.expert_misses,
            "%s: %d slots: %llu hits + %llu misses, as many lookups as with 1 slot", label, r.slots,
            static_cast<unsigned long long>(r.c.expert_hits), static_cast<unsigned long long>(r.c.expert_misses));
      CHECK(expert_bytes > 0 && r.c.h2d_bytes == r.c.expert_misses * expert_bytes,
            "%s: %d slots: %llu H2D bytes for %llu misses of %llu bytes", label, r.slots,
            static_cast<unsigned long long>(r.c.h2d_bytes), static_cast<unsigned long long>(r.c.expert_misses),
            static_cast<unsigned long long>(expert_bytes));
    }
  }
  // A budget too small for one slot per layer is a clear startup error.
  backend_options o;
  o.expert_budget_bytes = 1;
  auto none = cuda_backend_create(*w, o, err);
  CHECK(none == nullptr && err.message.find("slot") != std::string::npos, "%s: tiny budget error: %s", label, err.message.c_str());
}

// The runtime feeds a prompt longer than its prefill budget in chunks, in the same steps as other sequences' decode
// tokens: each chunk lands at its start position and attends to the earlier ones; only the last chunk's logits count.
void chunked_prefill(const fs::path & dir, const char * label, int slots) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  if (!w) return;
  auto be = make(*w, "cuda", slots);
  if (!be) return;
  const auto whole = all_logits(*be, PROMPT_A);
  if (whole.empty() || whole[0].size() != PROMPT_A.size() * static_cast<size_t>(w->config.vocab_size)) {
    CHECK(false, "%s: the whole prompt's logits have the wrong size", label);
    return;
  }
  const int a = be->seq_create(err);
  const int b = be->seq_create(err);
  CHECK(a >= 0 && b >= 0, "%s: seq_create: %s", label, err.message.c_str());
  std::vector<int32_t> b_tokens = PROMPT_B;
  std::vector<float> last;
  for (size_t at = 0; at < PROMPT_A.size(); at += 5) {
    std::vector<batch_entry> step(2);
    step[0].seq_id = a;
    step[0].tokens.assign(PROMPT_A.begin() + static_cast<std::ptrdiff_t>(at),
                          PROMPT_A.begin() + static_cast<std::ptrdiff_t>(std::min(at + 5, PROMPT_A.size())));
    step[0].start_pos = static_cast<int>(at);
    step[1].seq_id = b;
    step[1].start_pos = at == 0 ? 0 : static_cast<int>(b_tokens.size()) - 1;
    step[1].tokens = at == 0 ? b_tokens : std::vector<int32_t>{b_tokens.back()};
    std::vector<std::vector<float>> out;
    if (!be->forward(step, false, out, err)) {
      CHECK(false, "%s: chunk at %zu: %s", label, at, err.message.c_str());
      break;
    }
    last = out[0];
    b_tokens.push_back(static_cast<int32_t>(1 + at % 50));
  }
  CHECK(be->seq_length(a) == static_cast<int>(PROMPT_A.size()), "%s: the chunks fill the sequence (%d tokens)", label,
        be->seq_length(a));
  const size_t V = static_cast<size_t>(w->config.vocab_size);
  const std::vector<float> whole_last(whole[0].end() - static_cast<std::ptrdiff_t>(V), whole[0].end());
  const float scale = std::max(1e-6f, max_abs({whole_last}));
  const float d = max_diff({whole_last}, {last}) / scale;
  std::printf("%s, %d slots: chunked vs whole prefill, last logits rel diff %g (tol %g)\n", label, slots, d,
              MAX_REL_ERR_CHUNKED_PREFILL);
  CHECK(d <= MAX_REL_ERR_CHUNKED_PREFILL, "%s, %d slots: chunked prefill's last logits differ from the whole prompt's by %g "
        "(relative)", label, slots, d);
  be->seq_free(a);
  be->seq_free(b);
}

// The launches of a one-sequence decode step (what batch-1 decode pays per token beside the bytes it reads), by
// the plan in cuda_backend::step under full residency. Per layer: QKV projection with the q/k norm + RoPE + K/V
// store as its tail, attention (its split partials merged in the same launch), output projection with the
// post-attention norm as its tail, router projection with top-k and grouping as its tail, gate-up with the SwiGLU
// epilogue, down with the MoE reduce and the next norm as its tail. Outside: embedding with the first layer's norm,
// the LM head's INT8 screen and its pick of the rows that can win (without the screen: the LM head with the argmax as
// its tail). A down projection the decode GEMV cannot take (the tiny model's) launches the reduce on its own. A
// change here is a change of that plan: make it on purpose.
constexpr int DECODE_KERNELS_PER_LAYER = 6;
constexpr int DECODE_KERNELS_OUTSIDE_LAYERS = 3;
constexpr int DECODE_KERNELS_OUTSIDE_LAYERS_UNSCREENED = 2;

void graphs_and_batching(const fs::path & dir, const char * label, int kernels_per_layer = DECODE_KERNELS_PER_LAYER) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  if (!w) return;
  auto with = make(*w, "cuda", 0, true);
  auto without = make(*w, "cuda", 0, false);
  if (!with || !without) return;
  const auto a = greedy(*with, {PROMPT_A}, 16);
  const auto b = greedy(*without, {PROMPT_A}, 16);
  CHECK(a == b, "%s: CUDA graph decode equals plain decode", label);
  std::printf("%s: one-sequence decode step: %d kernels\n", label, with->decode_step_ops());
  CHECK(with->decode_step_ops() == DECODE_KERNELS_OUTSIDE_LAYERS + kernels_per_layer * w->config.num_hidden_layers,
        "%s: the decode graph holds %d kernels per layer and %d outside them (got %d in all)", label,
        kernels_per_layer, DECODE_KERNELS_OUTSIDE_LAYERS, with->decode_step_ops());
  CHECK(without->decode_step_ops() == 0, "%s: no decode graph without CUDA graphs", label);
  {
    // The tails as launches of their own: the same tokens, more launches.
    auto apart = make(*w, "cuda", 0, true, 64, /*tails=*/false);
    if (apart) {
      CHECK(greedy(*apart, {PROMPT_A}, 16) == a, "%s: decode with the tails launched apart equals decode with them fused", label);
      CHECK(apart->decode_step_ops() > with->decode_step_ops(), "%s: tails apart take more launches (%d vs %d)", label,
            apart->decode_step_ops(), with->decode_step_ops());
    }
  }
  {
    // Programmatic dependent launch where the device has it (9.0+), plain launches otherwise or when turned off: the
    // same tokens (on the simulator every thread of a programmatic launch must also wait for the kernel before it).
    int dev = 0, major = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    CHECK(with->programmatic_launch() == (major >= 9), "%s: programmatic launches %s on compute capability %d.x",
          label, major >= 9 ? "on" : "off", major);
    auto plain = make(*w, "cuda", 0, true, 64, true, /*programmatic=*/false);
    if (plain) {
      CHECK(!plain->programmatic_launch(), "%s: programmatic launches off when the options say so", label);
      CHECK(greedy(*plain, {PROMPT_A}, 16) == a, "%s: decode with plain launches equals decode with programmatic ones",
            label);
      CHECK(plain->decode_step_ops() == with->decode_step_ops(), "%s: as many kernels either way", label);
    }
  }
  const auto one_b = greedy(*without, {PROMPT_B}, 16);
  const auto batched = greedy(*without, {PROMPT_A, PROMPT_B}, 16);
  CHECK(batched.size() == 2 && batched[0] == a[0] && batched[1] == one_b[0], "%s: batched decode equals one-by-one", label);
  {
    // A batch may list its sequences in any order: each step here lists them the other way round from the last.
    std::vector<batch_entry> b(2);
    b[0].tokens = PROMPT_A;
    b[1].tokens = PROMPT_B;
    for (batch_entry & e : b) e.seq_id = with->seq_create(err);
    const int id_a = b[0].seq_id;
    std::vector<std::vector<int32_t>> got(2);
    for (int s = 0; s < 16; ++s) {
      std::vector<int32_t> next;
      if (!with->forward_greedy(b, next, err)) {
        CHECK(false, "%s: reordered batch: %s", label, err.message.c_str());
        break;
      }
      for (size_t i = 0; i < b.size(); ++i) {
        got[b[i].seq_id == id_a ? 0 : 1].push_back(next[i]);
        b[i].start_pos += static_cast<int>(b[i].tokens.size());
        b[i].tokens = {next[i]};
      }
      std::swap(b[0], b[1]);
    }
    CHECK(got[0] == a[0] && got[1] == one_b[0], "%s: batched decode with the sequences reordered each step", label);
    for (const batch_entry & e : b) with->seq_free(e.seq_id);
  }
  // Batched decode steps are replayed as graphs too (one per batch size); three sequences, one of which stops early
  // so that the batch shrinks from 3 to 2 mid-way.
  const std::vector<std::vector<int32_t>> three = {PROMPT_A, PROMPT_B, {4, 4, 8}};
  const auto plain3 = greedy(*without, three, 10);
  // Full residency counts a hit per routed assignment, whether the step ran plainly, was captured or was replayed.
  with->counters_reset();
  const auto graph3 = greedy(*with, three, 10);
  CHECK(graph3 == plain3, "%s: batched CUDA graph decode equals plain batched decode", label);
  const uint64_t step_tokens = PROMPT_A.size() + PROMPT_B.size() + 3 + 9 * 3;
  const uint64_t want_hits =
      step_tokens * static_cast<uint64_t>(w->config.num_experts_per_tok) * static_cast<uint64_t>(w->config.num_hidden_layers);
  CHECK(with->counters().expert_hits == want_hits, "%s: graph decode counts %llu hits (want %llu)", label,
        static_cast<unsigned long long>(with->counters().expert_hits), static_cast<unsigned long long>(want_hits));
  const auto shrinking = greedy(*with, three, 10, 4);
  CHECK(shrinking.size() == 3 && shrinking[0] == plain3[0] && shrinking[1] == plain3[1] &&
            std::vector<int32_t>(plain3[2].begin(), plain3[2].begin() + 4) == shrinking[2],
        "%s: graph decode while the batch shrinks equals plain decode", label);
  // A step larger than the scratch so far reallocates it; the decode graphs captured before named the old buffers.
  {
    std::vector<int32_t> long_a(40), long_b(40);
    for (size_t i = 0; i < long_a.size(); ++i) {
      long_a[i] = PROMPT_A[i % PROMPT_A.size()];
      long_b[i] = PROMPT_B[i % PROMPT_B.size()];
    }
    const auto grown_plain = greedy(*without, {long_a, long_b}, 2);
    const auto grown_graph = greedy(*with, {long_a, long_b}, 2);
    CHECK(grown_graph == grown_plain, "%s: a step that grows the scratch", label);
    CHECK(greedy(*with, {PROMPT_A}, 16) == a, "%s: graph decode after the scratch grew equals plain decode", label);
  }
  // Errors are reported, not thrown: unknown sequence, logits past the tokens and context overflow.
  std::vector<batch_entry> bad(1);
  bad[0].seq_id = 999;
  bad[0].tokens = {1};
  std::vector<int32_t> next;
  CHECK(!with->forward_greedy(bad, next, err) && err.message.find("sequence") != std::string::npos, "unknown sequence error");
  bad[0].seq_id = with->seq_create(err);
  std::vector<batch_entry> twice = {bad[0], bad[0]};
  CHECK(!with->forward_greedy(twice, next, err) && err.message.find("twice") != std::string::npos, "duplicate sequence error");
  bad[0].tokens = {static_cast<int32_t>(w->config.vocab_size)};
  CHECK(!with->forward_greedy(bad, next, err) && err.message.find("vocabulary") != std::string::npos, "token id past the vocabulary");
  bad[0].tokens = {1, 2};
  bad[0].logits_from = 2;
  std::vector<std::vector<float>> rows;
  CHECK(!with->forward(bad, true, rows, err) && err.message.find("logits from token 2") != std::string::npos, "logits from past the tokens: %s",
        err.message.c_str());
  bad[0].logits_from = 0;
  bad[0].tokens.assign(65, 1);
  CHECK(!with->forward_greedy(bad, next, err) && err.message.find("context") != std::string::npos, "context overflow error");
  bad[0].tokens.assign(64, 1);
  CHECK(with->forward_greedy(bad, next, err), "a step that fills the context exactly: %s", err.message.c_str());
}

// Greedy steps with the LM head's INT8 screen (lm-screen.cuh) and without it: the same tokens, decode graphs and all,
// one and three sequences (prefill steps screen their last positions too); the counters show what the screen did,
// and on the simulator its kernels run exactly when it is on. Logits still come from the full product.
void lm_head_screen(const fs::path & dir, const char * label) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  if (!w) return;
  std::unique_ptr<backend> be[2];
  for (const bool on : {false, true}) {
    backend_options o;
    o.threads = 2;
    o.max_context = 64;
    o.lm_head_screen = on;
    be[on] = cuda_backend_create(*w, o, err);
    CHECK(be[on] != nullptr, "%s, screen %s: %s", label, on ? "on" : "off", err.message.c_str());
  }
  if (!be[0] || !be[1]) return;
  const std::vector<std::vector<int32_t>> three = {PROMPT_A, PROMPT_B, {4, 4, 8}};
  std::vector<std::vector<int32_t>> one[2], batch[2];
  uint64_t screen_runs[2] = {0, 0};
  for (const bool on : {false, true}) {
#ifdef RT_TEST_ON_CUDA_SIM
    const uint64_t before = rt_sim::kernel_runs("lm_screen");
#endif
    be[on]->counters_reset();
    one[on] = greedy(*be[on], {PROMPT_A}, 12);
    batch[on] = greedy(*be[on], three, 12);
#ifdef RT_TEST_ON_CUDA_SIM
    screen_runs[on] = rt_sim::kernel_runs("lm_screen") - before;
#endif
    const backend_counters c = be[on]->counters();
    const uint64_t steps = 12 + 12;  // one sequence, then three: each step screens its outputs in one call
    const uint64_t outputs = 12 + 3 * 12;
    if (on) {
      CHECK(c.lm_head_screened == outputs && c.lm_head_exact_rows >= outputs,
            "%s: the screen found %llu tokens (want %llu) computing %llu FP16 rows", label,
            static_cast<unsigned long long>(c.lm_head_screened), static_cast<unsigned long long>(outputs),
            static_cast<unsigned long long>(c.lm_head_exact_rows));
      std::printf("%s: the screen computed %.1f of %d LM head rows a token\n", label,
                  static_cast<double>(c.lm_head_exact_rows) / static_cast<double>(outputs), w->config.vocab_size);
#ifdef RT_TEST_ON_CUDA_SIM
      CHECK(screen_runs[on] == 2 * steps, "%s: %llu screen kernel runs (want two a step, %llu)", label,
            static_cast<unsigned long long>(screen_runs[on]), static_cast<unsigned long long>(2 * steps));
#endif
    } else {
      CHECK(c.lm_head_screened == 0 && c.lm_head_exact_rows == 0 && screen_runs[on] == 0,
            "%s: no screen when the options turn it off", label);
    }
  }
  CHECK(one[0] == one[1] && batch[0] == batch[1], "%s: greedy tokens with the screen equal those without it", label);
  CHECK(be[1]->decode_step_ops() - be[0]->decode_step_ops() ==
            DECODE_KERNELS_OUTSIDE_LAYERS - DECODE_KERNELS_OUTSIDE_LAYERS_UNSCREENED,
        "%s: the screen's launches in the decode graph (%d with it, %d without)", label, be[1]->decode_step_ops(),
        be[0]->decode_step_ops());
  const auto lg = all_logits(*be[1], PROMPT_A);
  const auto lf = all_logits(*be[0], PROMPT_A);
  CHECK(max_diff(lg, lf) == 0.0f, "%s: logits with the screen on are the full product's", label);
  // Partial residency gives the screen's memory to expert slots: no screen, the same tokens.
  auto part = make(*w, "cuda", w->config.num_experts / 2);
  if (part) {
    part->counters_reset();
    CHECK(greedy(*part, {PROMPT_A}, 12) == one[1] && part->counters().lm_head_screened == 0,
          "%s: partial residency decodes the same tokens without the screen", label);
  }
}

// Writes an FP16 NaN over the first element of each FP16 tensor of the packed folder `dir` that `pick` names (the
// packer refuses a NaN in a checkpoint); returns how many it wrote.
template <typename Pick>
int write_nan(const fs::path & dir, Pick pick) {
  int written = 0;
  for (const auto & f : fs::directory_iterator(dir)) {
    if (f.path().extension() != ".safetensors") continue;
    std::string bytes;
    {
      std::ifstream in(f.path(), std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    safetensors_header h;
    rt_error err;
    if (!safetensors_parse(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(), f.path().string(), h, err.message)) continue;
    int here = 0;
    for (const auto & t : h.tensors) {
      if (!pick(t.name) || t.type != dtype::f16) continue;
      bytes[t.begin] = 0x00;
      bytes[t.begin + 1] = 0x7E;  // FP16 quiet NaN
      ++here;
    }
    if (here > 0) std::ofstream(f.path(), std::ios::binary | std::ios::trunc) << bytes;
    written += here;
  }
  return written;
}

// A NaN in the final norm stands for an activation that overflowed FP16: greedy decoding on either backend gives -1,
// which generation turns into an error.
void nan_logits(const fs::path & packed, const fs::path & root) {
  const fs::path dir = root / "nan-int4";
  fs::copy(packed, dir, fs::copy_options::recursive);
  const bool written = write_nan(dir, [](const std::string & name) { return name == "model.norm.weight"; }) == 1;
  CHECK(written, "nan: an FP16 model.norm.weight in the packed folder");
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  CHECK(w != nullptr, "nan: %s", err.message.c_str());
  if (!w || !written) return;
  for (const char * kind : {"cpu", "cuda"}) {
    auto be = make(*w, kind, 0);
    if (!be) continue;
    std::vector<batch_entry> b(2);
    for (size_t i = 0; i < b.size(); ++i) {
      b[i].seq_id = be->seq_create(err);
      b[i].tokens = i == 0 ? PROMPT_A : PROMPT_B;
    }
    std::vector<int32_t> next;
    CHECK(be->forward_greedy(b, next, err) && next == std::vector<int32_t>({-1, -1}), "%s: NaN logits give -1 (%s)",
          kind, err.message.c_str());
    for (const auto & e : b) be->seq_free(e.seq_id);
  }
}

// NaN router logits (a NaN in every layer's router weights) pick no valid expert in any layer: partial residency
// then brings in none, not the id one past a layer's last expert that the top-k kernel reports for such a row.
void nan_router_partial(const fs::path & packed, const fs::path & root, int layers) {
  const fs::path dir = root / "nan-router-int4";
  fs::copy(packed, dir, fs::copy_options::recursive);
  const int written = write_nan(dir, [](const std::string & name) {
    return name.size() > 16 && name.compare(name.size() - 16, 16, ".mlp.gate.weight") == 0;
  });
  CHECK(written == layers, "nan router: %d FP16 router weights in the packed folder (want %d)", written, layers);
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::int4, err.message);
  CHECK(w != nullptr, "nan router: %s", err.message.c_str());
  if (!w || written != layers) return;
  auto be = make(*w, "cuda", 1);
  if (!be) return;
  std::vector<batch_entry> b(1);
  b[0].seq_id = be->seq_create(err);
  b[0].tokens = PROMPT_A;
  std::vector<int32_t> next;
  CHECK(be->forward_greedy(b, next, err), "nan router: forward: %s", err.message.c_str());
  const backend_counters c = be->counters();
  CHECK(c.expert_misses == 0 && c.h2d_bytes == 0, "nan router: %llu misses, %llu H2D bytes (want none)",
        static_cast<unsigned long long>(c.expert_misses), static_cast<unsigned long long>(c.h2d_bytes));
  be->seq_free(b[0].seq_id);
}

}  // namespace

int main() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
    return kSkip;
  }
  const fs::path root = test_util::temp_dir("gpu-model");
  test_util::tiny_config c;
  c.vocab = 72;
  test_util::write_tiny_model(root / "mha", c, 11);
  const fs::path mha = pack(root / "mha", root / "mha-int4");
  if (std::getenv("RT_TEST_FAKE_NVML") != nullptr) {  // only the peak-memory case, against the fake NVML
    peak_memory_scope(mha, "tiny mha");
    fs::remove_all(root);
    return test_util::finish("test-gpu-model (fake NVML)");
  }
  cuda_matches_cpu(mha, "tiny mha (g16, generic down kernel)");
  full_vs_partial(mha, "tiny mha", c.experts, c.top_k);
  graphs_and_batching(mha, "tiny mha", DECODE_KERNELS_PER_LAYER + 1);
  lm_head_screen(mha, "tiny mha");
  chunked_prefill(mha, "tiny mha", 0);
  chunked_prefill(mha, "tiny mha", 1);
  long_context_decode(mha, "tiny mha", c.vocab);
  peak_memory_scope(mha, "tiny mha");
  nan_logits(mha, root);
  nan_router_partial(mha, root, c.layers);

  test_util::tiny_config g;
  g.hidden = 128;
  g.inter = 64;
  g.heads = 4;
  g.kv_heads = 2;
  g.experts = 16;
  g.top_k = 4;
  g.norm_topk = true;
  g.vocab = 300;
  test_util::write_tiny_model(root / "gqa", g, 12);
  const fs::path gqa = pack(root / "gqa", root / "gqa-int4");
  cuda_matches_cpu(gqa, "small gqa+norm_topk (fast kernels)");
  full_vs_partial(gqa, "small gqa", g.experts, g.top_k);
  graphs_and_batching(gqa, "small gqa");
  kernel_thresholds(gqa, "small gqa");
  lm_head_screen(gqa, "small gqa");
  chunked_prefill(gqa, "small gqa", 0);
  fs::remove_all(root);
  return test_util::finish("test-gpu-model");
}

#else

int main() {
  std::printf("SKIP: no CUDA device (this build has no CUDA backend; configure with -DRT_CUDA=ON)\n");
  return kSkip;
}

#endif
