// GPU benchmark (not a test; run by scripts/gpu-check.sh): an OLMoE-1B-7B-shaped model with random weights built in
// memory (FP16 non-routed tensors, qpacked-v2 experts with group 32), run through the CUDA backend with full
// residency and with a partial expert budget. Prints a table; `--json PATH` also writes the figures as JSON.
// Flags: --layers N (default 16), --partial-slots N (default 16 of 64), --quick (fewer steps), --small (a narrow
// model and short prompts: a smoke run of every path, e.g. on the CUDA simulator; its figures mean nothing),
// --ifeval INPUT_DATA.jsonl (also run the IFEval-shaped workload: see ifeval_workload_from), --ifeval-batch N (its
// continuous batch; default 64, what horizon eval takes on a large GPU), --no-kernel-table (skip
// the per-kernel timings that come first: a profiler counting launches then starts at the model's).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/backend.h"
#include "core/json.h"
#include "core/model-from-weights.h"
#include "core/model-weights.h"
#include "rt/rt-runtime.h"

#ifdef RT_WITH_CUDA
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include "cuda/attention.cuh"
#include "cuda/lm-screen.cuh"
#include "cuda/matmul-f16.cuh"
#include "cuda/matmul-w4a16.cuh"

using namespace rt;
using clk = std::chrono::steady_clock;

namespace {

// The device's peak memory bandwidth, bytes/s, against which the roofline is drawn: the vendor's datasheet figure
// for the cards named here (the lent machines are H100 and H200, whose figures the goals use), else twice the
// memory clock times the bus width as the driver reports them.
struct bandwidth_figure {
  double bytes_per_s = 0;
  std::string source;
};

bandwidth_figure nominal_bandwidth(const cudaDeviceProp & prop) {
  static const struct {
    const char * name;
    double tb_s;
  } datasheet[] = {
      {"H200", 4.8},          {"H100 NVL", 3.9},     {"H100 PCIe", 2.0},   {"H100", 3.35},
      {"A100-SXM4-80GB", 2.039}, {"A100 80GB PCIe", 1.935}, {"A100", 1.555}, {"L40S", 0.864},
      {"RTX 5090", 1.792},    {"RTX 5080", 0.96},    {"RTX 5070 Ti", 0.896}, {"RTX 5070", 0.672},
      {"RTX 4090", 1.008},    {"RTX 4080", 0.717},   {"RTX 4070", 0.504},  {"RTX 4060 Ti", 0.288},
      {"RTX 4060", 0.272},    {"RTX 3090", 0.936},
  };
  const std::string name = prop.name;
  for (const auto & d : datasheet) {
    if (name.find(d.name) != std::string::npos) return {d.tb_s * 1e12, std::string("datasheet, ") + d.name};
  }
  int dev = 0, clock_khz = 0, bus_bits = 0;
  cudaGetDevice(&dev);
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess && clock_khz > 0 &&
      bus_bits > 0) {
    return {2.0 * clock_khz * 1e3 * bus_bits / 8, "memory clock x bus width"};
  }
  cudaGetLastError();  // a refused attribute would otherwise be reported by the next launch's check
  return {};
}

double seconds_since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

struct host_model {
  model_weights w;
  std::vector<std::unique_ptr<uint8_t[]>> owned;
};

void fill_random(uint8_t * p, size_t n, uint64_t seed, uint16_t half_or, uint16_t half_and, bool halves) {
  const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  const size_t chunk = std::max<size_t>(16, (n / threads + 15) / 16 * 16);
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([=] {
      const size_t begin = std::min(n, t * chunk), end = std::min(n, (t + 1) * chunk);
      uint64_t s = seed * 0x9E3779B97F4A7C15ull + t * 7919 + 1;
      for (size_t i = begin; i < end; i += 8) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        uint64_t v = s;
        if (halves) {
          uint64_t out = 0;
          for (int k = 0; k < 4; ++k) {
            const uint16_t h = static_cast<uint16_t>(((v >> (16 * k)) & half_and) | half_or);
            out |= static_cast<uint64_t>(h) << (16 * k);
          }
          v = out;
        }
        std::memcpy(p + i, &v, std::min<size_t>(8, end - i));
      }
    });
  }
  for (auto & th : pool) th.join();
}

enum class fill { weight, norm, scales, packed };

const tensor_view * add(host_model & m, const std::string & name, dtype t, std::vector<int64_t> shape, fill f,
                        uint64_t seed) {
  tensor_view v;
  v.name = name;
  v.file = "<bench-gpu in-memory model>";
  v.type = t;
  v.shape = std::move(shape);
  size_t n = 1;
  for (int64_t d : v.shape) n *= static_cast<size_t>(d);
  v.nbytes = n * dtype_size(t);
  m.owned.emplace_back(new uint8_t[v.nbytes]);
  uint8_t * p = m.owned.back().get();
  switch (f) {
    case fill::weight:  // about +-0.016..0.031
      fill_random(p, v.nbytes, seed, 0x2400, 0x83FF, true);
      break;
    case fill::norm:
      fill_random(p, v.nbytes, seed, 0x3C00, 0x0000, true);
      break;
    case fill::scales:  // 2^-12 .. 2^-11: codebook levels up to 127 give weights of about +-0.03
      fill_random(p, v.nbytes, seed, 0x0C00, 0x03FF, true);
      break;
    case fill::packed:
      fill_random(p, v.nbytes, seed, 0, 0, false);
      break;
  }
  v.data = p;
  m.w.total_bytes += v.nbytes;
  auto it = m.w.tensors.emplace(name, v).first;
  return &it->second;
}

std::unique_ptr<host_model> build_model(int layers, bool small) {
  auto m = std::make_unique<host_model>();
  model_config & c = m->w.config;
  c.hidden_size = small ? 128 : 2048;
  c.intermediate_size = small ? 128 : 1024;
  c.num_hidden_layers = layers;
  c.num_attention_heads = small ? 2 : 16;
  c.num_key_value_heads = small ? 2 : 16;
  c.head_dim = small ? 64 : 128;
  c.num_experts = small ? 8 : 64;
  c.num_experts_per_tok = small ? 2 : 8;
  c.vocab_size = small ? 300 : 50304;
  c.max_position_embeddings = 4096;
  c.eos_token_ids = {50279};
  m->w.dir = "<bench-gpu in-memory OLMoE-1B-7B-shaped model>";
  m->w.kind = weights_kind::int4;
  m->w.group_size = 32;
  const int64_t H = c.hidden_size, I = c.intermediate_size, G = m->w.group_size;
  uint64_t seed = 1;
  m->w.embed_tokens = add(*m, "model.embed_tokens.weight", dtype::f16, {c.vocab_size, H}, fill::weight, seed++);
  m->w.lm_head = add(*m, "lm_head.weight", dtype::f16, {c.vocab_size, H}, fill::weight, seed++);
  m->w.final_norm = add(*m, "model.norm.weight", dtype::f16, {H}, fill::norm, seed++);
  m->w.layers.resize(static_cast<size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    layer_weights & lw = m->w.layers[static_cast<size_t>(l)];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    lw.input_layernorm = add(*m, p + "input_layernorm.weight", dtype::f16, {H}, fill::norm, seed++);
    lw.post_attention_layernorm = add(*m, p + "post_attention_layernorm.weight", dtype::f16, {H}, fill::norm, seed++);
    lw.q_proj = add(*m, p + "self_attn.q_proj.weight", dtype::f16, {H, H}, fill::weight, seed++);
    lw.k_proj = add(*m, p + "self_attn.k_proj.weight", dtype::f16, {H, H}, fill::weight, seed++);
    lw.v_proj = add(*m, p + "self_attn.v_proj.weight", dtype::f16, {H, H}, fill::weight, seed++);
    lw.o_proj = add(*m, p + "self_attn.o_proj.weight", dtype::f16, {H, H}, fill::weight, seed++);
    lw.q_norm = add(*m, p + "self_attn.q_norm.weight", dtype::f16, {H}, fill::norm, seed++);
    lw.k_norm = add(*m, p + "self_attn.k_norm.weight", dtype::f16, {H}, fill::norm, seed++);
    lw.router = add(*m, p + "mlp.gate.weight", dtype::f16, {c.num_experts, H}, fill::weight, seed++);
    for (int e = 0; e < c.num_experts; ++e) {
      const std::string ep = p + "mlp.experts." + std::to_string(e) + ".";
      lw.expert_gate.push_back(add(*m, ep + "gate_proj.qweight", dtype::u8, {I, H / 2}, fill::packed, seed++));
      lw.expert_up.push_back(add(*m, ep + "up_proj.qweight", dtype::u8, {I, H / 2}, fill::packed, seed++));
      lw.expert_down.push_back(add(*m, ep + "down_proj.qweight", dtype::u8, {H, I / 2}, fill::packed, seed++));
      lw.expert_gate_scales.push_back(add(*m, ep + "gate_proj.scales", dtype::f16, {I, H / G}, fill::scales, seed++));
      lw.expert_up_scales.push_back(add(*m, ep + "up_proj.scales", dtype::f16, {I, H / G}, fill::scales, seed++));
      lw.expert_down_scales.push_back(add(*m, ep + "down_proj.scales", dtype::f16, {H, I / G}, fill::scales, seed++));
    }
  }
  return m;
}

// The LM head's bytes in a step of `batch` greedy outputs: the INT8 screen's copy, its per-row figures and each token's
// bounds written and read back (steps of up to RT_LM_SCREEN_MAX_TOKENS; its few FP16 rows left out), else FP16.
double lm_head_bytes(const model_config & c, int batch, bool screened) {
  const double V = c.vocab_size, H = c.hidden_size;
  if (!screened || batch > RT_LM_SCREEN_MAX_TOKENS) return V * H * 2;
  return V * H + V * 16 + batch * V * 8;
}

// Bytes one batch-1 decode step must read at context `ctx`: every non-routed matrix, top-k experts per layer, KV.
double bytes_per_token(const model_config & c, int group, int ctx, bool screened = true) {
  const double H = c.hidden_size, I = c.intermediate_size, L = c.num_hidden_layers;
  const double qkv = (c.num_attention_heads + 2.0 * c.num_key_value_heads) * c.head_dim;
  const double attn = L * (qkv * H + H * c.num_attention_heads * c.head_dim) * 2;
  const double router = L * c.num_experts * H * 2;
  const double lm = lm_head_bytes(c, 1, screened);
  const double expert = 3 * (I * H / 2 + I * H / group * 2);
  const double experts = L * c.num_experts_per_tok * expert;
  const double kv = L * ctx * c.num_key_value_heads * c.head_dim * 2.0 * 2;
  return attn + router + lm + experts + kv;
}

