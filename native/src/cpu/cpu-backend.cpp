// The CPU backend: FP32 math; the dense weights (attention, router, LM head) re-laid as 16-row panels, the routed
// experts read from the mapped shards (qpacked INT4 against 8-bit activations, or BF16/F16/F32 rows); FP16 KV caches;
// a thread pool over output rows and attention heads.
// Mirrors transformers modeling_olmoe.py (OlmoeDecoderLayer / OlmoeSparseMoeBlock).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "core/backend.h"
#include "core/batch-check.h"
#include "core/thread-pool.h"
#include "cpu/attention-f16.h"
#include "cpu/cpu-kernels.h"
#include "cpu/dense-panels.h"
#include "cpu/lm-head-screen.h"
#include "cpu/q4-q8-dot.h"
#include "cpu/ref-ops.h"
#include "quant/q4-0.h"

namespace rt {

namespace {

// Rows (tokens) a thread takes at least in the per-token steps (norms, RoPE and the KV store): a decode step of a few
// tokens stays on the calling thread, where waking the pool would cost more than the work; a batched step of 16 or a
// prompt spreads over the threads.
constexpr int64_t kRowsAtOnce = 8;

// Forward-pass buffers kept across calls: resize() keeps their capacity, so steady decoding allocates nothing.
struct cpu_scratch {
  std::vector<float> x, h, q, k, v, att, o, router, moe, xe, ge, ue, de, xr, out;
  std::vector<std::vector<std::pair<int, float>>> by_expert;  // per expert: (token, routing weight)
  std::vector<int8_t> xq;  // 8-bit expert inputs (gate/up, then down), cpu_quantize_q8's layout
  std::vector<float> xd;   // their block scales
  std::vector<float> xs;   // and block sums
  std::vector<float> picked;  // one token's routing weights
  std::vector<int> order, active, tok, pos, seq_of, rows;
  std::vector<attention_token> att_tokens;
  attention_step_scratch att_step;
  std::vector<int64_t> first_row;
};

struct cpu_seq {
  bool used = false;
  int length = 0;
  int capacity = 0;
  std::vector<std::vector<uint16_t>> k, v;  // per layer: capacity * kv_dim, FP16 (as the CUDA backend keeps them)
};

class cpu_backend final : public backend {
 public:
  cpu_backend(const model_weights & w, const backend_options & o)
      : w_(w), c_(w.config), pool_(o.threads) {
    max_ctx_ = o.max_context > 0 ? o.max_context : c_.max_position_embeddings;
    use_screen_ = o.lm_head_screen && !env_off("HORIZON_CPU_LM_SCREEN");
    // The dense matmuls read their own panel copies, so the mapped rows they came from leave resident memory (the
    // LM head's rows stay mapped for the screen's candidates, and come back one page at a time as those read them).
    panels_.resize(w_.layers.size());
    for (size_t l = 0; l < w_.layers.size(); ++l) {
      const layer_weights & L = w_.layers[l];
      layer_panels & P = panels_[l];
      const std::pair<const tensor_view *, dense_panels *> mats[] = {
          {L.q_proj, &P.q}, {L.k_proj, &P.k}, {L.v_proj, &P.v}, {L.o_proj, &P.o}, {L.router, &P.router}};
      for (const auto & [view, dst] : mats) {
        dense_panels_build(*view, pool_, *dst);
        w_.release_pages(*view);
      }
    }
    dense_panels_build(*w_.lm_head, pool_, lm_panels_);
    if (w_.lm_head != w_.embed_tokens) w_.release_pages(*w_.lm_head);
  }

  backend_kind kind() const override { return backend_kind::cpu; }

  bool set_expert_rounding(expert_rounding r) override {
    if (r != expert_rounding::none && w_.kind != weights_kind::bf16) return false;
    q4_0_experts_ = r == expert_rounding::q4_0;
    return true;
  }

  int seq_create(rt_error & error) override {
    (void)error;
    for (size_t i = 0; i < seqs_.size(); ++i) {
      if (!seqs_[i].used) {
        seqs_[i] = cpu_seq{};
        seqs_[i].used = true;
        return static_cast<int>(i);
      }
    }
    seqs_.emplace_back();
    seqs_.back().used = true;
    return static_cast<int>(seqs_.size() - 1);
  }

