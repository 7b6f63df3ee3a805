// CPU backend: KV-cache decode equals full recompute (MHA and GQA), batched generation equals one-by-one (and its
// logits bit for bit), stop
// tokens, cancellation, the context limit, SIMD vs scalar kernels, and INT4 (packed by rt_qpacked_pack) against the
// same model with the dequantised experts written as F32. To add a case, add a function and call it from main().
#include <atomic>
#include <stdexcept>
#include <tuple>

#include "core/backend.h"
#include "core/safetensors.h"
#include "core/mapped-file.h"
#include "cpu/cpu-kernels.h"
#include "cpu/lm-head-screen.h"
#include "cpu/ref-ops.h"
#include "quant/qpacked.h"
#include "rt/rt-runtime.h"
#include "test-helpers.h"

using namespace rt;
namespace fs = std::filesystem;

/** Max |incremental - full| logit difference; the same kernels run in both, so only exact reuse is expected. */
static const float MAX_ABS_ERR_KV_CACHE = 1e-5f;
/** Max |simd - scalar| logit difference relative to the largest |logit|. */
static const float MAX_REL_ERR_SIMD = 1e-4f;
/** Max |int4 - dequantised F32 model| relative to the largest |logit| (same values, different rounding order). */
static const float MAX_REL_ERR_INT4_VS_DEQUANT = 1e-4f;
/** 8-bit activations against FP32 ones over the same INT4 weights (max |diff| / max |logit|), and that error as a
 *  share of what INT4 weights cost against BF16 (measured on this chaotic tiny model: 1.4e-2, 0.07x). */
static const float MAX_REL_ERR_Q8_VS_F32_ACTIVATIONS = 3e-2f;
static const float MAX_Q8_SHARE_OF_INT4_ERR = 0.25f;

static const std::vector<int32_t> TOKENS = {3, 17, 42, 5, 9, 60, 11, 2, 33, 48, 7, 21};

static std::shared_ptr<model> load(const fs::path & dir, const char * weights, int max_context = 0) {
  model_load_options o;
  o.dir = dir.string();
  CHECK(parse_weights_kind(weights, o.weights), "weights name %s", weights);
  o.threads = 2;
  o.max_context = max_context;
  rt_error err;
  auto m = rt_model_load(o, err);
  CHECK(m != nullptr, "load %s (%s): %s", dir.string().c_str(), weights, err.message.c_str());
  return m;
}

static float max_abs(const std::vector<std::vector<float>> & a) {
  float m = 0;
  for (const auto & r : a) for (float v : r) m = std::max(m, std::fabs(v));
  return m;
}

static float max_diff(const std::vector<std::vector<float>> & a, const std::vector<std::vector<float>> & b) {
  float m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    for (size_t j = 0; j < a[i].size() && j < b[i].size(); ++j) m = std::max(m, std::fabs(a[i][j] - b[i][j]));
  return m;
}

static void kv_cache_matches_recompute(const fs::path & dir, const char * label) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::bf16, err.message);
  CHECK(w != nullptr, "%s: %s", label, err.message.c_str());
  if (!w) return;
  backend_options bo;
  bo.threads = 2;
  auto be = cpu_backend_create(*w, bo, err);
  const int V = w->config.vocab_size;
  const int full = be->seq_create(err);
  std::vector<std::vector<float>> out;
  CHECK(be->forward({{full, TOKENS, 0}}, true, out, err), "%s full: %s", label, err.message.c_str());
  // Every token runs top_k experts in every layer.
  const uint64_t routed = TOKENS.size() * static_cast<uint64_t>(w->config.num_experts_per_tok * w->config.num_hidden_layers);
  CHECK(be->counters().expert_hits == routed, "%s: %llu expert hits, want %llu", label,
        static_cast<unsigned long long>(be->counters().expert_hits), static_cast<unsigned long long>(routed));
  const int inc = be->seq_create(err);
  std::vector<std::vector<float>> step;
  CHECK(be->forward({{inc, std::vector<int32_t>(TOKENS.begin(), TOKENS.begin() + 5), 0}}, true, step, err), "%s prefix", label);
  float worst = 0;
  for (int t = 0; t < 5; ++t)
    for (int i = 0; i < V; ++i) worst = std::max(worst, std::fabs(step[0][t * V + i] - out[0][t * V + i]));
  for (size_t t = 5; t < TOKENS.size(); ++t) {
    CHECK(be->forward({{inc, {TOKENS[t]}, static_cast<int>(t)}}, false, step, err), "%s step %zu: %s", label, t, err.message.c_str());
    for (int i = 0; i < V; ++i) worst = std::max(worst, std::fabs(step[0][i] - out[0][t * V + i]));
  }
  CHECK(worst <= MAX_ABS_ERR_KV_CACHE, "%s: KV-cache decode differs from full recompute by %g", label, worst);
  CHECK(be->seq_length(inc) == static_cast<int>(TOKENS.size()), "%s: cached length", label);
  // Rewinding (start_pos inside the cache) recomputes from there.
  CHECK(be->forward({{inc, {TOKENS[3]}, 3}}, false, step, err), "%s rewind", label);
  float rw = 0;
  for (int i = 0; i < V; ++i) rw = std::max(rw, std::fabs(step[0][i] - out[0][3 * V + i]));
  CHECK(rw <= MAX_ABS_ERR_KV_CACHE, "%s: rewind differs by %g", label, rw);
  CHECK(!be->forward({{inc, {V + 5}, 4}}, false, step, err) && err.message.find("vocabulary") != std::string::npos &&
            err.code == rt_status::invalid_request,
        "%s: bad token rejected", label);
  CHECK(!be->forward({{inc, {1}, 4}, {inc, {2}, 5}}, false, step, err) && err.message.find("twice") != std::string::npos, "%s: duplicate sequence rejected", label);
  CHECK(!be->forward({{full, {1}, 12}, {inc, {1}, 4}, {inc, {2}, 5}}, false, step, err) && err.message.find("twice") != std::string::npos,
        "%s: duplicate after another sequence rejected", label);
  CHECK(be->seq_length(full) == static_cast<int>(TOKENS.size()) && be->seq_length(-1) == -1 && be->seq_length(inc + 1) == -1,
        "%s: seq_length of the first, a negative and an unknown id", label);
  // Both caches hold 64 positions (the smallest allocation): K and V, every layer, every KV head, FP16.
  const uint64_t kv = 2ull * 64 * 2 * w->config.num_hidden_layers * w->config.num_key_value_heads * w->config.head_dim * 2;
  CHECK(be->counters().peak_memory_bytes >= kv, "%s: peak %llu bytes below the KV caches' %llu", label,
        static_cast<unsigned long long>(be->counters().peak_memory_bytes), static_cast<unsigned long long>(kv));
  std::printf("%s: kv-cache max diff %g\n", label, worst);
}