// Bytes a decode step of `batch` sequences reads: every non-routed weight once, the experts its tokens route to
// (uniform routing touches E (1 - (1 - K/E)^batch) of a layer's E experts) and each sequence's KV cache.
double bytes_per_step(const model_config & c, int group, int ctx, int batch) {
  const double one = bytes_per_token(c, group, ctx);
  const double H = c.hidden_size, I = c.intermediate_size, L = c.num_hidden_layers, E = c.num_experts;
  const double expert = 3 * (I * H / 2 + I * H / group * 2);
  const double kv = L * ctx * c.num_key_value_heads * c.head_dim * 2.0 * 2;
  const double touched = E * (1 - std::pow(1 - c.num_experts_per_tok / E, batch));
  return one - L * c.num_experts_per_tok * expert - kv + L * touched * expert + batch * kv - lm_head_bytes(c, 1, true) +
         lm_head_bytes(c, batch, true);
}

// Users' cards (vendor figures) for the projections.
struct card {
  const char * name;
  double bandwidth;  // bytes/s
  double memory;     // bytes
};
const card CARDS[] = {{"RTX 4060 8 GB", 272e9, 8.0 * 1073741824.0},
                      {"RTX 5070 12 GB", 672e9, 12.0 * 1073741824.0},
                      {"RTX 4090 24 GB", 1008e9, 24.0 * 1073741824.0}};

// A projection (not a measurement) of a card from this GPU's measured decode steps: each measured step splits into
// its bytes at the measured copy bandwidth and a remainder (launches, latency, compute) carried over unchanged, so
// step(card) = bytes / card bandwidth + remainder. The batch is what the card's memory leaves for KV caches of
// `seq_tokens` after the weights and 1 GiB of runtime, at most 64, rounded down to a measured batch; prefill keeps
// the measured rate (compute-bound; a smaller card is slower: optimistic). Full residency only.
struct projection {
  std::string card;
  bool fits = false;
  int batch = 0;
  double decode1 = 0, decode_batch = 0, ifeval_s = 0;
};

std::vector<projection> project_cards(const model_config & c, int group, double weight_bytes, double copy_bw,
                                      double prefill_tps, const double (&rates)[4], double avg_prompt, double avg_new) {
  const int batches[4] = {1, 8, 32, 64};
  const int ctx = 192;
  const double seq_tokens = 640 + 1280;
  const double kv_per_seq = c.num_hidden_layers * seq_tokens * c.num_key_value_heads * c.head_dim * 2.0 * 2;
  std::vector<projection> out;
  for (const card & k : CARDS) {
    projection p;
    p.card = k.name;
    const double free_bytes = k.memory - weight_bytes - 1073741824.0;
    p.fits = free_bytes >= kv_per_seq && rates[0] > 0;
    if (!p.fits) {
      out.push_back(p);
      continue;
    }
    const int most = static_cast<int>(std::min(64.0, std::floor(free_bytes / kv_per_seq)));
    int bi = 0;
    for (int i = 0; i < 4; ++i) {
      if (batches[i] <= most && rates[i] > 0) bi = i;
    }
    const auto step = [&](int i) {
      const double bytes = bytes_per_step(c, group, ctx, batches[i]);
      const double measured = batches[i] / rates[i];
      const double remainder = std::max(0.0, measured - bytes / copy_bw);
      return bytes / k.bandwidth + remainder;
    };
    p.batch = batches[bi];
    p.decode1 = 1 / step(0);
    p.decode_batch = batches[bi] / step(bi);
    p.ifeval_s = 541 * avg_prompt / std::max(1e-9, prefill_tps) + 541 * avg_new / p.decode_batch;
    out.push_back(p);
  }
  return out;
}

std::vector<int32_t> prompt(int n, int seed, int vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<size_t>(i)] = (seed * 7919 + i * 104729) % (vocab - 100) + 50;
  return t;
}

// IFEval's 541 prompts as a run meets them, each answer a fixed length with EOS suppressed: 74 prompts (chosen once,
// seeded) at 1,280 tokens and the other 467 at lengths drawn uniformly from 64..640, as the published run ended 74 at
// the length limit and 467 at EOS. The benchmark model has no tokenizer, so a prompt's length is estimated from its
// chat rendering (OLMoE's template) at one token per 4 bytes, about what OLMoE's GPT-NeoX vocabulary gives on English
// text, and its token ids are drawn; random weights make the content of the ids irrelevant to speed. `shrink` divides
// every length and keeps the first 541 / shrink prompts (a smoke run).
struct ifeval_workload {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<int> new_tokens;
  long long total_new = 0;
  int longest = 0;  // prompt + answer tokens of the longest sequence
};

bool ifeval_workload_from(const std::string & path, int vocab, int shrink, ifeval_workload & out, std::string & error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read";
    return false;
  }
  std::vector<size_t> chat_bytes;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json_value row;
    std::string why;
    const json_value * prompt = json_parse(line, row, why) ? row.get("prompt") : nullptr;
    if (prompt == nullptr || !prompt->is_string()) {
      error = path + " line " + std::to_string(n) + ": " + (why.empty() ? "no \"prompt\" string" : why);
      return false;
    }
    const std::string chat = "<|endoftext|><|user|>\n" + prompt->str + "\n<|assistant|>\n";
    chat_bytes.push_back(chat.size());
  }
  if (chat_bytes.size() != 541) {
    error = path + ": " + std::to_string(chat_bytes.size()) + " prompts, not IFEval's 541";
    return false;
  }
  std::vector<int> lengths(541);
  std::mt19937 rng(541);
  for (int i = 0; i < 541; ++i) lengths[static_cast<size_t>(i)] = i < 74 ? 1280 : std::uniform_int_distribution<int>(64, 640)(rng);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  const size_t keep = 541 / static_cast<size_t>(std::max(1, shrink));
  for (size_t i = 0; i < keep; ++i) {
    const int plen = std::max(1, static_cast<int>((chat_bytes[i] + 3) / 4) / shrink);
    std::vector<int32_t> ids(static_cast<size_t>(plen));
    for (auto & t : ids) t = std::uniform_int_distribution<int>(50, vocab - 50)(rng);
    out.prompts.push_back(std::move(ids));
    out.new_tokens.push_back(std::max(1, lengths[i] / shrink));
    out.total_new += out.new_tokens.back();
    out.longest = std::max(out.longest, plen + out.new_tokens.back());
  }
  return true;
}

struct ifeval_figures {
  bool ran = false;       // every prompt generated its whole answer
  bool stopped = false;   // cut off at the time limit (then wall_s is the limit and new_tokens what was made by then)
  std::string error;
  int prompts = 0;
  long long new_tokens = 0, asked_tokens = 0;
  double wall_s = 0;
};

// The workload through rt_model_generate, as `horizon eval` runs it: continuous batching at `batch`, full residency;
// cancelled after `max_s` seconds (a machine lent for minutes must still write its figures).
ifeval_figures run_ifeval(std::unique_ptr<model_weights> w, const ifeval_workload & wl, int batch, double max_s) {
  ifeval_figures f;
  model_load_options o;
  o.weights = weights_kind::int4;
  o.backend = backend_kind::cuda;
  o.max_context = wl.longest + 8;
  o.max_sequences = batch;
  rt_error err;
  std::shared_ptr<model> m = rt_model_from_weights(std::move(w), o, err);
  if (!m) {
    f.error = err.message;
    return f;
  }
  generate_request r;
  r.prompts = wl.prompts;
  r.max_new_tokens_each = wl.new_tokens;
  r.batch = batch;  // no stop tokens: every answer runs to its length
  std::vector<generate_result> results;
  generate_stats stats;
  std::atomic<bool> cancel{false}, done{false};
  const auto t0 = clk::now();
  std::thread watchdog([&] {
    while (!done.load() && seconds_since(t0) < max_s) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!done.load()) cancel.store(true);
  });
  const bool ok = rt_model_generate(*m, r, &cancel, nullptr, results, stats, err);
  done.store(true);
  watchdog.join();
  f.wall_s = seconds_since(t0);
  f.asked_tokens = wl.total_new;
  if (!ok) {
    f.error = err.message;
    return f;
  }
  for (const auto & res : results) f.new_tokens += static_cast<long long>(res.tokens.size());
  f.prompts = static_cast<int>(results.size());
  f.stopped = cancel.load();
  f.ran = !f.stopped && f.new_tokens == wl.total_new;
  if (!f.ran && !f.stopped) f.error = "generated " + std::to_string(f.new_tokens) + " tokens, the workload asks " + std::to_string(wl.total_new);
  return f;
}

struct decode_result {
  double tokens_per_s = 0;
  double ttft_ms = 0;
  int timed_steps = 0;
  uint64_t timed_h2d_bytes = 0;  // expert bytes copied in during the timed steps (partial residency)
};

