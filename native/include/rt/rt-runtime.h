#pragma once
// The public C++ API of the runtime used by the Node addon: load an OLMoE model folder on a backend, compute
// logits, generate greedily for a batch of prompts, and pack a checkpoint to qpacked-v2.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rt {

class model;

/**
 * Why a call failed. Callers act on the code and show the message; they never parse the message.
 */
enum class rt_status : int {
  ok = 0,
  invalid_request,  // an option or request field the runtime cannot take (a caller's mistake)
  invalid_prompt,   // one prompt cannot be generated (empty, a token outside the vocabulary, longer than the context)
  model_invalid,    // the model folder lacks a file, or one does not parse or does not match config.json
  unsupported,      // this build or device cannot run the model (no CUDA, too old a GPU, a shape it lacks kernels for)
  out_of_memory,    // host or device memory ran out
  device_fault,     // the device reported an error: the model refuses every later request (see model_info::fault)
  numeric_fault,    // a prompt's logits were not numbers (NaN)
  io_error,         // reading or writing a file failed (the packer)
  cancelled,        // the packer was cancelled (a cancelled generation ends its prompts "cancelled" instead)
  internal,         // a broken invariant inside the runtime
};

/** A failed call: what went wrong, which prompt of the request it concerns (-1: none), and words for a person. */
struct rt_error {
  rt_status code = rt_status::ok;
  int prompt_index = -1;
  std::string message;
};

/** Source checkpoint (FP32 math over BF16/F16/F32) or a qpacked-v2 folder (INT4 routed experts). */
enum class weights_kind { bf16, int4 };
enum class backend_kind { cpu, cuda };
/**
 * How BF16 source experts are rounded before use: not at all, or as llama.cpp runs Q4_0 (CPU only): the weights as
 * Q4_0 rounds them and the experts' inputs as Q8_0 does: the quality check's point of comparison.
 */
enum class expert_rounding { none, q4_0 };
/** Why a prompt's generation ended; `none` only while it runs. */
enum class finish_reason { none, stop, length, cancelled };

/** The names the addon and its callers use ("invalid_prompt", "int4", "cuda", "stop", ...). */
const char * rt_status_name(rt_status s);
const char * weights_kind_name(weights_kind w);
const char * backend_kind_name(backend_kind b);
const char * finish_reason_name(finish_reason f);
const char * expert_rounding_name(expert_rounding r);
/** The kind named `name`; false when no kind has that name. */
bool parse_weights_kind(const std::string & name, weights_kind & out);
bool parse_backend_kind(const std::string & name, backend_kind & out);
bool parse_expert_rounding(const std::string & name, expert_rounding & out);

/** What to load and where to run it. */
struct model_load_options {
  std::string dir;
  weights_kind weights = weights_kind::bf16;
  backend_kind backend = backend_kind::cpu;
  int threads = 0;               // CPU threads; 0 = all cores
  int max_context = 0;           // tokens per sequence; 0 = max_position_embeddings
  int max_sequences = 0;         // sequences generated together (KV the CUDA backend reserves); 0 = 8
  int64_t expert_budget_bytes = 0;  // CUDA expert residency budget; 0 = backend default
  int expert_slots = 0;             // CUDA: GPU expert slots per layer (overrides the byte budget); 0 = unused
  int device = 0;                   // CUDA device index
};

/** Static facts about a loaded model. */
struct model_info {
  backend_kind backend = backend_kind::cpu;
  weights_kind weights = weights_kind::bf16;
  std::string dir;
  int group_size = 0;
  int hidden_size = 0, intermediate_size = 0, num_hidden_layers = 0, num_attention_heads = 0, num_key_value_heads = 0;
  int head_dim = 0, num_experts = 0, num_experts_per_tok = 0, vocab_size = 0, max_context = 0;
  std::vector<int> eos_token_ids;
  uint64_t weight_bytes = 0;
  int threads = 0;
  bool simd = false;  // CPU AVX2 kernels in use
  std::string cpu_isa;  // the 8-bit activation kernels' path: "scalar", "avx2", "avx-vnni" or "avx512-vnni"
  int device_expert_slots = 0;  // CUDA: experts per layer resident on the GPU (num_experts = full residency); CPU: 0
  std::string fault;  // empty while the model can run; else the device error after which every request fails
  int device = -1;    // CUDA device index the model runs on; -1 on the CPU
  uint64_t device_bytes = 0;  // CUDA: device memory the model holds now (weights, expert slots, KV, scratch); CPU: 0
  int decode_step_ops = 0;    // CUDA: kernels in the captured one-sequence decode step (0 until captured); CPU: 0
};