  void seq_free(int id) override {
    if (id >= 0 && static_cast<size_t>(id) < seqs_.size()) seqs_[static_cast<size_t>(id)] = cpu_seq{};
  }

  int seq_length(int id) const override {
    if (id < 0 || static_cast<size_t>(id) >= seqs_.size() || !seqs_[static_cast<size_t>(id)].used) return -1;
    return seqs_[static_cast<size_t>(id)].length;
  }

  backend_counters counters() const override { return counters_; }
  void counters_reset() override { counters_ = backend_counters{}; }

  bool forward(const std::vector<batch_entry> & batch, bool all_positions, std::vector<std::vector<float>> & logits,
               rt_error & error) override {
    return run(batch, all_positions, &logits, nullptr, error);
  }
  bool forward_greedy(const std::vector<batch_entry> & batch, std::vector<int32_t> & next, rt_error & error) override {
    return run(batch, false, nullptr, &next, error);
  }

 private:
  /** The step: logits of the wanted positions, or (next != nullptr) each entry's greedy token. */
  bool run(const std::vector<batch_entry> & batch, bool all_positions, std::vector<std::vector<float>> * logits,
           std::vector<int32_t> * next, rt_error & error);

  void ensure_capacity(cpu_seq & s, int need) {
    if (need <= s.capacity) return;
    int cap = std::max(need, std::min(max_ctx_, std::max(64, s.capacity * 2)));
    const size_t kvd = static_cast<size_t>(c_.num_key_value_heads) * static_cast<size_t>(c_.head_dim);
    s.k.resize(static_cast<size_t>(c_.num_hidden_layers));
    s.v.resize(static_cast<size_t>(c_.num_hidden_layers));
    for (int l = 0; l < c_.num_hidden_layers; ++l) {
      s.k[static_cast<size_t>(l)].resize(static_cast<size_t>(cap) * kvd);
      s.v[static_cast<size_t>(l)].resize(static_cast<size_t>(cap) * kvd);
    }
    s.capacity = cap;
  }

  uint64_t kv_bytes() const {
    uint64_t b = 0;
    const uint64_t per = 2ull * static_cast<uint64_t>(c_.num_hidden_layers) * static_cast<uint64_t>(c_.num_key_value_heads) *
                         static_cast<uint64_t>(c_.head_dim) * 2ull;
    for (const auto & s : seqs_) b += per * static_cast<uint64_t>(s.capacity);
    return b;
  }

  /** A norm weight as FP32, converted on first use (norm weights are small and read every layer). */
  const std::vector<float> & norm_f32(const tensor_view & weight) {
    auto it = norm_f32_.find(&weight);
    if (it != norm_f32_.end()) return it->second;
    std::vector<float> row(static_cast<size_t>(weight.shape.back()));
    cpu_row_to_f32(weight, 0, row.data());
    return norm_f32_.emplace(&weight, std::move(row)).first->second;
  }

  void rmsnorm_rows(float * x, int rows, int n, const tensor_view & weight, float * out) {
    const std::vector<float> & wrow = norm_f32(weight);
    pool_.parallel_for(rows, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) ref::rmsnorm(x + r * n, wrow.data(), c_.rms_norm_eps, n, out + r * n);
    }, kRowsAtOnce);
  }

  const model_weights & w_;
  const model_config & c_;
  thread_pool pool_;
  int max_ctx_ = 0;
  std::vector<cpu_seq> seqs_;
  backend_counters counters_;
  std::unordered_map<const tensor_view *, std::vector<float>> norm_f32_;
  cpu_scratch ws_;
  bool use_screen_ = true;
  bool q4_0_experts_ = false;  // BF16 experts and their inputs rounded as llama.cpp's Q4_0 x Q8_0 (the quality check's comparison)
  struct layer_panels {
    dense_panels q, k, v, o, router;
  };
  std::vector<layer_panels> panels_;
  dense_panels lm_panels_;
  lm_head_screen screen_;  // built by the first greedy step
  // Reused by every call; the model's lock makes the calls one at a time.
  dense_panels_scratch dense_scratch_;
  lm_head_screen_scratch screen_scratch_;
  bool screen_built_ = false;
};