// Prefills `batch` prompts of `prompt_len` tokens in one step, then decodes `steps` tokens per sequence; the rate
// excludes the first generated token (it comes from the prefill step). With `profile`, the timed steps are the
// profiler's collection range (gpu-check's Nsight Compute pass runs with --profile-from-start off).
decode_result run_decode(backend & be, int vocab, int batch, int prompt_len, int steps, bool profile = false) {
  rt_error err;
  std::vector<batch_entry> b(static_cast<size_t>(batch));
  for (int i = 0; i < batch; ++i) {
    b[static_cast<size_t>(i)].seq_id = be.seq_create(err);
    if (b[static_cast<size_t>(i)].seq_id < 0) throw std::runtime_error(err.message);
    b[static_cast<size_t>(i)].tokens = prompt(prompt_len, i + 1, vocab);
  }
  std::vector<int32_t> next;
  decode_result r;
  const auto t0 = clk::now();
  if (!be.forward_greedy(b, next, err)) throw std::runtime_error(err.message);
  r.ttft_ms = seconds_since(t0) * 1e3;
  auto advance = [&] {
    for (size_t i = 0; i < b.size(); ++i) {
      b[i].start_pos += static_cast<int>(b[i].tokens.size());
      b[i].tokens = {next[i]};
    }
  };
  advance();
  const int warm = 3;
  for (int s = 0; s < warm; ++s) {
    if (!be.forward_greedy(b, next, err)) throw std::runtime_error(err.message);
    advance();
  }
  if (profile) cudaProfilerStart();
  const uint64_t h2d0 = be.counters().h2d_bytes;
  const auto t1 = clk::now();
  for (int s = 0; s < steps; ++s) {
    if (!be.forward_greedy(b, next, err)) throw std::runtime_error(err.message);
    advance();
  }
  if (profile) cudaProfilerStop();
  r.tokens_per_s = static_cast<double>(batch) * steps / seconds_since(t1);
  r.timed_steps = steps;
  r.timed_h2d_bytes = be.counters().h2d_bytes - h2d0;
  for (const auto & e : b) be.seq_free(e.seq_id);
  return r;
}

// Median time of `reps` runs of `launch` (after one warm-up), by device events on the legacy stream.
template <typename F>
double time_us(F && launch, int reps) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  launch();  // warm-up
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1000.0f);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t.empty() ? 0.0 : t[t.size() / 2];
}

double measured_copy_bandwidth(size_t bytes) {
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) return 0;
  const double us = time_us([&] { cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); }, 10);
  cudaFree(a);
  cudaFree(b);
  return us > 0 ? 2.0 * bytes / (us / 1e6) : 0;  // each copy reads and writes `bytes`
}

// Host-to-device rate from pinned memory, the path partial residency copies experts on.
double measured_h2d_bandwidth(size_t bytes) {
  void *h = nullptr, *d = nullptr;
  if (cudaMallocHost(&h, bytes) != cudaSuccess) return 0;
  if (cudaMalloc(&d, bytes) != cudaSuccess) {
    cudaFreeHost(h);
    return 0;
  }
  std::memset(h, 1, bytes);
  const double us = time_us([&] { cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, nullptr); }, 5);
  cudaFree(d);
  cudaFreeHost(h);
  return us > 0 ? static_cast<double>(bytes) / (us / 1e6) : 0;
}

struct residency_figures {
  std::string label;
  int slots = 0;
  double load_s = 0;
  double prefill_tps = 0, ttft_512_ms = 0, ttft_128_ms = 0;
  double decode1 = 0, decode1_nograph = 0, decode8 = 0, decode32 = 0, decode64 = 0;
  double decode1_apart = 0;  // full residency, with each matmul tail a launch of its own (graphs on)
  // Full residency with plain launches instead of programmatic dependent ones (equal to the above where the device
  // has none: programmatic says whether the main run used them).
  double decode1_plain = 0, decode64_plain = 0;
  bool programmatic = false;
  // Full residency without the LM head's INT8 screen (greedy steps then read the FP16 head).
  double decode1_unscreened = 0, decode8_unscreened = 0;
  double decode256 = 0;  // full residency, not in quick runs
  double h2d_bytes_per_step8 = 0;  // partial residency: expert bytes copied in per batch-8 decode step
  double peak_memory_gib = 0;
  int decode_step_ops = 0;  // kernels in the captured batch-1 decode step
  backend_counters counters;
  bool ok = true;
  bool skipped = false;  // not asked for (--full-only); ok is false
  std::string error;
};

// Prompt lengths: 512 for prefill, 128 before decoding (divided by `shrink` for a smoke run). `base` holds what the
// run changes from the backend's defaults (the tuned kernel choices); `comparisons` adds full residency's comparison
// runs (tails apart, plain launches, no graphs).
residency_figures run_residency(const model_weights & w, const char * label, int slots, bool quick, int shrink,
                                const backend_options & base = {}, bool comparisons = true) {
  residency_figures f;
  f.label = label;
  f.slots = slots == 0 ? w.config.num_experts : slots;
  backend_options o = base;
  o.max_context = 1024;
  o.expert_slots = slots;
  rt_error err;
  const auto t0 = clk::now();
  auto be = cuda_backend_create(w, o, err);
  f.load_s = seconds_since(t0);
  if (!be) {
    f.ok = false;
    f.error = err.message;
    std::replace(f.error.begin(), f.error.end(), '"', '\'');
    return f;
  }
  try {
    const bool partial = slots != 0;
    const int steps1 = quick ? 32 : (partial ? 48 : 128);
    const int stepsb = quick ? 16 : (partial ? 16 : 48);
    run_decode(*be, w.config.vocab_size, 1, 32 / shrink, 2);  // warm-up (first launches, graph capture)
    be->counters_reset();
    const decode_result p512 = run_decode(*be, w.config.vocab_size, 1, 512 / shrink, 1);
    f.ttft_512_ms = p512.ttft_ms;
    f.prefill_tps = 512.0 / shrink / (p512.ttft_ms / 1e3);
    const decode_result d1 = run_decode(*be, w.config.vocab_size, 1, 128 / shrink, std::max(2, steps1 / shrink), !partial);
    f.ttft_128_ms = d1.ttft_ms;
    f.decode1 = d1.tokens_per_s;
    f.decode_step_ops = be->decode_step_ops();
    f.programmatic = be->programmatic_launch();
    const decode_result d8 = run_decode(*be, w.config.vocab_size, 8, 128 / shrink, std::max(2, stepsb / shrink));
    f.decode8 = d8.tokens_per_s;
    f.h2d_bytes_per_step8 = static_cast<double>(d8.timed_h2d_bytes) / std::max(1, d8.timed_steps);
    f.decode32 = run_decode(*be, w.config.vocab_size, 32, 128 / shrink, std::max(2, stepsb / shrink)).tokens_per_s;
    // 64: the most a run generates at once (the automatic batch size on a large GPU, one decode graph).
    f.decode64 = run_decode(*be, w.config.vocab_size, 64, 128 / shrink, std::max(2, stepsb / shrink)).tokens_per_s;
    // Past 64 sequences a step runs without a graph; the figure says whether horizon eval's automatic batch
    // (auto-batch.ts: at most 64) should go further.
    if (!partial && !quick) f.decode256 = run_decode(*be, w.config.vocab_size, 256, 128, std::max(2, stepsb / 2)).tokens_per_s;
    f.counters = be->counters();
    f.peak_memory_gib = static_cast<double>(f.counters.peak_memory_bytes) / (1024.0 * 1024 * 1024);
    if (!partial && comparisons) {
      be.reset();
      const int steps = std::max(2, (quick ? 16 : 64) / shrink);
      o.matmul_tails = false;
      if (auto apart = cuda_backend_create(w, o, err)) {
        f.decode1_apart = run_decode(*apart, w.config.vocab_size, 1, 128 / shrink, steps).tokens_per_s;
      }
      o.matmul_tails = true;
      if (f.programmatic) {
        o.programmatic_launch = false;
        if (auto plain_launch = cuda_backend_create(w, o, err)) {
          f.decode1_plain = run_decode(*plain_launch, w.config.vocab_size, 1, 128 / shrink, steps).tokens_per_s;
          const int steps64 = std::max(2, stepsb / shrink);
          f.decode64_plain = run_decode(*plain_launch, w.config.vocab_size, 64, 128 / shrink, steps64).tokens_per_s;
        }
        o.programmatic_launch = true;
      }
      o.lm_head_screen = false;
      if (auto unscreened = cuda_backend_create(w, o, err)) {
        f.decode1_unscreened = run_decode(*unscreened, w.config.vocab_size, 1, 128 / shrink, steps).tokens_per_s;
        f.decode8_unscreened =
            run_decode(*unscreened, w.config.vocab_size, 8, 128 / shrink, std::max(2, stepsb / shrink)).tokens_per_s;
      }
      o.lm_head_screen = true;
      o.cuda_graphs = false;
      auto plain = cuda_backend_create(w, o, err);
      if (plain) f.decode1_nograph = run_decode(*plain, w.config.vocab_size, 1, 128 / shrink, steps).tokens_per_s;
    }
  } catch (const std::exception & e) {
    f.ok = false;
    f.error = e.what();
  }
  std::replace(f.error.begin(), f.error.end(), '"', '\'');
  return f;
}

// One kernel against another on the model's matmul shapes, each call timed alone with CUDA events (median of the
// repetitions): the W4A16 gate-up (SwiGLU epilogue) and down projections at entries a group from decode to prefill,
// and the FP16 QKV and LM head projections. Weight bytes over time is the figure batch-1 decode lives by; outputs
// are compared with the first kernel's (FP16 weight rounding in the tensor-core kernels: about 1e-3 relative). Then
// decode attention by positions a split block (K and V bytes over time).
struct kernel_figure {
  std::string op, kernel;
  int entries = 0, groups = 0;
  double us = 0, weight_gb_s = 0, tflops = 0, max_rel_diff = 0;
  bool automatic = false;  // the kernel the model's steps take for this shape
  int kind = 0;            // rt_w4a16_kernel or rt_f16_kernel, or the blocks an SM of a tuning row
  // The choice this row's figure stands for when the setting `tune` names is at t (rows a setting is tuned from).
  std::string tune;
  std::function<int(int)> choice_at;
};

// A setting chosen from the kernel table: among `candidates`, the one whose choices cost the least over the shapes of
// the rows tuning it (each shape's time over its fastest such row's, summed: the shape count would be every shape at
// its fastest); the built-in value kept unless another costs less.
struct tuned_threshold {
  int value = 0, builtin = 0, shapes = 0;
  double cost = 0, builtin_cost = 0;
};

constexpr int NEVER = 1 << 30;  // a threshold no step reaches
std::string threshold_text(int t) { return t >= NEVER ? std::string("never") : "from " + std::to_string(t); }