/** Loads a model; nullptr with `error` (its message naming the file/tensor at fault) on failure. */
std::shared_ptr<model> rt_model_load(const model_load_options & options, rt_error & error);
model_info rt_model_info(const model & m);

/**
 * Logits for positions `from`.. of `tokens` (one vocab-sized row each; the earlier rows are not computed) from a fresh
 * sequence, the experts rounded as `rounding` says for this call only (not `none`: bf16 weights on the CPU, sizes
 * divisible by 32, else unsupported).
 */
bool rt_model_logits(model & m, const std::vector<int32_t> & tokens, std::vector<std::vector<float>> & logits,
                     rt_error & error, expert_rounding rounding = expert_rounding::none, int from = 0);

/** A batch of greedy generations. */
struct generate_request {
  std::vector<std::vector<int32_t>> prompts;
  int max_new_tokens = 256;
  std::vector<int> max_new_tokens_each;  // when not empty, one limit a prompt in place of max_new_tokens
  std::vector<int32_t> stop_tokens;  // generation of a prompt ends after emitting one of these
  int prefill_token_budget = 4096;   // prompt tokens a step feeds at most; a longer prompt is prefilled in chunks
  int batch = 0;                     // at most this many prompts generate at once, the next starting as one ends; 0 = all
};

/** Per-prompt outcome and figures. */
struct generate_result {
  std::vector<int32_t> tokens;      // generated tokens, including a final stop token
  int prompt_tokens = 0;
  double ttft_ms = 0;  // from the start of the prompt's prefill step to its first generated token
  double decode_tokens_per_s = 0;     // tokens after the first / time after the first
  rt::finish_reason finish_reason = rt::finish_reason::none;
};

/** Request-wide figures (backend counters: fields that do not apply are 0). */
struct generate_stats {
  double prefill_ms = 0;  // steps that prefilled admitted prompts (they also decode the prompts already active)
  double decode_ms = 0;   // steps that only decoded
  uint64_t prefill_steps = 0, decode_steps = 0;  // forwards of each kind
  uint64_t expert_hits = 0, expert_misses = 0, h2d_bytes = 0, d2h_bytes = 0, peak_memory_bytes = 0;
  uint64_t expert_evictions = 0;  // CUDA partial residency
  std::string peak_memory_scope;  // "estimate" | "process" | "device": see backend_counters
};

/**
 * Called on the generating thread for each new token of prompt `index`. `end` is set on the token that ends the
 * prompt's generation (a stop token, max_new_tokens or the context limit): its finished result, with figures.
 */
using token_callback = std::function<void(int index, int32_t token, const generate_result * end)>;

/**
 * Continuous batching: each step decodes one token of every active prompt and prefills, in the same forward, the
 * prompts admitted (in order) to the free places, at most prefill_token_budget of their tokens a step (a prompt the
 * budget cuts short goes on first in the next step); a prompt's sequence is freed as soon as it stops, reaches
 * max_new_tokens or the context limit, so the next can start.
 * `cancel` is checked before every step; prompts not finished by then end "cancelled". Calls on one model are
 * serialised. On failure `error` says why; when one prompt is what failed (invalid_prompt, numeric_fault),
 * `error.prompt_index` is its index in `request.prompts`.
 */
bool rt_model_generate(model & m, const generate_request & request, const std::atomic<bool> * cancel,
                       const token_callback & on_token, std::vector<generate_result> & results,
                       generate_stats & stats, rt_error & error);

/** Options of the qpacked-v2 packer. */
struct pack_options {
  std::string src_dir;
  std::string dst_dir;
  int group_size = 0;   // 0 = default rule (128, else largest of 64..8 dividing every expert `in`)
  int threads = 0;      // 0 = all cores
  uint64_t shard_bytes = 2000000000ull;  // target output shard size
};

/** What the packer wrote, for the manifest. */
struct pack_result {
  int group_size = 0;
  std::vector<std::string> source_files;  // names relative to src_dir that were read or copied
  std::vector<std::string> output_files;  // names relative to dst_dir
  uint64_t source_bytes = 0;
};

/** Progress: bytes of source tensors processed so far, of `total`. */
using pack_progress = std::function<void(uint64_t done, uint64_t total)>;

/** An output shard renamed into place, its name relative to dst_dir: the packer does not touch it again. */
using pack_shard_done = std::function<void(const std::string & name)>;

/**
 * Packs a source OLMoE checkpoint to qpacked-v2 (everything but horizon-manifest.json), streaming tensor by
 * tensor; each output is written under a temporary name and renamed when complete.
 */
bool rt_qpacked_pack(const pack_options & options, const pack_progress & progress, const std::atomic<bool> * cancel,
                     pack_result & result, rt_error & error, const pack_shard_done & on_shard = nullptr);

}  // namespace rt