bool cpu_backend::run(const std::vector<batch_entry> & batch, bool all_positions,
                      std::vector<std::vector<float>> * logits, std::vector<int32_t> * next, rt_error & error) {
  const int H = c_.hidden_size, I = c_.intermediate_size, E = c_.num_experts, K = c_.num_experts_per_tok;
  const int hd = c_.head_dim, nh = c_.num_attention_heads, nkv = c_.num_key_value_heads;
  const int QD = nh * hd, KD = nkv * hd, V = c_.vocab_size;

  const auto cached = [this](int id) {
    return id < 0 || static_cast<size_t>(id) >= seqs_.size() || !seqs_[static_cast<size_t>(id)].used ? -1
                                                                                                      : seqs_[static_cast<size_t>(id)].length;
  };
  if (!check_batch(batch, cached, max_ctx_, V, "cpu backend", error)) return false;
  int T = 0;
  for (const auto & e : batch) T += static_cast<int>(e.tokens.size());
  auto & tok = ws_.tok;
  auto & pos = ws_.pos;
  auto & seq_of = ws_.seq_of;
  tok.resize(static_cast<size_t>(T));
  pos.resize(static_cast<size_t>(T));
  seq_of.resize(static_cast<size_t>(T));
  {
    int t = 0;
    for (const auto & e : batch) {
      cpu_seq & s = seqs_[static_cast<size_t>(e.seq_id)];
      s.length = e.start_pos;
      ensure_capacity(s, e.start_pos + static_cast<int>(e.tokens.size()));
      for (size_t i = 0; i < e.tokens.size(); ++i, ++t) {
        tok[static_cast<size_t>(t)] = e.tokens[i];
        pos[static_cast<size_t>(t)] = e.start_pos + static_cast<int>(i);
        seq_of[static_cast<size_t>(t)] = e.seq_id;
      }
    }
  }

  const size_t uT = static_cast<size_t>(T);
  auto & x = ws_.x;
  auto & h = ws_.h;
  auto & q = ws_.q;
  auto & k = ws_.k;
  auto & v = ws_.v;
  auto & att = ws_.att;
  auto & o = ws_.o;
  auto & router = ws_.router;
  auto & moe = ws_.moe;
  for (auto * buf : {&x, &h, &o, &moe}) buf->resize(uT * H);
  for (auto * buf : {&q, &att}) buf->resize(uT * QD);
  for (auto * buf : {&k, &v}) buf->resize(uT * KD);
  router.resize(uT * E);
  for (int t = 0; t < T; ++t) cpu_row_to_f32(*w_.embed_tokens, tok[static_cast<size_t>(t)], x.data() + static_cast<int64_t>(t) * H);
  uint64_t scratch = (uT * (3 * H + 2 * QD + 2 * KD + E + H)) * 4;

  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (int l = 0; l < c_.num_hidden_layers; ++l) {
    const layer_weights & L = w_.layers[static_cast<size_t>(l)];
    rmsnorm_rows(x.data(), T, H, *L.input_layernorm, h.data());
    // q, k and v in one pass over the pool (fewer wake-ups per token than three matmuls).
    const layer_panels & P = panels_[static_cast<size_t>(l)];
    const dense_job qkv[] = {{&P.q, q.data(), QD}, {&P.k, k.data(), KD}, {&P.v, v.data(), KD}};
    dense_panels_matmul(qkv, 3, h.data(), H, T, pool_, &dense_scratch_);
    // As modeling_olmoe.py: q/k norms first, then the optional clamp of q, k and v.
    rmsnorm_rows(q.data(), T, QD, *L.q_norm, q.data());
    rmsnorm_rows(k.data(), T, KD, *L.k_norm, k.data());
    if (c_.clip_qkv > 0.0f) {
      const float cl = c_.clip_qkv;
      for (auto * vec : {&q, &k, &v})
        for (float & f : *vec) f = std::min(cl, std::max(-cl, f));
    }
    // Tokens write their own KV positions (a sequence's tokens of a step have distinct positions).
    pool_.parallel_for(T, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        ref::rope(q.data() + t * QD, nh, hd, pos[static_cast<size_t>(t)], c_.rope_theta);
        ref::rope(k.data() + t * KD, nkv, hd, pos[static_cast<size_t>(t)], c_.rope_theta);
        cpu_seq & s = seqs_[static_cast<size_t>(seq_of[static_cast<size_t>(t)])];
        const int64_t p = pos[static_cast<size_t>(t)];
        cpu_f32_to_f16(k.data() + t * KD, s.k[static_cast<size_t>(l)].data() + p * KD, KD);
        cpu_f32_to_f16(v.data() + t * KD, s.v[static_cast<size_t>(l)].data() + p * KD, KD);
      }
    }, kRowsAtOnce);
    auto & att_tokens = ws_.att_tokens;
    att_tokens.clear();
    for (int t = 0; t < T; ++t) {
      const cpu_seq & s = seqs_[static_cast<size_t>(seq_of[static_cast<size_t>(t)])];
      att_tokens.push_back({{q.data() + static_cast<int64_t>(t) * QD, s.k[static_cast<size_t>(l)].data(), s.v[static_cast<size_t>(l)].data(), KD, 0,
                             nh, nh / nkv, hd, scale},
                            pos[static_cast<size_t>(t)] + 1,
                            att.data() + static_cast<int64_t>(t) * QD});
    }
    cpu_attention_step(att_tokens, pool_, ws_.att_step);
    dense_panels_matmul(P.o, att.data(), QD, T, o.data(), H, pool_, &dense_scratch_);
    for (size_t i = 0; i < uT * H; ++i) x[i] += o[i];

    // Sparse MoE block: router softmax in FP32, top-k (ties -> lowest index), optional renormalisation.
    rmsnorm_rows(x.data(), T, H, *L.post_attention_layernorm, h.data());
    dense_panels_matmul(P.router, h.data(), H, T, router.data(), E, pool_, &dense_scratch_);
    auto & by_expert = ws_.by_expert;
    auto & order = ws_.order;
    by_expert.resize(static_cast<size_t>(E));
    for (auto & list : by_expert) list.clear();
    order.resize(static_cast<size_t>(K));
    auto & picked = ws_.picked;
    picked.resize(static_cast<size_t>(K));
    for (int t = 0; t < T; ++t) {
      ref::router_topk(router.data() + static_cast<int64_t>(t) * E, E, K, c_.norm_topk_prob, order.data(), picked.data());
      for (int j = 0; j < K; ++j) by_expert[static_cast<size_t>(order[static_cast<size_t>(j)])].emplace_back(t, picked[static_cast<size_t>(j)]);
    }
    // Routed experts: gate+up rows of every active expert in one parallel pass, then all down rows in another.
    std::fill(moe.begin(), moe.end(), 0.0f);
    auto & active = ws_.active;
    auto & first_row = ws_.first_row;  // offset of each active expert's tokens in the packed buffers
    active.clear();
    first_row.clear();
    int64_t used = 0;
    for (int e = 0; e < E; ++e) {
      if (by_expert[static_cast<size_t>(e)].empty()) continue;
      active.push_back(e);
      first_row.push_back(used);
      used += static_cast<int64_t>(by_expert[static_cast<size_t>(e)].size());
    }
    counters_.expert_hits += static_cast<uint64_t>(used);
    auto & xe = ws_.xe;
    auto & ge = ws_.ge;
    auto & ue = ws_.ue;
    auto & de = ws_.de;
    xe.resize(static_cast<size_t>(used) * H);
    de.resize(static_cast<size_t>(used) * H);
    ge.resize(static_cast<size_t>(used) * I);
    ue.resize(static_cast<size_t>(used) * I);
    for (size_t a = 0; a < active.size(); ++a) {
      const auto & list = by_expert[static_cast<size_t>(active[a])];
      for (size_t i = 0; i < list.size(); ++i)
        std::memcpy(xe.data() + (first_row[a] + static_cast<int64_t>(i)) * H, h.data() + static_cast<int64_t>(list[i].first) * H, sizeof(float) * H);
    }
    const bool int4 = w_.kind == weights_kind::int4;
    const int G = w_.group_size;
    // INT4 experts with 32-wide groups take 8-bit activations (integer dot products); other groups, and the
    // FP32-activation reference switch, take float activations.
    const bool q8 = int4 && G == kQ8Block && cpu_kernels_q8_activations();
    auto & xq = ws_.xq;
    auto & xd = ws_.xd;
    auto & xs = ws_.xs;
    if (q4_0_experts_) {
      // llama.cpp's 8-bit inputs to its Q4_0 experts (quant/q4-0.h).
      pool_.parallel_for(used, [&](int64_t r0, int64_t r1) { q8_0_round_trip(xe.data() + r0 * H, (r1 - r0) * H, xe.data() + r0 * H); }, 4);
    }
    if (q8) {
      xq.resize(static_cast<size_t>(used) * std::max(H, I));
      xd.resize(static_cast<size_t>(used) * std::max(H, I) / kQ8Block);
      xs.resize(xd.size());
      pool_.parallel_for(used, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) cpu_quantize_q8(xe.data() + r * H, H, xq.data() + r * H, xd.data() + r * (H / kQ8Block), xs.data() + r * (H / kQ8Block));
      }, 4);
    }
    pool_.parallel_for(static_cast<int64_t>(active.size()) * 2 * I, [&](int64_t r0, int64_t r1) {
      for (int64_t idx = r0; idx < r1;) {
        const size_t a = static_cast<size_t>(idx / (2 * I));
        const int64_t rem = idx % (2 * I);
        const bool up = rem >= I;
        const int64_t r = up ? rem - I : rem;
        const size_t e = static_cast<size_t>(active[a]);
        const int n = static_cast<int>(by_expert[e].size());
        float * dst = (up ? ue.data() : ge.data()) + first_row[a] * I + r;
        const float * xr = xe.data() + first_row[a] * H;
        const tensor_view & w = up ? *L.expert_up[e] : *L.expert_gate[e];
        const tensor_view * sc = int4 ? (up ? L.expert_up_scales[e] : L.expert_gate_scales[e]) : nullptr;  // float weights have none
        // The rows of this chunk in one matrix (gate or up of one expert) in one call.
        const int64_t count = std::min(r1 - idx, I - r);
        if (q8) {
          cpu_rows_dot_q4q8(static_cast<const uint8_t *>(w.data) + r * (H / 2), static_cast<const uint16_t *>(sc->data) + r * (H / G), H, count,
                            q8_rows{xq.data(), xd.data(), xs.data(), H}.from(first_row[a]), n, dst, I);
        } else if (int4) {
          for (int64_t k = 0; k < count; ++k) cpu_row_dot_q4_n(w, *sc, G, r + k, xr, H, n, dst + k, I);
        } else if (q4_0_experts_) {
          cpu_rows_dot_q4_0_n(w, r, count, xr, H, n, dst, I);
        } else {
          cpu_rows_dot_n(w, r, count, xr, H, n, dst, I);
        }
        idx += count;
      }
    }, 16);
    // SwiGLU and the down projection's 8-bit inputs in one pass: each row is quantised while it is in cache.
    pool_.parallel_for(used, [&](int64_t r0, int64_t r1) {
      ref::swiglu(ge.data() + r0 * I, ue.data() + r0 * I, static_cast<int>((r1 - r0) * I), ge.data() + r0 * I);
      if (q4_0_experts_) q8_0_round_trip(ge.data() + r0 * I, (r1 - r0) * I, ge.data() + r0 * I);
      if (q8)
        for (int64_t r = r0; r < r1; ++r) cpu_quantize_q8(ge.data() + r * I, I, xq.data() + r * I, xd.data() + r * (I / kQ8Block), xs.data() + r * (I / kQ8Block));
    }, 4);
    pool_.parallel_for(static_cast<int64_t>(active.size()) * H, [&](int64_t r0, int64_t r1) {
      for (int64_t idx = r0; idx < r1;) {
        const size_t a = static_cast<size_t>(idx / H);
        const int64_t r = idx % H;
        const size_t e = static_cast<size_t>(active[a]);
        const int n = static_cast<int>(by_expert[e].size());
        const float * gr = ge.data() + first_row[a] * I;
        float * dst = de.data() + first_row[a] * H + r;
        const tensor_view & w = *L.expert_down[e];
        const int64_t count = std::min(r1 - idx, H - r);
        if (q8) {
          cpu_rows_dot_q4q8(static_cast<const uint8_t *>(w.data) + r * (I / 2),
                            static_cast<const uint16_t *>(L.expert_down_scales[e]->data) + r * (I / G), I, count,
                            q8_rows{xq.data(), xd.data(), xs.data(), I}.from(first_row[a]), n, dst, H);
        } else if (int4) {
          for (int64_t k = 0; k < count; ++k) cpu_row_dot_q4_n(w, *L.expert_down_scales[e], G, r + k, gr, I, n, dst + k, H);
        } else if (q4_0_experts_) {
          cpu_rows_dot_q4_0_n(w, r, count, gr, I, n, dst, H);
        } else {
          cpu_rows_dot_n(w, r, count, gr, I, n, dst, H);
        }
        idx += count;
      }
    }, 16);
    for (size_t a = 0; a < active.size(); ++a) {
      const auto & list = by_expert[static_cast<size_t>(active[a])];
      for (size_t i = 0; i < list.size(); ++i) {
        float * dst = moe.data() + static_cast<int64_t>(list[i].first) * H;
        const float * src = de.data() + (first_row[a] + static_cast<int64_t>(i)) * H;
        const float wgt = list[i].second;
        for (int d = 0; d < H; ++d) dst[d] += src[d] * wgt;
      }
    }
    for (size_t i = 0; i < uT * H; ++i) x[i] += moe[i];
  }

  // Final norm and lm_head on the rows whose logits are wanted.
  auto & rows = ws_.rows;
  rows.clear();
  {
    int t = 0;
    for (const auto & e : batch) {
      const int n = static_cast<int>(e.tokens.size());
      if (all_positions) {
        for (int i = e.logits_from; i < n; ++i) rows.push_back(t + i);
      } else {
        rows.push_back(t + n - 1);
      }
      t += n;
    }
  }
  const int R = static_cast<int>(rows.size());
  auto & xr = ws_.xr;
  auto & out = ws_.out;
  xr.resize(static_cast<size_t>(R) * H);
  out.resize(static_cast<size_t>(R) * V);
  for (int i = 0; i < R; ++i)
    std::memcpy(xr.data() + static_cast<int64_t>(i) * H, x.data() + static_cast<int64_t>(rows[static_cast<size_t>(i)]) * H, sizeof(float) * H);
  rmsnorm_rows(xr.data(), R, H, *w_.final_norm, xr.data());
  if (next != nullptr && use_screen_ && R <= RT_CPU_LM_SCREEN_MAX_TOKENS) {
    if (!screen_built_) {
      lm_head_screen_build(lm_panels_, pool_, screen_);
      screen_built_ = true;
    }
    next->assign(static_cast<size_t>(R), 0);
    lm_head_screen_stats st;
    lm_head_screen_argmax(screen_, *w_.lm_head, lm_panels_, xr.data(), H, R, pool_, next->data(), st, &screen_scratch_);
    counters_.lm_head_screened += st.tokens;
    counters_.lm_head_exact_rows += st.exact_rows;
    scratch += static_cast<uint64_t>(R) * H * 4 + static_cast<uint64_t>(R) * V * 4;
  } else {
    dense_panels_matmul(lm_panels_, xr.data(), H, R, out.data(), V, pool_, &dense_scratch_);
    scratch += static_cast<uint64_t>(R) * (H + V) * 4;
    if (next != nullptr) {
      next->assign(static_cast<size_t>(R), 0);
      for (int i = 0; i < R; ++i) (*next)[static_cast<size_t>(i)] = ref::argmax(out.data() + static_cast<int64_t>(i) * V, V);
    }
  }
  if (logits != nullptr) {
    logits->assign(batch.size(), {});
    int r = 0;
    for (size_t b = 0; b < batch.size(); ++b) {
      const int n = all_positions ? static_cast<int>(batch[b].tokens.size()) - batch[b].logits_from : 1;
      (*logits)[b].assign(out.begin() + static_cast<int64_t>(r) * V, out.begin() + static_cast<int64_t>(r + n) * V);
      r += n;
    }
  }
  for (const auto & e : batch) seqs_[static_cast<size_t>(e.seq_id)].length = e.start_pos + static_cast<int>(e.tokens.size());
  counters_.peak_memory_bytes = std::max<uint64_t>(counters_.peak_memory_bytes, kv_bytes() + scratch);
  return true;
}

}  // namespace

std::unique_ptr<backend> cpu_backend_create(const model_weights & weights, const backend_options & options,
                                            rt_error & error) {
  (void)error;
  return std::make_unique<cpu_backend>(weights, options);
}

}  // namespace rt