tuned_threshold tune_threshold(const std::vector<kernel_figure> & ks, const std::string & setting,
                               const std::vector<int> & candidates, int builtin) {
  std::map<std::tuple<std::string, int, int>, std::vector<const kernel_figure *>> shapes;
  for (const auto & f : ks) {
    if (f.tune == setting && f.choice_at) shapes[{f.op, f.entries, f.groups}].push_back(&f);
  }
  const auto cost = [&](int t) {
    double c = 0;
    for (const auto & [shape, rows] : shapes) {
      double best = std::numeric_limits<double>::infinity();
      for (const kernel_figure * r : rows) best = std::min(best, r->us);
      const int kind = rows.front()->choice_at(t);
      const auto hit = std::find_if(rows.begin(), rows.end(), [kind](const kernel_figure * r) { return r->kind == kind; });
      if (hit == rows.end()) return std::numeric_limits<double>::infinity();  // a kernel the table did not time
      c += (*hit)->us / best;
    }
    return c;
  };
  tuned_threshold r;
  r.builtin = r.value = builtin;
  r.shapes = static_cast<int>(shapes.size());
  r.builtin_cost = r.cost = cost(builtin);
  for (int t : candidates) {
    const double c = cost(t);
    if (c < r.cost - 1e-9) {
      r.cost = c;
      r.value = t;
    }
  }
  return r;
}

// Random bytes, or FP16 values (bits & half_and) | half_or as build_model fills its tensors.
template <typename T>
T * device_random(size_t n, uint64_t seed, uint16_t half_or = 0, uint16_t half_and = 0) {
  std::vector<uint8_t> h(n * sizeof(T));
  fill_random(h.data(), h.size(), seed, half_or, half_and, half_or != 0);
  void * p = nullptr;
  if (cudaMalloc(&p, h.size()) != cudaSuccess) throw std::runtime_error("cudaMalloc failed in the kernel bench");
  cudaMemcpy(p, h.data(), h.size(), cudaMemcpyHostToDevice);
  return static_cast<T *>(p);
}

double max_rel_diff(const std::vector<float> & a, const std::vector<float> & b) {
  double worst = 0, scale = 1e-6;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return worst / scale;
}

