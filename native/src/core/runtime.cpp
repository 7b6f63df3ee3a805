// rt-runtime.h over the backend contract: model loading, the logits tool and batched greedy generation.
#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <mutex>
#include <thread>
#include <utility>

#include "core/backend.h"
#include "core/cpu-topology.h"
#include "core/model-from-weights.h"
#include "cpu/cpu-kernels.h"
#include "cpu/q4-q8-dot.h"
#include "rt/rt-runtime.h"

namespace rt {

class model {
 public:
  std::unique_ptr<model_weights> weights;
  std::unique_ptr<backend> be;
  model_load_options options;
  std::mutex mu;  // one request at a time
};

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// Runs `fn` when the scope ends, also by an exception (a backend's bad_alloc, a token callback that throws): a
// request's sequences left allocated would hold their KV caches for as long as the model lives.
template <typename Fn>
class scope_exit {
 public:
  explicit scope_exit(Fn fn) : fn_(std::move(fn)) {}
  ~scope_exit() { fn_(); }
  scope_exit(const scope_exit &) = delete;
  scope_exit & operator=(const scope_exit &) = delete;

 private:
  Fn fn_;
};

void add_counters(generate_stats & s, const backend_counters & c) {
  s.expert_hits = c.expert_hits;
  s.expert_misses = c.expert_misses;
  s.h2d_bytes = c.h2d_bytes;
  s.d2h_bytes = c.d2h_bytes;
  s.peak_memory_bytes = c.peak_memory_bytes;
  s.expert_evictions = c.expert_evictions;
  s.peak_memory_scope = c.peak_memory_scope;
}

}  // namespace

const char * rt_status_name(rt_status s) {
  switch (s) {
    case rt_status::ok: return "ok";
    case rt_status::invalid_request: return "invalid_request";
    case rt_status::invalid_prompt: return "invalid_prompt";
    case rt_status::model_invalid: return "model_invalid";
    case rt_status::unsupported: return "unsupported";
    case rt_status::out_of_memory: return "out_of_memory";
    case rt_status::device_fault: return "device_fault";
    case rt_status::numeric_fault: return "numeric_fault";
    case rt_status::io_error: return "io_error";
    case rt_status::cancelled: return "cancelled";
    case rt_status::internal: return "internal";
  }
  return "internal";
}

const char * weights_kind_name(weights_kind w) { return w == weights_kind::int4 ? "int4" : "bf16"; }
const char * expert_rounding_name(expert_rounding r) { return r == expert_rounding::q4_0 ? "q4_0" : "none"; }
const char * backend_kind_name(backend_kind b) { return b == backend_kind::cuda ? "cuda" : "cpu"; }

const char * finish_reason_name(finish_reason f) {
  switch (f) {
    case finish_reason::none: return "none";
    case finish_reason::stop: return "stop";
    case finish_reason::length: return "length";
    case finish_reason::cancelled: return "cancelled";
  }
  return "none";
}

namespace {

// The kind among `kinds` whose name is `name`.
template <typename Kind>
bool parse_kind(const std::string & name, std::initializer_list<Kind> kinds, const char * (*name_of)(Kind), Kind & out) {
  for (const Kind k : kinds) {
    if (name == name_of(k)) {
      out = k;
      return true;
    }
  }
  return false;
}

}  // namespace

bool parse_weights_kind(const std::string & name, weights_kind & out) {
  return parse_kind(name, {weights_kind::bf16, weights_kind::int4}, weights_kind_name, out);
}

bool parse_backend_kind(const std::string & name, backend_kind & out) {
  return parse_kind(name, {backend_kind::cpu, backend_kind::cuda}, backend_kind_name, out);
}

bool parse_expert_rounding(const std::string & name, expert_rounding & out) {
  return parse_kind(name, {expert_rounding::none, expert_rounding::q4_0}, expert_rounding_name, out);
}

std::shared_ptr<model> rt_model_load(const model_load_options & options, rt_error & error) {
  error = rt_error{};
  std::unique_ptr<model_weights> weights = model_weights_load(options.dir, options.weights, error.message);
  if (!weights) {
    error.code = rt_status::model_invalid;
    return nullptr;
  }
  return rt_model_from_weights(std::move(weights), options, error);
}