static std::vector<generate_result> gen(model & m, std::vector<std::vector<int32_t>> prompts, int max_new, std::vector<int32_t> stops = {},
                                        const std::atomic<bool> * cancel = nullptr, token_callback cb = nullptr) {
  generate_request r;
  r.prompts = std::move(prompts);
  r.max_new_tokens = max_new;
  r.stop_tokens = std::move(stops);
  std::vector<generate_result> res;
  generate_stats st;
  rt_error err;
  CHECK(rt_model_generate(m, r, cancel, cb, res, st, err), "generate: %s", err.message.c_str());
  return res;
}

// batch bounds the prompts generating at once; the next starts as one ends. Greedy tokens must not depend on
// which prompts share a step, and each prompt's end is streamed once, on its last token, with its result.
static void continuous_batching(model & m, const std::vector<std::vector<int32_t>> & base, int32_t stop) {
  std::vector<std::vector<int32_t>> prompts = base;
  prompts.push_back({9, 9, 1});
  prompts.push_back({2, 40});
  prompts.push_back({30, 31, 32, 33});
  auto all = gen(m, prompts, 6, {stop});
  generate_request r;
  r.prompts = prompts;
  r.max_new_tokens = 6;
  r.stop_tokens = {stop};
  r.batch = 2;
  std::vector<generate_result> res;
  generate_stats st;
  rt_error err;
  std::vector<int> streamed(prompts.size(), 0), ends(prompts.size(), 0);
  std::vector<generate_result> ended(prompts.size());
  int live = 0, most_live = 0;
  bool end_before_last_token = false;
  auto cb = [&](int i, int32_t, const generate_result * end) {
    if (streamed[i]++ == 0) most_live = std::max(most_live, ++live);
    if (end == nullptr) return;
    --live;
    ++ends[i];
    ended[i] = *end;
    end_before_last_token = end_before_last_token || static_cast<int>(end->tokens.size()) != streamed[i];
  };
  CHECK(rt_model_generate(m, r, nullptr, cb, res, st, err), "continuous batching: %s", err.message.c_str());
  for (size_t i = 0; i < prompts.size(); ++i) {
    CHECK(res[i].tokens == all[i].tokens && res[i].finish_reason == all[i].finish_reason,
          "prompt %zu: two at a time gives the tokens of all at once", i);
    CHECK(ends[i] == 1 && ended[i].tokens == res[i].tokens && ended[i].finish_reason == res[i].finish_reason,
          "prompt %zu: its end is streamed once with its result", i);
    CHECK(ended[i].ttft_ms > 0, "prompt %zu: figures are set when it ends", i);
  }
  CHECK(most_live == 2, "at most batch prompts generate at once (%d)", most_live);
  CHECK(!end_before_last_token, "the end comes with the last token");
  CHECK(std::count_if(res.begin(), res.end(), [](const generate_result & x) { return x.finish_reason == finish_reason::stop; }) >= 1,
        "a prompt that stops early frees its place");
}

// One token limit a prompt (the GPU benchmark's IFEval-shaped workload): each prompt generates the greedy tokens of a
// request with its limit alone, continuous batching admits the next as one ends, and a limit of 0 ends a prompt at once.
static void per_prompt_limits(model & m) {
  generate_request r;
  r.prompts = {{3, 17, 42}, {5, 9}, {60, 11, 2}, {33}};
  r.max_new_tokens_each = {5, 0, 2, 7};
  r.batch = 2;
  std::vector<generate_result> res;
  generate_stats st;
  rt_error err;
  CHECK(rt_model_generate(m, r, nullptr, nullptr, res, st, err), "per-prompt limits: %s", err.message.c_str());
  for (size_t i = 0; i < r.prompts.size(); ++i) {
    generate_request alone;
    alone.prompts = {r.prompts[i]};
    alone.max_new_tokens = r.max_new_tokens_each[i];
    std::vector<generate_result> one;
    CHECK(rt_model_generate(m, alone, nullptr, nullptr, one, st, err), "prompt %zu alone: %s", i, err.message.c_str());
    CHECK(res[i].tokens == one[0].tokens && res[i].finish_reason == finish_reason::length &&
              static_cast<int>(res[i].tokens.size()) == r.max_new_tokens_each[i],
          "prompt %zu: %zu tokens with limit %d, as alone", i, res[i].tokens.size(), r.max_new_tokens_each[i]);
  }
  r.max_new_tokens_each = {5, 2};
  CHECK(!rt_model_generate(m, r, nullptr, nullptr, res, st, err) && err.code == rt_status::invalid_request &&
            err.message == "generate: 2 token limits for 4 prompts",
        "limits that do not match the prompts are refused: %s", err.message.c_str());
}