std::vector<kernel_figure> kernel_ab(bool small, bool quick) {
  std::vector<kernel_figure> out;
  const int hidden = small ? 256 : 2048, inter = small ? 128 : 1024, experts = small ? 8 : 64, k = small ? 2 : 8;
  const int group = 32, reps = quick ? 2 : 20;
  // Experts' codes and scales: gate-up [2 inter, hidden], down [hidden, inter].
  std::vector<uint8_t *> qgu, qd;
  std::vector<__half *> sgu, sd;
  for (int e = 0; e < experts; ++e) {
    qgu.push_back(device_random<uint8_t>(size_t(2) * inter * hidden / 2, 100 + e));
    sgu.push_back(device_random<__half>(size_t(2) * inter * hidden / group, 200 + e, 0x0C00, 0x03FF));
    qd.push_back(device_random<uint8_t>(size_t(hidden) * inter / 2, 300 + e));
    sd.push_back(device_random<__half>(size_t(hidden) * inter / group, 400 + e, 0x0C00, 0x03FF));
  }
  const auto table = [](const auto & v) {
    using P = typename std::decay_t<decltype(v)>::value_type;
    void * p = nullptr;
    cudaMalloc(&p, v.size() * sizeof(P));
    cudaMemcpy(p, v.data(), v.size() * sizeof(P), cudaMemcpyHostToDevice);
    return static_cast<const P *>(p);
  };
  const auto tqgu = table(qgu), tqd = table(qd);
  const auto tsgu = table(sgu), tsd = table(sd);
  const int max_tokens = small ? 64 : 512;
  __half * x = device_random<__half>(size_t(max_tokens) * hidden, 7, 0x3400, 0x83FF);
  __half * h = device_random<__half>(size_t(max_tokens) * k * inter, 8, 0x3400, 0x83FF);
  float * y = nullptr;
  cudaMalloc(&y, sizeof(float) * size_t(max_tokens) * k * 2 * inter);
  __half * hs = nullptr;
  cudaMalloc(&hs, sizeof(__half) * size_t(max_tokens) * k * inter);
  const rt_w4a16_kernel kinds[] = {rt_w4a16_kernel::gemv, rt_w4a16_kernel::smem_tiled, rt_w4a16_kernel::mma};
  const char * names[] = {"gemv", "smem-tiled", "mma"};
  // Tokens in the step: batch-1 decode (8 experts, one entry each), batched decode, a prefill chunk.
  for (int tokens : small ? std::vector<int>{1, 16} : std::vector<int>{1, 8, 32, 64, 512}) {
    const int assignments = tokens * k;
    const int groups = std::min(experts, assignments);
    // Assignments spread evenly over `groups` experts, as the router would on average.
    std::vector<int> offsets(static_cast<size_t>(experts) + 1), sorted(static_cast<size_t>(assignments)),
        sorted_tok(static_cast<size_t>(assignments));
    for (int g = 0; g <= experts; ++g) offsets[static_cast<size_t>(g)] = static_cast<int>(static_cast<long long>(std::min(g, groups)) * assignments / groups);
    for (int a = 0; a < assignments; ++a) {
      sorted[static_cast<size_t>(a)] = a;
      sorted_tok[static_cast<size_t>(a)] = a / k;
    }
    const int * doff = table(offsets);
    const int * dsorted = table(sorted);
    const int * dtok = table(sorted_tok);
    const double gu_bytes = static_cast<double>(groups) * 2 * inter * hidden * (0.5 + 2.0 / group);
    const double d_bytes = static_cast<double>(groups) * hidden * inter * (0.5 + 2.0 / group);
    for (int proj = 0; proj < 2; ++proj) {
      std::vector<float> first;
      for (int i = 0; i < 3; ++i) {
        rt_cuda_w4a16_args a;
        a.offsets = doff;
        a.rows_out = dsorted;
        a.n_groups = experts;
        a.n_entries = assignments;
        a.max_group_entries = (assignments + groups - 1) / groups;
        a.kernel = kinds[i];
        a.group_size = group;
        if (proj == 0) {
          a.x = x;
          a.ldx = hidden;
          a.rows_in = dtok;
          a.qweight = tqgu;
          a.scales = tsgu;
          a.rows = 2 * inter;
          a.cols = hidden;
          a.y = y;
          a.ldy = 2 * inter;
          a.y_swiglu = hs;
          a.ld_swiglu = inter;
          a.swiglu_rows = assignments;
        } else {
          a.x = h;
          a.ldx = inter;
          a.rows_in = dsorted;
          a.qweight = tqd;
          a.scales = tsd;
          a.rows = hidden;
          a.cols = inter;
          a.y = y;
          a.ldy = hidden;
        }
        if (rt_cuda_w4a16_choice(a) != kinds[i]) continue;  // this kernel cannot take the shape on this device
        rt_cuda_w4a16_args chosen = a;
        chosen.kernel = rt_w4a16_kernel::automatic;
        kernel_figure f;
        f.automatic = rt_cuda_w4a16_choice(chosen) == kinds[i];
        f.kind = static_cast<int>(kinds[i]);
        f.tune = "w4a16_mma_min_entries";
        f.choice_at = [chosen](int t) mutable {
          chosen.mma_min_entries = t;
          return static_cast<int>(rt_cuda_w4a16_choice(chosen));
        };
        f.op = proj == 0 ? "w4a16 gate-up+swiglu" : "w4a16 down";
        f.kernel = names[i];
        f.entries = assignments;
        f.groups = groups;
        f.us = time_us([&] { rt_cuda_matmul_w4a16(a, nullptr); }, reps);
        const double bytes = proj == 0 ? gu_bytes : d_bytes;
        f.weight_gb_s = bytes / (f.us * 1e3);
        f.tflops = 2.0 * assignments * a.rows * a.cols / (f.us * 1e6);
        std::vector<float> got;
        if (proj == 0) {
          std::vector<__half> hv(size_t(assignments) * inter);
          cudaMemcpy(hv.data(), hs, hv.size() * sizeof(__half), cudaMemcpyDeviceToHost);
          for (const __half & v : hv) got.push_back(__half2float(v));
        } else {
          got.resize(size_t(assignments) * hidden);
          cudaMemcpy(got.data(), y, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
        }
        if (first.empty()) first = got;
        f.max_rel_diff = max_rel_diff(got, first);
        out.push_back(f);
      }
    }
    cudaFree(const_cast<int *>(doff));
    cudaFree(const_cast<int *>(dsorted));
    cudaFree(const_cast<int *>(dtok));
  }
  // FP16 dense: the router, the output projection, the fused QKV projection and the LM head.
  const int vocab = small ? 1000 : 50304;
  __half * w = device_random<__half>(size_t(vocab) * hidden, 9, 0x2400, 0x83FF);
  float * yd = nullptr;
  cudaMalloc(&yd, sizeof(float) * size_t(max_tokens) * vocab);
  const int router_rows = small ? 8 : 64;
  for (int rows : {router_rows, hidden, 3 * hidden, vocab}) {
    for (int tokens : small ? std::vector<int>{1, 16} : std::vector<int>{1, 2, 8, 64, 512}) {
      std::vector<float> first;
      // Times `a` into a figure named `kernel` and compares its output with the shape's first kernel's.
      const auto measure = [&](const rt_cuda_f16_args & a, const std::string & kernel) {
        kernel_figure f;
        f.op = rows == vocab ? "f16 lm head" : rows == router_rows ? "f16 router" : rows == hidden ? "f16 o proj" : "f16 qkv";
        f.kernel = kernel;
        f.entries = tokens;
        f.groups = 1;
        f.us = time_us([&] { rt_cuda_matmul_f16(a, nullptr); }, reps);
        f.weight_gb_s = 2.0 * rows * hidden / (f.us * 1e3);
        f.tflops = 2.0 * tokens * rows * hidden / (f.us * 1e6);
        std::vector<float> got(size_t(tokens) * rows);
        cudaMemcpy(got.data(), yd, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
        if (first.empty()) first = got;
        f.max_rel_diff = max_rel_diff(got, first);
        return f;
      };
      for (rt_f16_kernel kind : {rt_f16_kernel::cuda_cores, rt_f16_kernel::gemv, rt_f16_kernel::gemv_split,
                                 rt_f16_kernel::mma}) {
        rt_cuda_f16_args a = rt_cuda_f16_dense(w, rows, hidden, x, hidden, tokens, yd, rows);
        a.kernel = kind;
        if (rt_cuda_f16_choice(a) != kind) continue;
        kernel_figure f = measure(a, kind == rt_f16_kernel::mma          ? "mma"
                                     : kind == rt_f16_kernel::gemv       ? "gemv"
                                     : kind == rt_f16_kernel::gemv_split ? "gemv split"
                                                                         : "cuda-cores");
        rt_cuda_f16_args chosen = a;
        chosen.kernel = rt_f16_kernel::automatic;
        f.automatic = rt_cuda_f16_choice(chosen) == kind;
        f.kind = static_cast<int>(kind);
        f.tune = "f16_mma_min_tokens";
        f.choice_at = [chosen](int t) mutable {
          chosen.mma_min_tokens = t;
          return static_cast<int>(rt_cuda_f16_choice(chosen));
        };
        out.push_back(f);
      }
      // Where the step takes a decode GEMV: the automatic choice aiming at 1, 2, 4 and 8 blocks an SM (which of the
      // two GEMVs, and the column split's rows a block), for RT_F16_GEMV_BLOCKS_PER_SM.
      const rt_cuda_f16_args probe = rt_cuda_f16_dense(w, rows, hidden, x, hidden, tokens, yd, rows);
      const rt_f16_kernel builtin = rt_cuda_f16_choice(probe);
      if (builtin != rt_f16_kernel::gemv && builtin != rt_f16_kernel::gemv_split) continue;
      for (int per_sm : {1, 2, 4, 8}) {
        rt_cuda_f16_args a = probe;
        a.gemv_blocks_per_sm = per_sm;
        kernel_figure f = measure(a, std::to_string(per_sm) + " an SM (" +
                                         (rt_cuda_f16_choice(a) == rt_f16_kernel::gemv ? "gemv)" : "split)"));
        f.kind = per_sm;
        f.tune = "f16_gemv_blocks_per_sm";
        f.choice_at = [](int t) { return t; };
        out.push_back(f);
      }
    }
  }
  // Greedy steps' LM head: the FP16 product with its argmax (the automatic kernel, the argmax as its tail or its own
  // launch) against the INT8 screen (lm-screen.cuh). Weight GB/s counts the FP16 head's bytes for both, so it reads
  // as the rate a full product would need to match; max_rel_diff is the share of tokens that differ.
  {
    std::vector<uint16_t> head(size_t(vocab) * hidden);
    cudaMemcpy(head.data(), w, head.size() * 2, cudaMemcpyDeviceToHost);
    const rt_lm_screen_copy copy = rt_lm_screen_build(head.data(), vocab, hidden);
    const int tmax = RT_LM_SCREEN_MAX_TOKENS;
    void *dq = nullptr, *dmeta = nullptr, *hi = nullptr, *floor = nullptr, *parts = nullptr, *arrivals = nullptr,
         *toks = nullptr;
    cudaMalloc(&dq, copy.q.size());
    cudaMemcpy(dq, copy.q.data(), copy.q.size(), cudaMemcpyHostToDevice);
    cudaMalloc(&dmeta, sizeof(float4) * copy.meta.size());
    cudaMemcpy(dmeta, copy.meta.data(), sizeof(float4) * copy.meta.size(), cudaMemcpyHostToDevice);
    cudaMalloc(&hi, sizeof(float) * size_t(tmax) * vocab);
    cudaMalloc(&floor, sizeof(unsigned) * tmax);
    cudaMalloc(&parts, sizeof(int2) * size_t(tmax) * vocab);  // the full product's argmax tail: a best a row
    cudaMalloc(&arrivals, sizeof(unsigned));
    cudaMalloc(&toks, sizeof(int) * tmax);
    cudaMemset(floor, 0, sizeof(unsigned) * tmax);
    cudaMemset(arrivals, 0, sizeof(unsigned));
    for (int tokens : !copy.ok ? std::vector<int>{} : small ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 8}) {
      std::vector<int> want;
      const auto row = [&](const std::string & kernel, const std::function<void()> & go, bool automatic) {
        kernel_figure f;
        f.op = "lm head argmax";
        f.kernel = kernel;
        f.entries = tokens;
        f.groups = 1;
        f.us = time_us(go, reps);
        f.weight_gb_s = 2.0 * vocab * hidden / (f.us * 1e3);
        f.tflops = 2.0 * tokens * vocab * hidden / (f.us * 1e6);
        f.automatic = automatic;
        std::vector<int> got(static_cast<size_t>(tokens));
        cudaMemcpy(got.data(), toks, got.size() * sizeof(int), cudaMemcpyDeviceToHost);
        if (want.empty()) want = got;
        int differ = 0;
        for (size_t i = 0; i < got.size(); ++i) differ += got[i] != want[i];
        f.max_rel_diff = static_cast<double>(differ) / tokens;
        out.push_back(f);
      };
      rt_cuda_f16_args a = rt_cuda_f16_dense(w, vocab, hidden, x, hidden, tokens, yd, vocab);
      a.tail.kind = rt_matmul_tail_kind::argmax;
      a.tail.n_tokens = tokens;
      a.tail.argmax_out = static_cast<int *>(toks);
      a.tail.argmax_partials = static_cast<int2 *>(parts);
      a.tail.argmax_partials_per_token = vocab;
      a.tail.arrivals = static_cast<unsigned *>(arrivals);
      const rt_f16_kernel k = rt_cuda_f16_choice(a);
      const char * kname = k == rt_f16_kernel::mma          ? "mma"
                           : k == rt_f16_kernel::gemv       ? "gemv"
                           : k == rt_f16_kernel::gemv_split ? "gemv split"
                           : k == rt_f16_kernel::cuda_cores ? "cuda-cores"
                                                            : "generic";
      row(std::string("fp16 ") + kname + " + argmax",
          [&] { rt_cuda_matmul_f16(a, nullptr); }, false);
      rt_cuda_lm_screen_args sa = rt_cuda_lm_screen_head(copy, static_cast<const int8_t *>(dq),
                                                         static_cast<const float4 *>(dmeta), w, vocab, hidden);
      sa.x = x;
      sa.ldx = hidden;
      sa.n = tokens;
      sa.hi = static_cast<float *>(hi);
      sa.floor = static_cast<unsigned *>(floor);
      sa.partials = static_cast<int2 *>(parts);
      sa.arrivals = static_cast<unsigned *>(arrivals);
      sa.out = static_cast<int *>(toks);
      row("int8 screen", [&] { rt_cuda_lm_screen(sa, nullptr); }, true);
    }
    for (void * p : {dq, dmeta, hi, floor, parts, arrivals, toks}) cudaFree(p);
  }
  cudaFree(yd);
  cudaFree(w);
  // Decode attention (OLMoE: 16 heads of 128, no grouping) by positions a split block: more, shorter blocks use more
  // SMs at short contexts; the model's steps take positions a block by SM count and position (split_len 0, last).
  {
    const int nh = small ? 4 : 16, hd = 128, max_ctx = small ? 256 : 2048, ld = 3 * nh * hd;
    const int seqs = 8;
    std::vector<__half *> kc, vc;
    for (int i = 0; i < seqs; ++i) {
      kc.push_back(device_random<__half>(size_t(max_ctx) * nh * hd, 500 + i, 0x3400, 0x83FF));
      vc.push_back(device_random<__half>(size_t(max_ctx) * nh * hd, 600 + i, 0x3400, 0x83FF));
    }
    const auto kt = table(kc), vt = table(vc);
    float * qkv = nullptr;
    cudaMalloc(&qkv, sizeof(float) * size_t(seqs) * ld);
    cudaMemset(qkv, 0, sizeof(float) * size_t(seqs) * ld);
    __half * ao = nullptr;
    cudaMalloc(&ao, sizeof(__half) * size_t(seqs) * nh * hd);
    float * ws = nullptr;
    cudaMalloc(&ws, sizeof(float) * rt_cuda_attention_workspace_floats(nh, hd, max_ctx, 32));
    unsigned * arrivals = nullptr;
    cudaMalloc(&arrivals, sizeof(unsigned) * RT_ATTENTION_SPLIT_MAX_TOKENS * nh);
    cudaMemset(arrivals, 0, sizeof(unsigned) * RT_ATTENTION_SPLIT_MAX_TOKENS * nh);
    for (int tokens : {1, 8}) {
      for (int ctx : small ? std::vector<int>{100} : std::vector<int>{192, 1024}) {
        std::vector<int> slot(static_cast<size_t>(tokens)), pos(static_cast<size_t>(tokens), ctx - 1);
        for (int i = 0; i < tokens; ++i) slot[static_cast<size_t>(i)] = i;
        const int * dslot = table(slot);
        const int * dpos = table(pos);
        std::vector<float> first;
        for (int variant = 0; variant < 12; ++variant) {
          // Each split length with the merge as a second launch, then as the split launch's tail; then the model's
          // split by SM count, aiming at 1, 2, 4 and 8 blocks an SM (RT_ATTENTION_BLOCKS_PER_SM: 2).
          const int split = variant >= 8 ? 0 : 32 << (variant % 4);
          const int per_sm = variant >= 8 ? 1 << (variant - 8) : 0;
          const bool fused = variant >= 4;
          rt_cuda_attention_args a;
          a.q = qkv;
          a.k = qkv + nh * hd;
          a.v = qkv + 2 * nh * hd;
          a.ld = ld;
          a.k_seq = const_cast<__half * const *>(kt);
          a.v_seq = const_cast<__half * const *>(vt);
          a.tok_slot = dslot;
          a.tok_pos = dpos;
          a.n_tokens = tokens;
          a.n_heads = nh;
          a.n_kv_heads = nh;
          a.head_dim = hd;
          a.max_context = max_ctx;
          a.out = ao;
          a.workspace = ws;
          a.split_len = split;
          a.blocks_per_sm = per_sm;
          a.kv_stored = true;
          a.arrivals = fused ? arrivals : nullptr;
          kernel_figure f;
          f.op = "attention ctx " + std::to_string(ctx);
          f.kernel = split == 0 ? std::to_string(per_sm) + " an SM (" + std::to_string(rt_cuda_attention_splits(a)) +
                                      " blocks a head)"
                                : "split " + std::to_string(split) + (fused ? ", merged in launch" : "");
          f.automatic = split == 0 && per_sm == RT_ATTENTION_BLOCKS_PER_SM;
          if (split == 0) {
            f.kind = per_sm;
            f.tune = "attention_blocks_per_sm";
            f.choice_at = [](int t) { return t; };
          }
          f.entries = tokens;
          f.groups = nh;
          f.us = time_us([&] { rt_cuda_attention(a, nullptr); }, reps);
          f.weight_gb_s = 2.0 * tokens * ctx * nh * hd * 2 / (f.us * 1e3);  // K and V bytes
          f.tflops = 4.0 * tokens * ctx * nh * hd / (f.us * 1e6);
          std::vector<__half> hv(size_t(tokens) * nh * hd);
          cudaMemcpy(hv.data(), ao, hv.size() * sizeof(__half), cudaMemcpyDeviceToHost);
          std::vector<float> got;
          for (const __half & v : hv) got.push_back(__half2float(v));
          if (first.empty()) first = got;
          f.max_rel_diff = max_rel_diff(got, first);
          out.push_back(f);
        }
        cudaFree(const_cast<int *>(dslot));
        cudaFree(const_cast<int *>(dpos));
      }
    }
    cudaFree(qkv);
    cudaFree(ao);
    cudaFree(ws);
    cudaFree(arrivals);
    for (int i = 0; i < seqs; ++i) {
      cudaFree(kc[static_cast<size_t>(i)]);
      cudaFree(vc[static_cast<size_t>(i)]);
    }
    cudaFree(const_cast<__half **>(kt));
    cudaFree(const_cast<__half **>(vt));
  }
  cudaFree(x);
  cudaFree(h);
  cudaFree(y);
  cudaFree(hs);
  for (int e = 0; e < experts; ++e) {
    cudaFree(qgu[static_cast<size_t>(e)]);
    cudaFree(sgu[static_cast<size_t>(e)]);
    cudaFree(qd[static_cast<size_t>(e)]);
    cudaFree(sd[static_cast<size_t>(e)]);
  }
  cudaFree(const_cast<uint8_t **>(reinterpret_cast<uint8_t * const *>(tqgu)));
  cudaFree(const_cast<uint8_t **>(reinterpret_cast<uint8_t * const *>(tqd)));
  cudaFree(const_cast<__half **>(reinterpret_cast<__half * const *>(tsgu)));
  cudaFree(const_cast<__half **>(reinterpret_cast<__half * const *>(tsd)));
  return out;
}

// The JSON's "kernels" and "runs" members (each after a comma), and the file written whole or not at all (a temporary
// file renamed), so that a run killed at its time limit leaves the last complete file.
void write_kernels_json(std::ostream & j, const std::vector<kernel_figure> & kernels) {
  j << ",\n  \"kernels\": [";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const auto & f = kernels[i];
    j << (i ? "," : "") << "\n    {\"op\": \"" << f.op << "\", \"kernel\": \"" << f.kernel << "\", \"entries\": "
      << f.entries << ", \"groups\": " << f.groups << ", \"us\": " << f.us << ", \"weight_gb_s\": " << f.weight_gb_s
      << ", \"tflops\": " << f.tflops << ", \"max_rel_diff\": " << f.max_rel_diff
      << ", \"automatic\": " << (f.automatic ? "true" : "false") << "}";
  }
  j << "\n  ]";
}