std::shared_ptr<model> rt_model_from_weights(std::unique_ptr<model_weights> weights, const model_load_options & options,
                                             rt_error & error) {
  error = rt_error{};
  auto m = std::make_shared<model>();
  m->options = options;
  // Resolved once, so the pool and what info() reports agree without reading the CPU topology again.
  if (m->options.threads <= 0) m->options.threads = default_cpu_threads();
  m->weights = std::move(weights);
  backend_options bo;
  bo.threads = m->options.threads;
  bo.max_context = options.max_context;
  bo.max_sequences = options.max_sequences;
  bo.expert_budget_bytes = options.expert_budget_bytes;
  bo.expert_slots = options.expert_slots;
  bo.device = options.device;
  switch (options.backend) {
    case backend_kind::cpu:
      m->be = cpu_backend_create(*m->weights, bo, error);
      break;
    case backend_kind::cuda:
#ifdef RT_WITH_CUDA
      m->be = cuda_backend_create(*m->weights, bo, error);
#else
      fail(error, rt_status::unsupported, "this build has no CUDA backend (load with backend 'cpu')");
#endif
      break;
  }
  if (!m->be) return nullptr;
  return m;
}

model_info rt_model_info(const model & m) {
  model_info i;
  const model_config & c = m.weights->config;
  i.backend = m.be->kind();
  i.weights = m.weights->kind;
  i.dir = m.weights->dir;
  i.group_size = m.weights->group_size;
  i.hidden_size = c.hidden_size;
  i.intermediate_size = c.intermediate_size;
  i.num_hidden_layers = c.num_hidden_layers;
  i.num_attention_heads = c.num_attention_heads;
  i.num_key_value_heads = c.num_key_value_heads;
  i.head_dim = c.head_dim;
  i.num_experts = c.num_experts;
  i.num_experts_per_tok = c.num_experts_per_tok;
  i.vocab_size = c.vocab_size;
  i.max_context = m.options.max_context > 0 ? m.options.max_context : c.max_position_embeddings;
  i.eos_token_ids = c.eos_token_ids;
  i.weight_bytes = m.weights->total_bytes;
  i.threads = m.options.threads;
  i.simd = cpu_kernels_simd();
  i.cpu_isa = cpu_isa_name(cpu_isa_active());
  i.device_expert_slots = m.be->device_expert_slots();
  i.fault = m.be->fault();
  i.device = i.backend == backend_kind::cuda ? m.options.device : -1;
  i.device_bytes = m.be->device_bytes();
  i.decode_step_ops = m.be->decode_step_ops();
  return i;
}

bool rt_model_logits(model & m, const std::vector<int32_t> & tokens, std::vector<std::vector<float>> & logits,
                     rt_error & error, expert_rounding rounding, int from) {
  std::lock_guard<std::mutex> lock(m.mu);
  error = rt_error{};
  if (tokens.empty()) return fail(error, rt_status::invalid_request, "logits: no tokens");
  if (from < 0 || static_cast<size_t>(from) >= tokens.size()) {
    return fail(error, rt_status::invalid_request,
                "logits: from " + std::to_string(from) + " is outside the " + std::to_string(tokens.size()) + " tokens");
  }
  if (rounding != expert_rounding::none) {
    const model_config & c = m.weights->config;
    const std::string what = std::string("logits: expert rounding '") + expert_rounding_name(rounding) + "'";
    if (m.weights->kind != weights_kind::bf16 || m.be->kind() != backend_kind::cpu)
      return fail(error, rt_status::unsupported, what + " needs a source checkpoint (weights 'bf16') on the CPU backend");
    if (c.hidden_size % 32 != 0 || c.intermediate_size % 32 != 0)
      return fail(error, rt_status::unsupported, m.weights->dir + ": " + what + " needs hidden_size and intermediate_size divisible by 32");
    if (!m.be->set_expert_rounding(rounding)) return fail(error, rt_status::unsupported, what + ": this backend cannot round its experts");
  }
  const scope_exit plain([&] {
    if (rounding != expert_rounding::none) m.be->set_expert_rounding(expert_rounding::none);
  });
  const int seq = m.be->seq_create(error);
  if (seq < 0) return false;
  const scope_exit free_seq([&] { m.be->seq_free(seq); });
  std::vector<batch_entry> batch(1);
  batch[0].seq_id = seq;
  batch[0].tokens = tokens;
  batch[0].logits_from = from;
  std::vector<std::vector<float>> out;
  if (!m.be->forward(batch, true, out, error)) return false;
  const size_t V = static_cast<size_t>(m.weights->config.vocab_size);
  logits.assign(tokens.size() - static_cast<size_t>(from), {});
  for (size_t t = 0; t < logits.size(); ++t) logits[t].assign(out[0].begin() + t * V, out[0].begin() + (t + 1) * V);
  return true;
}