// A request that ends by an exception (here its token callback; a backend's bad_alloc alike) frees its sequences: the
// CPU backend's peak counts the KV caches of every sequence still allocated, so one left behind raises the next peak.
static void exception_frees_sequences(model & m) {
  generate_request r;
  r.prompts = {{3, 17, 42}, {5, 9}};
  r.max_new_tokens = 4;
  std::vector<generate_result> res;
  generate_stats before, after;
  rt_error err;
  CHECK(rt_model_generate(m, r, nullptr, nullptr, res, before, err), "generate: %s", err.message.c_str());
  bool thrown = false;
  try {
    rt_model_generate(m, r, nullptr, [](int, int32_t, const generate_result *) { throw std::runtime_error("callback"); }, res,
                      after, err);
  } catch (const std::runtime_error &) {
    thrown = true;
  }
  CHECK(thrown, "the callback's exception reaches the caller");
  CHECK(rt_model_generate(m, r, nullptr, nullptr, res, after, err), "generate after an exception: %s", err.message.c_str());
  CHECK(after.peak_memory_bytes == before.peak_memory_bytes,
        "sequences left allocated by the request that threw: peak %llu bytes, %llu before",
        static_cast<unsigned long long>(after.peak_memory_bytes), static_cast<unsigned long long>(before.peak_memory_bytes));
}