void write_runs_json(std::ostream & j, const std::vector<residency_figures> & runs) {
  j << ",\n  \"runs\": [";
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto & f = runs[i];
    j << (i ? "," : "") << "\n    {\"residency\": \"" << f.label << "\", \"ok\": " << (f.ok ? "true" : "false")
      << ", \"skipped\": " << (f.skipped ? "true" : "false") << ", \"slots_per_layer\": " << f.slots << ", \"load_s\": " << f.load_s << ", \"prefill_tokens_per_s\": "
      << f.prefill_tps << ", \"ttft_128_ms\": " << f.ttft_128_ms << ", \"ttft_512_ms\": " << f.ttft_512_ms
      << ", \"decode_tokens_per_s\": {\"b1\": " << f.decode1 << ", \"b1_no_graph\": " << f.decode1_nograph
      << ", \"b1_tails_apart\": " << f.decode1_apart << ", \"b1_plain_launch\": " << f.decode1_plain
      << ", \"b64_plain_launch\": " << f.decode64_plain << ", \"b1_unscreened\": " << f.decode1_unscreened
      << ", \"b8_unscreened\": " << f.decode8_unscreened
      << ", \"b8\": " << f.decode8 << ", \"b32\": " << f.decode32 << ", \"b64\": " << f.decode64
      << ", \"b256\": " << f.decode256 << "}, \"peak_memory_bytes\": "
      << f.counters.peak_memory_bytes << ", \"peak_memory_scope\": \"" << f.counters.peak_memory_scope
      << "\", \"expert_hits\": " << f.counters.expert_hits
      << ", \"expert_misses\": " << f.counters.expert_misses << ", \"expert_evictions\": "
      << f.counters.expert_evictions << ", \"h2d_bytes\": " << f.counters.h2d_bytes << ", \"d2h_bytes\": "
      << f.counters.d2h_bytes << ", \"error\": \"" << f.error << "\"}";
  }
  j << "\n  ]";
}

void write_json_file(const std::string & path, const std::function<void(std::ostream &)> & body) {
  if (path.empty()) return;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream j(tmp);
    body(j);
    if (!j) return;
  }
  std::rename(tmp.c_str(), path.c_str());
}

// What is known so far (device, kernel table, the residency runs done), "complete": false: the full file replaces it.
void write_partial_json(const std::string & path, const char * device, const std::vector<kernel_figure> & kernels,
                        const std::vector<residency_figures> & runs) {
  write_json_file(path, [&](std::ostream & j) {
    j << "{\n  \"device\": \"" << device << "\",\n  \"complete\": false";
    write_kernels_json(j, kernels);
    write_runs_json(j, runs);
    j << "\n}\n";
  });
}

}  // namespace