bool rt_model_generate(model & m, const generate_request & req, const std::atomic<bool> * cancel,
                       const token_callback & on_token, std::vector<generate_result> & results, generate_stats & stats,
                       rt_error & error) {
  std::lock_guard<std::mutex> lock(m.mu);
  error = rt_error{};
  const auto prompt_failed = [&error](rt_status code, size_t i, std::string message) {
    return fail(error, code, std::move(message), static_cast<int>(i));
  };
  const int max_ctx = m.options.max_context > 0 ? m.options.max_context : m.weights->config.max_position_embeddings;
  const size_t n = req.prompts.size();
  results.assign(n, generate_result{});
  stats = generate_stats{};
  if (!req.max_new_tokens_each.empty() && req.max_new_tokens_each.size() != n) {
    return fail(error, rt_status::invalid_request,
                "generate: " + std::to_string(req.max_new_tokens_each.size()) + " token limits for " + std::to_string(n) + " prompts");
  }
  const auto limit_of = [&req](size_t i) { return req.max_new_tokens_each.empty() ? req.max_new_tokens : req.max_new_tokens_each[i]; };
  for (size_t i = 0; i < n; ++i) {
    if (req.prompts[i].empty()) {
      return prompt_failed(rt_status::invalid_prompt, i, "generate: prompt " + std::to_string(i) + " is empty");
    }
    for (const int32_t t : req.prompts[i]) {
      // Checked before any step and before the cancel flag, so a bad request fails as itself even when cancelled.
      if (t < 0 || t >= m.weights->config.vocab_size) {
        return prompt_failed(rt_status::invalid_prompt, i,
                             "generate: prompt " + std::to_string(i) + ": token id " + std::to_string(t) +
                                 " is outside the vocabulary (0.." + std::to_string(m.weights->config.vocab_size - 1) + ")");
      }
    }
    if (static_cast<int>(req.prompts[i].size()) > max_ctx) {
      return prompt_failed(rt_status::invalid_prompt, i,
                           "generate: prompt " + std::to_string(i) + " has " + std::to_string(req.prompts[i].size()) +
                               " tokens, more than the context limit " + std::to_string(max_ctx));
    }
    results[i].prompt_tokens = static_cast<int>(req.prompts[i].size());
  }
  if (n == 0) return true;
  m.be->counters_reset();
  // 0 asks for every prompt at once, which the backend may not hold (CUDA: 1024 sequences).
  const size_t limit = static_cast<size_t>(std::max(1, m.be->sequence_limit()));
  const size_t batch_size = std::min({n, limit, req.batch > 0 ? static_cast<size_t>(req.batch) : n});
  std::vector<int> seqs(n, -1);
  auto release = [&](size_t i) {
    if (seqs[i] >= 0) m.be->seq_free(seqs[i]);
    seqs[i] = -1;
  };
  const scope_exit free_all([&] {
    for (size_t i = 0; i < n; ++i) release(i);
  });
  std::vector<clock_type::time_point> admitted(n), first(n), last(n);
  std::vector<int> length(n, 0);
  auto is_stop = [&](int32_t t) { return std::find(req.stop_tokens.begin(), req.stop_tokens.end(), t) != req.stop_tokens.end(); };
  auto cancelled = [&] { return cancel && cancel->load(); };
  auto set_figures = [&](size_t i) {
    generate_result & r = results[i];
    if (r.tokens.empty()) return;
    r.ttft_ms = std::chrono::duration<double, std::milli>(first[i] - admitted[i]).count();
    const double span = std::chrono::duration<double>(last[i] - first[i]).count();
    r.decode_tokens_per_s = (r.tokens.size() > 1 && span > 0) ? static_cast<double>(r.tokens.size() - 1) / span : 0.0;
  };

  bool any_tokens = false;
  for (size_t i = 0; i < n; ++i) any_tokens = any_tokens || limit_of(i) > 0;
  if (!any_tokens) {
    for (auto & r : results) r.finish_reason = finish_reason::length;
    return true;
  }
  if (cancelled()) {
    for (auto & r : results) r.finish_reason = finish_reason::cancelled;
    return true;
  }
  // Each forward's results: pick the greedy token, stream it, and either end the prompt (freeing its sequence for
  // the next) or queue it for the next decode step.
  std::vector<batch_entry> batch;
  std::vector<size_t> owner;
  std::vector<int32_t> next_tokens;
  size_t active = 0;
  std::vector<size_t> fed(n, 0);  // prompt tokens already in each prompt's sequence
  auto consume = [&](const std::vector<batch_entry> & step, const std::vector<size_t> & step_owner) {
    const auto now = clock_type::now();
    for (size_t b = 0; b < step.size(); ++b) {
      const size_t i = step_owner[b];
      // A prompt chunk before its last: its logits predict a token the prompt already has.
      if (fed[i] < req.prompts[i].size()) continue;
      const int32_t tok = next_tokens[b];
      generate_result & r = results[i];
      if (tok < 0) {
        // Greedy decoding would otherwise go on with an arbitrary token and the run would score garbage.
        return prompt_failed(rt_status::numeric_fault, i,
                             "generate: prompt " + std::to_string(i) + ": the logits for generated token " +
                                 std::to_string(r.tokens.size() + 1) +
                                 " are not numbers (NaN): an activation overflowed FP16 or the weights are damaged");
      }
      r.tokens.push_back(tok);
      if (r.tokens.size() == 1) first[i] = now;
      last[i] = now;
      if (is_stop(tok)) r.finish_reason = finish_reason::stop;
      else if (static_cast<int>(r.tokens.size()) >= limit_of(i) || length[i] >= max_ctx) r.finish_reason = finish_reason::length;
      if (r.finish_reason != finish_reason::none) {
        set_figures(i);
        release(i);
        --active;
        if (on_token) on_token(static_cast<int>(i), tok, &r);
        continue;
      }
      if (on_token) on_token(static_cast<int>(i), tok, nullptr);
      batch_entry e;
      e.seq_id = seqs[i];
      e.tokens = {tok};
      e.start_pos = length[i];
      length[i] += 1;
      batch.push_back(std::move(e));
      owner.push_back(i);
    }
    return true;
  };
  // Each step decodes one token of every active prompt and feeds at most this many prompt tokens: first the rest of
  // a prompt the previous step's budget cut short, then prompts admitted to the free places, the last of them cut to
  // what is left. Scratch memory is then bounded by the budget and not by the longest prompt, and a long prompt does
  // not stall the others' decoding for one huge step.
  const size_t kPrefillTokens = static_cast<size_t>(std::max(1, req.prefill_token_budget));
  size_t partial = n;  // the prompt whose prefill is unfinished; n = none
  bool was_cancelled = false;
  size_t next = 0;
  for (;;) {
    if (cancelled()) { was_cancelled = true; break; }
    std::vector<batch_entry> step;
    std::vector<size_t> step_owner;
    step.swap(batch);
    step_owner.swap(owner);
    const auto step0 = clock_type::now();
    size_t budget = kPrefillTokens;
    auto feed = [&](size_t i) {
      const std::vector<int32_t> & p = req.prompts[i];
      const size_t take = std::min(p.size() - fed[i], budget);
      batch_entry e;
      e.seq_id = seqs[i];
      e.tokens.assign(p.begin() + static_cast<std::ptrdiff_t>(fed[i]), p.begin() + static_cast<std::ptrdiff_t>(fed[i] + take));
      e.start_pos = static_cast<int>(fed[i]);
      fed[i] += take;
      budget -= take;
      length[i] = static_cast<int>(fed[i]);
      step.push_back(std::move(e));
      step_owner.push_back(i);
      partial = fed[i] < p.size() ? i : n;
    };
    if (partial < n) feed(partial);
    // A prompt allowed no tokens ends at once, without a place.
    const auto skip_empty = [&] {
      while (next < n && limit_of(next) <= 0) results[next++].finish_reason = finish_reason::length;
    };
    skip_empty();
    while (budget > 0 && partial == n && next < n && active < batch_size) {
      seqs[next] = m.be->seq_create(error);
      if (seqs[next] < 0) return false;
      admitted[next] = step0;
      ++active;
      feed(next++);
      skip_empty();
    }
    if (step.empty()) break;
    const bool prefilled = budget < kPrefillTokens;
    if (!m.be->forward_greedy(step, next_tokens, error)) return false;
    (prefilled ? stats.prefill_ms : stats.decode_ms) += ms_since(step0);
    ++(prefilled ? stats.prefill_steps : stats.decode_steps);
    if (!consume(step, step_owner)) return false;
  }
  if (was_cancelled) {
    for (size_t i = 0; i < n; ++i) {
      if (results[i].finish_reason != finish_reason::none) continue;  // ended before the cancel
      results[i].finish_reason = finish_reason::cancelled;
      set_figures(i);
    }
  }
  add_counters(stats, m.be->counters());
  return true;
}

}  // namespace rt