// Greedy steps through the LM head's INT8 screen (cpu/lm-head-screen.h) give the tokens that forward()'s full logits
// give, for a batch of two sequences over prefill and decode steps; without the screen (backend_options) none is
// screened.
static void screened_greedy(const fs::path & dir) {
  rt_error err;
  auto w = model_weights_load(dir.string(), weights_kind::bf16, err.message);
  CHECK(w != nullptr, "screened greedy: %s", err.message.c_str());
  if (!w) return;
  const std::vector<std::vector<int32_t>> prompts = {{3, 17, 42, 5}, {9, 60}};
  std::vector<std::vector<int32_t>> tokens[3];
  uint64_t screened[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {  // 0: forward() and its logits' argmax; 1: forward_greedy, screen on; 2: screen off
    backend_options bo;
    bo.threads = 2;
    bo.lm_head_screen = k != 2;
    auto be = cpu_backend_create(*w, bo, err);
    std::vector<batch_entry> b(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) b[i] = {be->seq_create(err), prompts[i], 0};
    tokens[k].assign(prompts.size(), {});
    for (int step = 0; step < 10; ++step) {
      std::vector<int32_t> next;
      if (k == 0) {
        std::vector<std::vector<float>> logits;
        CHECK(be->forward(b, false, logits, err), "screened greedy: %s", err.message.c_str());
        for (const auto & l : logits) next.push_back(ref::argmax(l.data(), static_cast<int>(l.size())));
      } else {
        CHECK(be->forward_greedy(b, next, err), "screened greedy: %s", err.message.c_str());
      }
      if (next.size() != b.size()) return;
      for (size_t i = 0; i < b.size(); ++i) {
        tokens[k][i].push_back(next[i]);
        b[i].start_pos += static_cast<int>(b[i].tokens.size());
        b[i].tokens = {next[i]};
      }
    }
    screened[k] = be->counters().lm_head_screened;
  }
  CHECK(tokens[1] == tokens[0] && tokens[2] == tokens[0], "screened greedy: the same tokens with the screen, without it "
        "and from the full logits");
  // A step of more outputs than RT_CPU_LM_SCREEN_MAX_TOKENS takes the full product: nothing screened, the same tokens.
  {
    backend_options bo;
    bo.threads = 2;
    auto be = cpu_backend_create(*w, bo, err);
    const int n = RT_CPU_LM_SCREEN_MAX_TOKENS + 1;
    std::vector<batch_entry> b;
    for (int i = 0; i < n; ++i) b.push_back({be->seq_create(err), {(3 + i) % 60, 17, (42 + 7 * i) % 60}, 0});
    std::vector<int32_t> next;
    CHECK(be->forward_greedy(b, next, err) && static_cast<int>(next.size()) == n, "wide greedy step: %s", err.message.c_str());
    CHECK(be->counters().lm_head_screened == 0, "a greedy step of %d outputs screened %llu tokens", n,
          static_cast<unsigned long long>(be->counters().lm_head_screened));
    auto ref_be = cpu_backend_create(*w, bo, err);
    for (auto & e : b) e.seq_id = ref_be->seq_create(err);
    std::vector<std::vector<float>> logits;
    CHECK(ref_be->forward(b, false, logits, err) && logits.size() == b.size(), "wide step logits: %s", err.message.c_str());
    for (size_t i = 0; i < logits.size() && i < next.size(); ++i)
      CHECK(next[i] == ref::argmax(logits[i].data(), static_cast<int>(logits[i].size())), "wide greedy step: sequence %zu", i);
  }
  CHECK(screened[1] == 20 && screened[2] == 0 && screened[0] == 0,
        "screened greedy: 20 tokens screened with the screen (%llu), none without (%llu) or through forward (%llu)",
        static_cast<unsigned long long>(screened[1]), static_cast<unsigned long long>(screened[2]),
        static_cast<unsigned long long>(screened[0]));
}

static void generation(const fs::path & dir) {
  auto m = load(dir, "bf16");
  if (!m) return;
  const std::vector<std::vector<int32_t>> prompts = {{3, 17, 42}, {5, 9, 60, 11, 2, 33, 48}, {7}};
  auto batched = gen(*m, prompts, 8);
  // 11 prompt tokens fill ceil(11 / budget) prefill steps; prompt 2 enters in the last of them and then decodes its
  // other 7 tokens in steps of their own.
  for (const auto & [budget, prefill_steps, decode_steps] : std::vector<std::tuple<int, uint64_t, uint64_t>>{{4, 3, 7}, {2, 6, 7}}) {
    generate_request r;
    r.prompts = prompts;
    r.max_new_tokens = 8;
    r.prefill_token_budget = budget;
    std::vector<generate_result> res;
    generate_stats st;
    rt_error err;
    CHECK(rt_model_generate(*m, r, nullptr, nullptr, res, st, err), "chunked prefill: %s", err.message.c_str());
    for (size_t i = 0; i < prompts.size(); ++i) {
      CHECK(res[i].tokens == batched[i].tokens, "budget %d, prompt %zu: chunked prefill differs", budget, i);
      CHECK(res[i].prompt_tokens == static_cast<int>(prompts[i].size()), "budget %d: prompt tokens", budget);
    }
    CHECK(st.prefill_steps == prefill_steps && st.decode_steps == decode_steps,
          "budget %d: %llu prefill and %llu decode steps, expected %llu and %llu", budget,
          static_cast<unsigned long long>(st.prefill_steps), static_cast<unsigned long long>(st.decode_steps),
          static_cast<unsigned long long>(prefill_steps), static_cast<unsigned long long>(decode_steps));
  }
  {
    // Scratch follows the step, so a long prompt fed in chunks peaks lower than fed whole.
    std::vector<int32_t> long_prompt;
    for (int t = 0; t < 48; ++t) long_prompt.push_back(3 + (t * 7) % 50);
    uint64_t peak[2] = {0, 0};
    std::vector<int32_t> out[2];
    for (int k = 0; k < 2; ++k) {
      generate_request r;
      r.prompts = {long_prompt};
      r.max_new_tokens = 3;
      r.prefill_token_budget = k == 0 ? 4096 : 5;
      std::vector<generate_result> res;
      generate_stats st;
      rt_error err;
      CHECK(rt_model_generate(*m, r, nullptr, nullptr, res, st, err), "long prompt: %s", err.message.c_str());
      peak[k] = st.peak_memory_bytes;
      if (!res.empty()) out[k] = res[0].tokens;
      CHECK(st.prefill_steps == (k == 0 ? 1u : 10u), "long prompt, budget %d: %llu prefill steps", r.prefill_token_budget,
            static_cast<unsigned long long>(st.prefill_steps));
    }
    CHECK(out[0] == out[1] && out[0].size() == 3, "a long prompt fed in chunks generates what it does fed whole");
    CHECK(peak[1] < peak[0], "chunked prefill peaks at %llu bytes, not below the whole prompt's %llu",
          static_cast<unsigned long long>(peak[1]), static_cast<unsigned long long>(peak[0]));
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto single = gen(*m, {prompts[i]}, 8);
    CHECK(single[0].tokens == batched[i].tokens, "prompt %zu: batched generation differs from one-by-one", i);
    CHECK(batched[i].finish_reason == finish_reason::length && batched[i].tokens.size() == 8, "prompt %zu: length finish", i);
    CHECK(batched[i].prompt_tokens == static_cast<int>(prompts[i].size()), "prompt tokens");
    CHECK(batched[i].ttft_ms > 0 && batched[i].decode_tokens_per_s > 0, "figures are set");
  }
  // Stop on the third token of prompt 1.
  const int32_t stop = batched[1].tokens[2];
  auto stopped = gen(*m, {prompts[1]}, 8, {stop});
  CHECK(stopped[0].finish_reason == finish_reason::stop && stopped[0].tokens.back() == stop && stopped[0].tokens.size() <= 3, "stop token ends generation");
  // Cancellation after 3 streamed tokens.
  std::atomic<bool> cancel{false};
  int streamed = 0;
  auto cancelled = gen(*m, {prompts[0], prompts[1]}, 100, {}, &cancel, [&](int, int32_t, const generate_result *) {
    if (++streamed == 6) cancel.store(true);
  });
  CHECK(cancelled[0].finish_reason == finish_reason::cancelled && cancelled[1].finish_reason == finish_reason::cancelled, "cancelled finish reasons");
  CHECK(cancelled[0].tokens.size() == 3 && streamed == 6, "cancel stops after the current step (%zu tokens, %d streamed)", cancelled[0].tokens.size(), streamed);
  // The context limit ends generation with "length".
  auto small = load(dir, "bf16", 8);
  if (small) {
    auto lim = gen(*small, {{1, 2, 3, 4, 5, 6}}, 50);
    CHECK(lim[0].finish_reason == finish_reason::length && lim[0].tokens.size() == 3, "context limit: %zu tokens", lim[0].tokens.size());
  }
  continuous_batching(*m, prompts, batched[1].tokens[2]);
  exception_frees_sequences(*m);
  per_prompt_limits(*m);
  // SIMD vs scalar kernels.
  std::vector<std::vector<float>> a, b;
  rt_error err;
  cpu_kernels_set_simd(false);
  CHECK(rt_model_logits(*m, TOKENS, a, err), "scalar logits");
  cpu_kernels_set_simd(true);
  CHECK(rt_model_logits(*m, TOKENS, b, err), "simd logits");
  CHECK(max_diff(a, b) <= MAX_REL_ERR_SIMD * max_abs(a), "simd vs scalar: %g (scale %g)", max_diff(a, b), max_abs(a));
}

static void int4_vs_dequantised(const fs::path & src, const fs::path & root) {
  const fs::path packed = root / "packed";
  pack_options po;
  po.src_dir = src.string();
  po.dst_dir = packed.string();
  po.threads = 2;
  po.shard_bytes = 20000;  // forces several output shards
  pack_result pr;
  rt_error err;
  uint64_t last_done = 0, last_total = 1;
  CHECK(rt_qpacked_pack(po, [&](uint64_t d, uint64_t t) { last_done = d; last_total = t; }, nullptr, pr, err), "pack: %s", err.message.c_str());
  CHECK(pr.group_size == 16, "tiny group size is 16 (inter 16), got %d", pr.group_size);
  CHECK(last_done == last_total && last_total > 0, "progress reaches the total");
  {
    int shards = 0;
    for (const auto & f : pr.output_files) shards += f.find("model-qpacked-") == 0 ? 1 : 0;
    char first[64];
    std::snprintf(first, sizeof first, "model-qpacked-00001-of-%05d.safetensors", shards);
    CHECK(shards > 1 && fs::exists(packed / first), "shard naming (%d shards)", shards);
  }
  for (const auto & e : fs::directory_iterator(packed)) CHECK(e.path().extension() != ".tmp", "temp file left: %s", e.path().string().c_str());
  CHECK(fs::exists(packed / "config.json") && fs::exists(packed / "model.safetensors.index.json"), "config and index written");

  auto w = model_weights_load(packed.string(), weights_kind::int4, err.message);
  CHECK(w != nullptr, "load packed: %s", err.message.c_str());
  if (!w) return;
  CHECK(w->group_size == 16, "group size read back");
  // qweight bytes equal the reference quantiser over the source rows.
  auto srcw = model_weights_load(src.string(), weights_kind::bf16, err.message);
  const tensor_view * s = srcw->find("model.layers.1.mlp.experts.5.down_proj.weight");
  const tensor_view * q = w->find("model.layers.1.mlp.experts.5.down_proj.qweight");
  const tensor_view * sc = w->find("model.layers.1.mlp.experts.5.down_proj.scales");
  bool same = s && q && sc;
  if (same) {
    const int rows = static_cast<int>(s->shape[0]), cols = static_cast<int>(s->shape[1]);
    std::vector<float> row(cols);
    std::vector<uint8_t> qq(cols / 2);
    std::vector<uint16_t> ss(cols / 16);
    for (int r = 0; r < rows; ++r) {
      cpu_row_to_f32(*s, r, row.data());
      qpacked_quantize_row(row.data(), cols, 16, qq.data(), ss.data());
      same = same && std::memcmp(qq.data(), static_cast<const uint8_t *>(q->data) + r * (cols / 2), qq.size()) == 0 &&
             std::memcmp(ss.data(), static_cast<const uint16_t *>(sc->data) + r * (cols / 16), ss.size() * 2) == 0;
    }
  }
  CHECK(same, "packed expert bytes equal the reference quantiser");
  // Metadata of every shard.
  for (const auto & f : pr.output_files) {
    if (f.find("qpacked") == std::string::npos) continue;
    auto mf = mapped_file::open((packed / f).string(), err.message);
    safetensors_header h;
    CHECK(mf && safetensors_parse(mf->data(), mf->size(), f, h, err.message), "parse %s", f.c_str());
    bool fmt = false, gs = false, cb = false;
    for (const auto & kv : h.metadata) { fmt |= kv.first == "format" && kv.second == "qpacked-v2"; gs |= kv.first == "group_size" && kv.second == "16"; cb |= kv.first == "codebook" && kv.second == "hq4nl"; }
    CHECK(fmt && gs && cb, "%s metadata", f.c_str());
  }

  // The same model with F16-rounded non-routed weights and dequantised experts, as F32.
  const fs::path deq = root / "dequantised";
  fs::create_directories(deq);
  fs::copy_file(src / "config.json", deq / "config.json", fs::copy_options::overwrite_existing);
  std::vector<test_util::raw_tensor> ts;
  for (const auto & kv : w->tensors) {
    const tensor_view & t = kv.second;
    const std::string & n = kv.first;
    if (n.size() > 7 && n.compare(n.size() - 7, 7, ".scales") == 0) continue;
    test_util::raw_tensor r;
    r.dtype = "F32";
    if (t.type == dtype::u8) {
      const std::string base = n.substr(0, n.size() - 8);
      const tensor_view * st = w->find(base + ".scales");
      const int rows = static_cast<int>(t.shape[0]), cols = static_cast<int>(t.shape[1] * 2);
      r.name = base + ".weight";
      r.shape = {rows, cols};
      r.bytes.resize(static_cast<size_t>(rows) * cols * 4);
      for (int i = 0; i < rows; ++i)
        qpacked_dequantize_row(static_cast<const uint8_t *>(t.data) + i * (cols / 2), static_cast<const uint16_t *>(st->data) + i * (cols / 16), cols, 16,
                               reinterpret_cast<float *>(r.bytes.data()) + static_cast<size_t>(i) * cols);
    } else {
      r.name = n;
      r.shape = t.shape;
      r.bytes.resize(static_cast<size_t>(t.numel()) * 4);
      for (int64_t i = 0; i < t.numel(); ++i) reinterpret_cast<float *>(r.bytes.data())[i] = f32_from_fp16(static_cast<const uint16_t *>(t.data)[i]);
    }
    ts.push_back(std::move(r));
  }
  test_util::write_file(deq / "model.safetensors", test_util::safetensors_bytes(ts));
  auto mi = load(packed, "int4");
  auto md = load(deq, "bf16");
  if (!mi || !md) return;
  std::vector<std::vector<float>> a, b;
  CHECK(rt_model_logits(*mi, TOKENS, a, err), "int4 logits: %s", err.message.c_str());
  CHECK(rt_model_logits(*md, TOKENS, b, err), "dequantised logits: %s", err.message.c_str());
  CHECK(max_diff(a, b) <= MAX_REL_ERR_INT4_VS_DEQUANT * max_abs(b), "int4 vs dequantised: %g (scale %g)", max_diff(a, b), max_abs(b));
  std::printf("int4 vs dequantised F32: max diff %g (scale %g)\n", max_diff(a, b), max_abs(b));
  CHECK(rt_model_info(*mi).weights == weights_kind::int4 && rt_model_info(*mi).backend == backend_kind::cpu, "info labels");
  {
    const model_info info = rt_model_info(*mi);
    CHECK(info.group_size == 16 && info.hidden_size == 32 && info.intermediate_size == 16 && info.num_hidden_layers == 2 &&
              info.num_attention_heads == 4 && info.num_key_value_heads == 4 && info.head_dim == 8 && info.num_experts == 8 &&
              info.num_experts_per_tok == 2 && info.vocab_size == 72 && info.max_context == 256 &&
              info.eos_token_ids == std::vector<int>({71}),
          "info reports the config");
    CHECK(info.dir == packed.string() && info.threads == 2 && info.simd == cpu_kernels_simd() && info.device == -1 &&
              info.device_expert_slots == 0 && info.device_bytes == 0 && info.fault.empty(),
          "info reports the CPU run");
    uint64_t bytes = 0;
    for (const auto & f : pr.output_files) {
      if (f.find("model-qpacked-") != 0) continue;
      auto mf = mapped_file::open((packed / f).string(), err.message);
      safetensors_header h;
      if (mf && safetensors_parse(mf->data(), mf->size(), f, h, err.message))
        for (const auto & t : h.tensors) bytes += t.end - t.begin;
    }
    CHECK(info.weight_bytes == bytes && bytes > 0, "weight_bytes %llu, the packed tensors hold %llu",
          static_cast<unsigned long long>(info.weight_bytes), static_cast<unsigned long long>(bytes));
  }
  std::vector<std::vector<float>> none;
  CHECK(!rt_model_logits(*mi, {}, none, err) && err.message == "logits: no tokens" &&
            err.code == rt_status::invalid_request && err.prompt_index == -1,
        "logits of no tokens refused: %s", err.message.c_str());
  {
    generate_request r;
    r.prompts = {{1, 2}, {}};
    r.max_new_tokens = 2;
    std::vector<generate_result> res;
    generate_stats st;
    CHECK(!rt_model_generate(*mi, r, nullptr, nullptr, res, st, err) && err.message == "generate: prompt 1 is empty" &&
              err.code == rt_status::invalid_prompt && err.prompt_index == 1,
          "an empty prompt is refused: %s", err.message.c_str());
    // A token id past the vocabulary fails the request as itself, also when it is already cancelled.
    const int32_t V = static_cast<int32_t>(rt_model_info(*mi).vocab_size);
    for (const int32_t bad_id : {V, -1}) {
      r.prompts = {{1, 2}, {3, bad_id}};
      const std::atomic<bool> cancelled{true};
      const std::string want = "generate: prompt 1: token id " + std::to_string(bad_id) + " is outside the vocabulary (0.." +
                               std::to_string(V - 1) + ")";
      CHECK(!rt_model_generate(*mi, r, &cancelled, nullptr, res, st, err) && err.message == want &&
                err.code == rt_status::invalid_prompt && err.prompt_index == 1,
            "token id %d: %s", bad_id,
            err.message.c_str());
    }
  }
  rt_error e2;
  model_load_options bad;
  bad.dir = packed.string();
  bad.weights = weights_kind::bf16;
  CHECK(!rt_model_load(bad, e2) && e2.message.find("qpacked") != std::string::npos && e2.code == rt_status::model_invalid,
        "bf16 on a packed folder is refused: %s (%s)", e2.message.c_str(), rt_status_name(e2.code));
  bad.dir = (packed / "no-such-folder").string();
  CHECK(!rt_model_load(bad, e2) && e2.code == rt_status::model_invalid, "a missing folder: %s", rt_status_name(e2.code));
#ifndef RT_WITH_CUDA
  bad.dir = packed.string();
  bad.weights = weights_kind::int4;
  bad.backend = backend_kind::cuda;
  CHECK(!rt_model_load(bad, e2) && e2.code == rt_status::unsupported, "CUDA in a build without it: %s", e2.message.c_str());
#endif
}

// Router ties go to the lowest expert index: with an all-zero router every expert scores the same, so only experts
// 0..top_k-1 may run, and replacing every other expert's weights leaves the logits bit for bit unchanged.
// A tiny BF16 checkpoint written to root/<tag>-src and packed to INT4 at group 32 into root/<tag>-packed, returned.
static fs::path packed_tiny(const fs::path & root, const std::string & tag, const test_util::tiny_config & c, uint64_t seed) {
  const fs::path src = root / (tag + "-src"), packed = root / (tag + "-packed");
  test_util::write_tiny_model(src, c, seed);
  const int group = test_util::pack_model(src, packed, 1);
  CHECK(group == 32, "%s: packed at group %d, want 32", tag.c_str(), group);
  return packed;
}

// 8-bit activations (the default for group-32 INT4 experts) against FP32 activations over the same INT4 weights,
// set beside what INT4 itself costs against the BF16 source: logits and greedy tokens.
static void q8_activations(const fs::path & root) {
  test_util::tiny_config c;
  c.hidden = 64;
  c.inter = 32;
  c.vocab = 96;
  const fs::path packed = packed_tiny(root, "q8", c, 21);
  rt_error err;
  auto mi = load(packed, "int4");
  auto mb = load(root / "q8-src", "bf16");
  if (!mi || !mb) return;
  std::vector<std::vector<float>> q8, f32, bf;
  CHECK(cpu_kernels_q8_activations(), "8-bit activations are the default");
  CHECK(rt_model_logits(*mi, TOKENS, q8, err), "q8 logits: %s", err.message.c_str());
  cpu_kernels_set_q8_activations(false);
  CHECK(rt_model_logits(*mi, TOKENS, f32, err), "f32-activation logits: %s", err.message.c_str());
  auto g_f32 = gen(*mi, {TOKENS, {5, 6, 7}}, 12);
  cpu_kernels_set_q8_activations(true);
  auto g_q8 = gen(*mi, {TOKENS, {5, 6, 7}}, 12);
  CHECK(rt_model_logits(*mb, TOKENS, bf, err), "bf16 logits: %s", err.message.c_str());
  const float q8_err = max_diff(q8, f32) / max_abs(f32), int4_err = max_diff(f32, bf) / max_abs(bf);
  std::printf("q8 vs f32 activations: %.3e of max |logit|; int4 vs bf16: %.3e\n", q8_err, int4_err);
  CHECK(q8_err <= MAX_REL_ERR_Q8_VS_F32_ACTIVATIONS, "q8 activations move the logits by %g of their scale", q8_err);
  CHECK(q8_err <= MAX_Q8_SHARE_OF_INT4_ERR * int4_err, "q8 error %g against the INT4 error %g", q8_err, int4_err);
  for (size_t i = 0; i < g_q8.size(); ++i)
    CHECK(g_q8[i].tokens == g_f32[i].tokens, "prompt %zu: greedy tokens with q8 and f32 activations agree", i);
}

// The CPU backend is the oracle: a sequence's logits must not depend on the sequences that share its steps. Five
// sequences of an INT4 model (8-bit expert inputs) step together, two joining later so that their prompts are fed
// beside the others' decode tokens, and each one's logits at every step equal, bit for bit, what it gets stepping
// alone. Rows of 256 columns take the pair kernels (experts see 1 to 8+ tokens a step); rows of 64 and 32 the tiles.
static void batch_invariant_logits(const fs::path & root) {
  for (const int hidden : {256, 64}) {
    test_util::tiny_config c;
    c.hidden = hidden;
    c.inter = hidden == 256 ? 256 : 32;
    c.vocab = 96;
    const fs::path packed = packed_tiny(root, "bi-" + std::to_string(hidden), c, 41);
    rt_error err;
    auto w = model_weights_load(packed.string(), weights_kind::int4, err.message);
    CHECK(w != nullptr, "batch invariance: %s", err.message.c_str());
    if (!w) return;
    std::vector<std::vector<int32_t>> prompts = {
        {3, 17, 42, 5, 9, 60, 11, 2, 33, 48, 7, 21}, {8, 1, 77}, {50, 4, 19, 90, 13, 6, 70}, {12, 31, 5, 88, 44}, {}};
    // A long prompt: its attention spans two chunks, computed one after the other beside the others' tokens and apart
    // (on both threads, then merged) when it steps alone.
    for (int i = 0; i < 230; ++i) prompts.back().push_back((i * 37 + 5) % c.vocab);
    const std::vector<int> joins = {0, 0, 0, 2, 1};  // the step at which each sequence's prompt is fed
    const int steps = 6;
    backend_options bo;
    bo.threads = 2;
    // Every sequence's logits a step ([sequence][step]), stepping together and alone; the tokens fed after the
    // prompt are the argmax of the shared run's logits, so both runs see the same inputs.
    std::vector<std::vector<std::vector<float>>> together(prompts.size()), alone(prompts.size());
    std::vector<std::vector<int32_t>> fed(prompts.size());
    {
      auto be = cpu_backend_create(*w, bo, err);
      std::vector<batch_entry> next(prompts.size());
      for (int step = 0; step < steps; ++step) {
        std::vector<batch_entry> b;
        std::vector<size_t> who;
        for (size_t i = 0; i < prompts.size(); ++i) {
          if (step == joins[i]) next[i] = {be->seq_create(err), prompts[i], 0};
          if (step >= joins[i]) {
            b.push_back(next[i]);
            who.push_back(i);
          }
        }
        std::vector<std::vector<float>> logits;
        CHECK(be->forward(b, false, logits, err), "batch invariance: %s", err.message.c_str());
        if (logits.size() != b.size()) return;
        for (size_t k = 0; k < b.size(); ++k) {
          const size_t i = who[k];
          together[i].push_back(logits[k]);
          const int32_t tok = ref::argmax(logits[k].data(), static_cast<int>(logits[k].size()));
          fed[i].push_back(tok);
          next[i].start_pos += static_cast<int>(next[i].tokens.size());
          next[i].tokens = {tok};
        }
      }
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
      auto be = cpu_backend_create(*w, bo, err);
      batch_entry e{be->seq_create(err), prompts[i], 0};
      for (size_t s = 0; s < together[i].size(); ++s) {
        std::vector<std::vector<float>> logits;
        CHECK(be->forward({e}, false, logits, err) && logits.size() == 1, "batch invariance alone: %s", err.message.c_str());
        if (logits.size() != 1) return;
        alone[i].push_back(logits[0]);
        e.start_pos += static_cast<int>(e.tokens.size());
        e.tokens = {fed[i][s]};
      }
      for (size_t s = 0; s < together[i].size(); ++s) {
        CHECK(together[i][s].size() == alone[i][s].size() &&
                  std::memcmp(together[i][s].data(), alone[i][s].data(), alone[i][s].size() * sizeof(float)) == 0,
              "hidden %d, sequence %zu, step %zu: its logits beside the others differ from its logits alone (max diff %g)",
              hidden, i, s, max_diff({together[i][s]}, {alone[i][s]}));
      }
    }
  }
}

static void router_ties(const fs::path & root) {
  for (bool norm : {false, true}) {
    test_util::tiny_config c;
    c.norm_topk = norm;
    const std::string tag = norm ? "norm" : "plain";
    std::vector<std::vector<std::vector<float>>> logits;
    for (int variant = 0; variant < 2; ++variant) {
      auto ts = test_util::tiny_tensors(c, 21);
      test_util::rng r(99);
      for (auto & t : ts) {
        if (t.name.find("mlp.gate.weight") != std::string::npos) std::fill(t.bytes.begin(), t.bytes.end(), 0);
        const size_t at = t.name.find(".mlp.experts.");
        if (variant == 1 && at != std::string::npos && std::atoi(t.name.c_str() + at + 13) >= c.top_k)
          t = test_util::make_tensor(t.name, t.shape, r, 0.5f);
      }
      const fs::path d = root / ("ties-" + tag + "-" + std::to_string(variant));
      fs::create_directories(d);
      test_util::write_file(d / "config.json", test_util::config_json(c));
      test_util::write_file(d / "model.safetensors", test_util::safetensors_bytes(ts));
      auto m = load(d, "bf16");
      std::vector<std::vector<float>> out;
      rt_error err;
      CHECK(m && rt_model_logits(*m, TOKENS, out, err), "%s ties logits: %s", tag.c_str(), err.message.c_str());
      logits.push_back(out);
    }
    CHECK(!logits[0].empty() && logits[0] == logits[1], "%s: a tie picks experts 0..top_k-1 (max diff %g)", tag.c_str(),
          max_diff(logits[0], logits[1]));
  }
}

// A NaN in a logits row (one damaged lm_head row, or every logit through the final norm) fails generation, naming
// the prompt, instead of decoding an arbitrary token.
static void nan_logits(const fs::path & root) {
  test_util::tiny_config c;
  for (const char * tensor : {"lm_head.weight", "model.norm.weight"}) {
    auto ts = test_util::tiny_tensors(c, 31);
    for (auto & t : ts) {
      if (t.name != tensor) continue;
      const size_t at = t.name == "lm_head.weight" ? static_cast<size_t>(7 * c.hidden + 3) * 2 : 6;
      t.bytes[at] = 0xC0;
      t.bytes[at + 1] = 0x7F;  // BF16 quiet NaN
    }
    const fs::path d = root / (std::string("nan-") + tensor);
    fs::create_directories(d);
    test_util::write_file(d / "config.json", test_util::config_json(c));
    test_util::write_file(d / "model.safetensors", test_util::safetensors_bytes(ts));
    auto m = load(d, "bf16");
    CHECK(m != nullptr, "%s: load", tensor);
    if (!m) continue;
    generate_request req;
    req.prompts = {{3, 17, 42}, {5, 9}};
    req.max_new_tokens = 4;
    std::vector<generate_result> results;
    generate_stats stats;
    rt_error err;
    const bool ok = rt_model_generate(*m, req, nullptr, nullptr, results, stats, err);
    CHECK(!ok && err.message.find("prompt 0") != std::string::npos && err.message.find("NaN") != std::string::npos &&
              err.code == rt_status::numeric_fault && err.prompt_index == 0,
          "%s: generate refuses NaN logits (ok=%d, error '%s')", tensor, ok, err.message.c_str());
    std::vector<std::vector<float>> logits;
    CHECK(rt_model_logits(*m, {3, 17, 42}, logits, err) && std::isnan(logits.back()[7]),
          "%s: the logits tool still returns the NaN logits", tensor);
  }
}

int main() {
  const fs::path root = test_util::temp_dir("forward");
  test_util::tiny_config c;
  c.vocab = 72;
  test_util::write_tiny_model(root / "mha", c, 11, 2);
  kv_cache_matches_recompute(root / "mha", "mha");
  test_util::tiny_config g = c;
  g.kv_heads = 2;
  g.norm_topk = true;
  test_util::write_tiny_model(root / "gqa", g, 12);
  kv_cache_matches_recompute(root / "gqa", "gqa+norm_topk");
  test_util::tiny_config t = c;
  t.tie = true;
  test_util::write_tiny_model(root / "tied", t, 13);
  kv_cache_matches_recompute(root / "tied", "tied");
  generation(root / "mha");
  screened_greedy(root / "mha");
  screened_greedy(root / "tied");
  int4_vs_dequantised(root / "mha", root);
  q8_activations(root);
  batch_invariant_logits(root);
  router_ties(root);
  nan_logits(root);
  fs::remove_all(root);
  return test_util::finish("test-cpu-forward");
}