int main(int argc, char ** argv) {
  int layers = 16, partial_slots = 16;
  bool quick = false, small = false, kernel_table = true, partial_run = true;
  std::string json_path, ifeval_path;
  double ifeval_max_s = 180;
  double deadline_s = 0;  // seconds from start by which the figures must be written (0: none)
  const auto bench_start = clk::now();
  int ifeval_batch = 64;  // what horizon eval takes on a large GPU
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--layers" && i + 1 < argc) layers = std::atoi(argv[++i]);
    else if (a == "--partial-slots" && i + 1 < argc) partial_slots = std::atoi(argv[++i]);
    else if (a == "--quick") quick = true;
    else if (a == "--small") small = true;
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--ifeval" && i + 1 < argc) ifeval_path = argv[++i];
    else if (a == "--ifeval-max-s" && i + 1 < argc) ifeval_max_s = std::atof(argv[++i]);
    else if (a == "--deadline-s" && i + 1 < argc) deadline_s = std::atof(argv[++i]);
    else if (a == "--ifeval-batch" && i + 1 < argc) ifeval_batch = std::atoi(argv[++i]);
    else if (a == "--no-kernel-table") kernel_table = false;
    else if (a == "--full-only") partial_run = false;  // the peer comparison's second run needs full residency alone
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("skipped: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s, sm_%d%d, %.1f GiB, %d SMs\n", prop.name, prop.major, prop.minor,
              prop.totalGlobalMem / 1073741824.0, prop.multiProcessorCount);
  const double copy_bw = measured_copy_bandwidth(small ? size_t(64) << 20 : size_t(1) << 30);
  bandwidth_figure nominal = nominal_bandwidth(prop);
  if (nominal.bytes_per_s <= 0) nominal = {copy_bw, "the measured copy: no datasheet figure or memory attributes"};
  const double NOMINAL_BANDWIDTH = nominal.bytes_per_s;
  std::printf("measured device copy bandwidth: %.2f TB/s (nominal %.2f TB/s, %s)\n", copy_bw / 1e12,
              NOMINAL_BANDWIDTH / 1e12, nominal.source.c_str());
  const double h2d_bw = measured_h2d_bandwidth(small ? size_t(16) << 20 : size_t(256) << 20);
  std::printf("measured host-to-device bandwidth (pinned): %.1f GB/s\n", h2d_bw / 1e9);

  const std::vector<kernel_figure> kernels = kernel_table ? kernel_ab(small, quick) : std::vector<kernel_figure>{};
  std::vector<residency_figures> runs;
  write_partial_json(json_path, prop.name, kernels, runs);
  if (!kernels.empty()) {
    std::printf("\nkernels, one call each (median of repetitions; weight GB/s against %.1f TB/s nominal):\n", NOMINAL_BANDWIDTH / 1e12);
    std::printf("%-22s %-11s %8s %7s %10s %11s %9s %12s\n", "op", "kernel", "entries", "groups", "us", "weight GB/s",
                "TFLOP/s", "rel diff");
    for (const auto & f : kernels) {
      std::printf("%-22s %-11s %8d %7d %10.2f %11.0f %9.2f %12.2e%s\n", f.op.c_str(), f.kernel.c_str(), f.entries,
                  f.groups, f.us, f.weight_gb_s, f.tflops, f.max_rel_diff, f.automatic ? "  (automatic)" : "");
    }
    // Where the automatic choice is not the fastest by over 5%: the constants behind that choice (RT_W4A16_MMA_MIN_
    // ENTRIES, RT_F16_MMA_MIN_TOKENS, RT_F16_GEMV_BLOCKS_PER_SM, RT_ATTENTION_BLOCKS_PER_SM) want another value.
    int misses = 0;
    for (const auto & f : kernels) {
      if (!f.automatic) continue;
      const kernel_figure * best = &f;
      for (const auto & g : kernels) {
        if (g.op == f.op && g.entries == f.entries && g.groups == f.groups && g.us < best->us) best = &g;
      }
      if (best->us < 0.95 * f.us) {
        if (misses++ == 0) std::printf("\nthe automatic choice is not the fastest here:\n");
        std::printf("  %s, %d entries: automatic %s %.2f us, %s %.2f us (%.2fx)\n", f.op.c_str(), f.entries,
                    f.kernel.c_str(), f.us, best->kernel.c_str(), best->us, f.us / best->us);
      }
    }
    if (misses == 0) std::printf("\nthe automatic choice is the fastest (within 5%%) for every shape above\n");
    std::printf("\n");
  }
  // The tensor-core thresholds this table argues for; when they differ from the built-in ones, full residency runs
  // once more with them (below), so that one GPU session shows what moving the constants would give the model.
  // (Below sm_80 the same thresholds pick the shared-memory kernels instead of the tensor-core ones.)
  const tuned_threshold tuned_w4 =
      tune_threshold(kernels, "w4a16_mma_min_entries", {1, 2, 4, 8, 16, 32, 64, NEVER}, RT_W4A16_MMA_MIN_ENTRIES);
  const tuned_threshold tuned_f16 =
      tune_threshold(kernels, "f16_mma_min_tokens", {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, NEVER}, RT_F16_MMA_MIN_TOKENS);
  const tuned_threshold tuned_gemv =
      tune_threshold(kernels, "f16_gemv_blocks_per_sm", {1, 2, 4, 8}, RT_F16_GEMV_BLOCKS_PER_SM);
  const tuned_threshold tuned_att =
      tune_threshold(kernels, "attention_blocks_per_sm", {1, 2, 4, 8}, RT_ATTENTION_BLOCKS_PER_SM);
  const bool tuned_differs = tuned_w4.value != tuned_w4.builtin || tuned_f16.value != tuned_f16.builtin ||
                             tuned_att.value != tuned_att.builtin || tuned_gemv.value != tuned_gemv.builtin;
  for (const auto & [name, unit, t, threshold] :
       {std::tuple<const char *, const char *, const tuned_threshold &, bool>{"W4A16 batched kernel", "entries an expert",
                                                                               tuned_w4, true},
        {"FP16 batched kernel", "tokens", tuned_f16, true},
        {"decode attention split aims at", "blocks an SM", tuned_att, false},
        {"FP16 decode GEMV aims at", "blocks an SM", tuned_gemv, false}}) {
    if (t.shapes == 0) continue;
    const auto text = [threshold = threshold](int v) { return threshold ? threshold_text(v) : std::to_string(v); };
    std::printf("the kernel table's choice: %s %s %s (built in: %s), time over the fastest summed over its %d shapes "
                "%.2f (built in %.2f)\n",
                name, text(t.value).c_str(), unit, text(t.builtin).c_str(), t.shapes, t.cost, t.builtin_cost);
  }

  const auto tb = clk::now();
  auto m = build_model(layers, small);
  std::printf("random %s model: %d layers, %.2f GB of tensors, built in %.1f s\n",
              small ? "small OLMoE-architecture" : "OLMoE-shaped", layers,
              m->w.total_bytes / 1e9, seconds_since(tb));

  const int shrink = small ? 16 : 1;
  runs.push_back(run_residency(m->w, "full", 0, quick, shrink));
  write_partial_json(json_path, prop.name, kernels, runs);
  if (tuned_differs) {
    backend_options tuned_options;
    tuned_options.w4a16_mma_min_entries = tuned_w4.value;
    tuned_options.f16_mma_min_tokens = tuned_f16.value;
    tuned_options.attention_blocks_per_sm = tuned_att.value;
    tuned_options.f16_gemv_blocks_per_sm = tuned_gemv.value;
    runs.push_back(run_residency(m->w, "tuned", 0, true, shrink, tuned_options, /*comparisons=*/false));
    write_partial_json(json_path, prop.name, kernels, runs);
  }
  if (partial_run) {
    runs.push_back(run_residency(m->w, "partial", partial_slots, quick, shrink));
    write_partial_json(json_path, prop.name, kernels, runs);
  } else {
    residency_figures skipped;
    skipped.label = "partial";
    skipped.ok = false;
    skipped.skipped = true;
    skipped.error = "not run (--full-only)";
    runs.push_back(skipped);
  }

  const model_config & c = m->w.config;
  const double bpt = bytes_per_token(c, m->w.group_size, 128 + 64);
  const double roofline_tps = NOMINAL_BANDWIDTH / bpt;
  // The same with the FP16 LM head (the step without the screen; the figure earlier measurements were drawn against).
  const double bpt_fp16_head = bytes_per_token(c, m->w.group_size, 128 + 64, false);
  const double avg_prompt = std::getenv("IFEVAL_AVG_PROMPT") ? std::atof(std::getenv("IFEVAL_AVG_PROMPT")) : 100;
  const double avg_new = std::getenv("IFEVAL_AVG_NEW") ? std::atof(std::getenv("IFEVAL_AVG_NEW")) : 400;

  std::printf("\n%-8s %6s %8s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %9s %10s %12s %6s %9s\n",
              "residency", "slots", "load_s", "prefill/s", "ttft128ms", "ttft512ms", "dec1/s", "dec1-nogr",
              "dec1-apart", "dec8/s", "dec32/s", "dec64/s", "dec256/s", "peakGiB", "hits", "misses", "evict", "h2d_GB");
  for (const auto & f : runs) {
    if (!f.ok) {
      std::printf("%-8s %s: %s\n", f.label.c_str(), f.skipped ? "skipped" : "FAILED", f.error.c_str());
      continue;
    }
    std::printf("%-9s %6d %8.1f %10.0f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %9.2f %10llu "
                "%12llu %6llu %9.2f\n",
                f.label.c_str(), f.slots, f.load_s, f.prefill_tps, f.ttft_128_ms, f.ttft_512_ms, f.decode1,
                f.decode1_nograph, f.decode1_apart, f.decode8, f.decode32, f.decode64, f.decode256, f.peak_memory_gib,
                static_cast<unsigned long long>(f.counters.expert_hits),
                static_cast<unsigned long long>(f.counters.expert_misses),
                static_cast<unsigned long long>(f.counters.expert_evictions), f.counters.h2d_bytes / 1e9);
    if (f.counters.d2h_bytes != 0) std::printf("  WARNING: %s residency copied expert bytes device-to-host\n", f.label.c_str());
  }
  const residency_figures & full = runs[0];
  const double ratio = full.ok ? full.decode1 / roofline_tps : 0;
  std::printf("\nbatch-1 roofline: %.1f MB read per token at context ~192 (the LM head screened; %.1f MB with the FP16 "
              "head), %.0f tok/s at %.1f TB/s; measured %.1f tok/s = %.1f%% of roofline (%.1f%% of the FP16 head's)\n",
              bpt / 1e6, bpt_fp16_head / 1e6, roofline_tps, NOMINAL_BANDWIDTH / 1e12, full.decode1, 100 * ratio,
              100 * full.decode1 / (NOMINAL_BANDWIDTH / bpt_fp16_head));
  if (full.ok && full.decode_step_ops > 0) {
    std::printf("batch-1 decode step: %d kernels in its graph, %.2f us per kernel at the measured rate\n",
                full.decode_step_ops, 1e6 / full.decode1 / full.decode_step_ops);
  }
  if (full.ok && full.programmatic) {
    std::printf("programmatic dependent launches: batch 1 %.1f tok/s (plain launches %.1f, %.2fx), batch 64 %.1f "
                "(plain %.1f, %.2fx)\n",
                full.decode1, full.decode1_plain, full.decode1_plain > 0 ? full.decode1 / full.decode1_plain : 0,
                full.decode64, full.decode64_plain, full.decode64_plain > 0 ? full.decode64 / full.decode64_plain : 0);
  } else if (full.ok) {
    std::printf("programmatic dependent launches: not used (compute capability before 9.0, or the probe failed)\n");
  }
  const residency_figures * tuned = runs.size() > 2 ? &runs[1] : nullptr;
  if (tuned != nullptr && tuned->ok && full.ok) {
    const auto r = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    std::printf("tuned choices (W4A16 batched kernel %s entries an expert, FP16 %s tokens, attention %d blocks an SM, "
                "FP16 GEMV %d) against the built-in ones: prefill %.0f tok/s (%.2fx), decode b1 %.1f (%.2fx), b8 %.1f "
                "(%.2fx), b32 %.1f (%.2fx), b64 %.1f (%.2fx)\n",
                threshold_text(tuned_w4.value).c_str(), threshold_text(tuned_f16.value).c_str(), tuned_att.value,
                tuned_gemv.value,
                tuned->prefill_tps, r(tuned->prefill_tps, full.prefill_tps),
                tuned->decode1, r(tuned->decode1, full.decode1), tuned->decode8, r(tuned->decode8, full.decode8),
                tuned->decode32, r(tuned->decode32, full.decode32), tuned->decode64, r(tuned->decode64, full.decode64));
  } else if (!kernels.empty()) {
    std::printf("tuned choices: the built-in ones (the kernel table argues for no other)\n");
  }
  if (full.ok && full.decode1_unscreened > 0) {
    std::printf("LM head INT8 screen (greedy steps): batch 1 %.1f tok/s with it, %.1f without (%.2fx); batch 8 %.1f "
                "and %.1f (%.2fx); it computed %.1f FP16 rows a token\n",
                full.decode1, full.decode1_unscreened, full.decode1 / full.decode1_unscreened, full.decode8,
                full.decode8_unscreened, full.decode8_unscreened > 0 ? full.decode8 / full.decode8_unscreened : 0,
                full.counters.lm_head_screened > 0
                    ? static_cast<double>(full.counters.lm_head_exact_rows) / full.counters.lm_head_screened
                    : 0.0);
  }
  if (full.ok && full.decode1_apart > 0) {
    std::printf("matmul tails: batch 1 %.1f tok/s in their matmuls' launches, %.1f launched apart (%.2fx)\n",
                full.decode1, full.decode1_apart, full.decode1 / full.decode1_apart);
  }
  if (full.ok && full.decode256 > 0) {
    std::printf("batch 256 against 64 (the automatic batch's cap): %.1f tok/s against %.1f (%.2fx)\n", full.decode256,
                full.decode64, full.decode64 > 0 ? full.decode256 / full.decode64 : 0);
  }
  // Partial residency at batch 8 against full (the goal: 60%), and the most the experts it copied in allow: a step
  // cannot be shorter than its copies at the measured host-to-device rate.
  const residency_figures & part = runs.back();  // partial residency comes last
  const double partial_share8 = full.ok && part.ok && full.decode8 > 0 ? part.decode8 / full.decode8 : 0;
  const double copy_ceiling8 =
      part.ok && part.h2d_bytes_per_step8 > 0 && h2d_bw > 0 ? 8.0 / (part.h2d_bytes_per_step8 / h2d_bw) : 0;
  if (full.ok && part.ok) {
    std::printf("partial residency at batch 8: %.0f tok/s = %.0f%% of full; it copied %.2f GB of experts a step, so at "
                "%.1f GB/s no schedule beats %.0f tok/s (%.0f%% of full)\n",
                part.decode8, 100 * partial_share8, part.h2d_bytes_per_step8 / 1e9, h2d_bw / 1e9, copy_ceiling8,
                full.decode8 > 0 ? 100 * copy_ceiling8 / full.decode8 : 0.0);
  }
  const double ifeval_b1 = full.ok ? 541 * (full.ttft_128_ms / 1e3 + (avg_new - 1) / full.decode1) : 0;
  // Runs batch continuously (a prompt starts as soon as another ends), so the batch stays full until the last ones.
  const double ifeval_b32 =
      full.ok ? 541 * avg_prompt / full.prefill_tps + 541 * avg_new / std::max(1e-9, full.decode32) : 0;
  const double ifeval_b64 =
      full.ok ? 541 * avg_prompt / full.prefill_tps + 541 * avg_new / std::max(1e-9, full.decode64) : 0;
  const double ifeval_b256 =
      full.ok && full.decode256 > 0 ? 541 * avg_prompt / full.prefill_tps + 541 * avg_new / full.decode256 : 0;
  std::printf("projected IFEval-541 (assuming %.0f prompt and %.0f generated tokens per prompt, full residency, "
              "continuous batching): %.1f min at batch 1, %.1f min at batch 32, %.1f min at batch 64, %.1f min at "
              "batch 256\n",
              avg_prompt, avg_new, ifeval_b1 / 60, ifeval_b32 / 60, ifeval_b64 / 60, ifeval_b256 / 60);
  std::vector<projection> cards;
  if (full.ok) {
    const double rates[4] = {full.decode1, full.decode8, full.decode32, full.decode64};
    // The weights as full residency holds them: the checkpoint's bytes and the LM head's INT8 screen.
    const double held = static_cast<double>(m->w.total_bytes) +
                        static_cast<double>(rt_cuda_lm_screen_bytes(c.vocab_size, c.hidden_size));
    cards = project_cards(c, m->w.group_size, held, copy_bw, full.prefill_tps, rates,
                          avg_prompt, avg_new);
    std::printf("\nPROJECTIONS for users' cards (not measurements: this GPU's decode steps split into bytes at its copy "
                "bandwidth and a remainder kept as is; full residency):\n");
    for (const projection & p : cards) {
      if (!p.fits) {
        std::printf("  %-16s the weights and one sequence's KV cache do not fit: partial residency, not projected\n",
                    p.card.c_str());
      } else {
        std::printf("  %-16s decode b1 %.0f tok/s, b%d %.0f tok/s, IFEval-541 %.1f min\n", p.card.c_str(), p.decode1,
                    p.batch, p.decode_batch, p.ifeval_s / 60);
      }
    }
  }

  // Last: the run takes the model's weights.
  ifeval_figures ifeval;
  const int batch = ifeval_batch;
  if (!ifeval_path.empty() && deadline_s > 0) {
    // The workload is last and stops at its limit; keep it inside the caller's deadline (its model load and the JSON
    // after it need some seconds), or the killed run would take every figure above with it.
    const double left = deadline_s - seconds_since(bench_start) - 20;
    if (left < ifeval_max_s) {
      std::printf("IFEval-shaped workload: limited to %.0f s (the deadline is %.0f s from the start)\n",
                  std::max(0.0, left), deadline_s);
      ifeval_max_s = left;
    }
  }
  if (!ifeval_path.empty() && ifeval_max_s < 10) {
    ifeval.error = "not run: under 10 s left before the deadline";
    std::printf("IFEval-shaped workload: %s\n", ifeval.error.c_str());
  } else if (!ifeval_path.empty()) {
    ifeval_workload wl;
    if (!ifeval_workload_from(ifeval_path, c.vocab_size, small ? 64 : 1, wl, ifeval.error)) {
      std::printf("IFEval-shaped workload: %s\n", ifeval.error.c_str());
    } else {
      ifeval = run_ifeval(std::make_unique<model_weights>(std::move(m->w)), wl, batch, ifeval_max_s);
      if (ifeval.ran) {
        std::printf("IFEval-shaped workload (%d prompts, lengths estimated, EOS suppressed, %lld new tokens, continuous "
                    "batching at %d, full residency): %.1f s, %.0f generated tok/s\n",
                    ifeval.prompts, ifeval.new_tokens, batch, ifeval.wall_s, ifeval.new_tokens / std::max(1e-9, ifeval.wall_s));
      } else if (ifeval.stopped) {
        std::printf("IFEval-shaped workload stopped at its %.1f s limit: %lld of %lld new tokens (%.0f generated tok/s)\n",
                    ifeval_max_s, ifeval.new_tokens, ifeval.asked_tokens, ifeval.new_tokens / std::max(1e-9, ifeval.wall_s));
      } else {
        std::printf("IFEval-shaped workload FAILED: %s\n", ifeval.error.c_str());
      }
    }
  }

  if (!json_path.empty()) {
    write_json_file(json_path, [&](std::ostream & j) {
      j << "{\n  \"device\": \"" << prop.name << "\",\n  \"complete\": true,\n  \"layers\": " << layers
        << ",\n  \"measured_copy_bandwidth_tb_s\": " << copy_bw / 1e12 << ",\n  \"measured_h2d_bandwidth_gb_s\": "
        << h2d_bw / 1e9 << ",\n  \"partial_batch8\": {\"share_of_full\": " << partial_share8
        << ", \"h2d_bytes_per_step\": " << part.h2d_bytes_per_step8 << ", \"copy_bound_tokens_per_s\": " << copy_ceiling8
        << "},\n  \"nominal_bandwidth_tb_s\": "
        << NOMINAL_BANDWIDTH / 1e12 << ",\n  \"nominal_bandwidth_source\": \"" << nominal.source
        << "\",\n  \"bytes_per_token_batch1\": " << bpt << ",\n  \"bytes_per_token_batch1_fp16_head\": " << bpt_fp16_head
        << ",\n  \"roofline_tokens_per_s\": "
        << roofline_tps << ",\n  \"roofline_ratio_batch1\": " << ratio
        << ",\n  \"decode_step_kernels_batch1\": " << (full.ok ? full.decode_step_ops : 0)
        << ",\n  \"programmatic_launch\": " << (full.ok && full.programmatic ? "true" : "false")
        << ",\n  \"tuned_thresholds\": {\"w4a16_mma_min_entries\": " << tuned_w4.value
        << ", \"builtin_w4a16_mma_min_entries\": " << tuned_w4.builtin << ", \"w4a16_table_cost\": " << tuned_w4.cost
        << ", \"builtin_w4a16_table_cost\": " << tuned_w4.builtin_cost << ", \"w4a16_shapes\": " << tuned_w4.shapes
        << ", \"f16_mma_min_tokens\": " << tuned_f16.value << ", \"builtin_f16_mma_min_tokens\": " << tuned_f16.builtin
        << ", \"f16_table_cost\": " << tuned_f16.cost << ", \"builtin_f16_table_cost\": " << tuned_f16.builtin_cost
        << ", \"f16_shapes\": " << tuned_f16.shapes << ", \"attention_blocks_per_sm\": " << tuned_att.value
        << ", \"builtin_attention_blocks_per_sm\": " << tuned_att.builtin << ", \"attention_table_cost\": "
        << tuned_att.cost << ", \"builtin_attention_table_cost\": " << tuned_att.builtin_cost
        << ", \"f16_gemv_blocks_per_sm\": " << tuned_gemv.value << ", \"builtin_f16_gemv_blocks_per_sm\": "
        << tuned_gemv.builtin << ", \"f16_gemv_table_cost\": " << tuned_gemv.cost
        << ", \"builtin_f16_gemv_table_cost\": " << tuned_gemv.builtin_cost << ", \"run\": " << (tuned != nullptr ? "\"tuned\"" : "null") << "}"
        << ",\n  \"ifeval541_projection\": {\"avg_prompt\": "
        << avg_prompt << ", \"avg_new\": " << avg_new << ", \"batch1_s\": " << ifeval_b1 << ", \"batch32_s\": "
        << ifeval_b32 << ", \"batch64_s\": " << ifeval_b64 << "},\n  \"ifeval_shaped\": ";
      if (ifeval_path.empty()) {
        j << "null";
      } else {
        std::string why = ifeval.error;
        std::replace(why.begin(), why.end(), '"', '\'');
        j << "{\"ran\": " << (ifeval.ran ? "true" : "false") << ", \"stopped_at_limit\": " << (ifeval.stopped ? "true" : "false")
          << ", \"prompts\": " << ifeval.prompts << ", \"new_tokens\": " << ifeval.new_tokens << ", \"asked_tokens\": "
          << ifeval.asked_tokens << ", \"batch\": " << batch << ", \"wall_s\": " << ifeval.wall_s << ", \"error\": \"" << why << "\"}";
      }
      j << ",\n  \"card_projections\": [";
      for (size_t i = 0; i < cards.size(); ++i) {
        const projection & p = cards[i];
        j << (i ? "," : "") << "\n    {\"card\": \"" << p.card << "\", \"full_residency_fits\": " << (p.fits ? "true" : "false")
          << ", \"decode_b1_tokens_per_s\": " << p.decode1 << ", \"batch\": " << p.batch << ", \"decode_batch_tokens_per_s\": "
          << p.decode_batch << ", \"ifeval541_s\": " << p.ifeval_s << "}";
      }
      j << "\n  ]";
      write_kernels_json(j, kernels);
      write_runs_json(j, runs);
      j << "\n}\n";
    });
    std::printf("wrote %s\n", json_path.c_str());
  }
  bool all_ok = true;
  for (const auto & f : runs) all_ok = all_ok && (f.ok || f.skipped) && f.counters.d2h_bytes == 0;
  all_ok = all_ok && (ifeval_path.empty() || ifeval.ran || ifeval.stopped);
  return all_ok ? 0 : 1;
}

#else

int main() {
  std::printf("skipped: this build has no CUDA backend\n");
  return 0;
}

#endif
