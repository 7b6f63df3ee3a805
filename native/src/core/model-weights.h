#pragma once
// Backend-independent model description: the OLMoE config and read-only views of the weights as they lie in the
// memory-mapped safetensors shards (source BF16/F16/F32, or qpacked-v2 F16 + U8/F16 expert tensors).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "rt/rt-runtime.h"

namespace rt {

/** Element type of a tensor in a safetensors file (only the ones the runtime reads). */
enum class dtype { f32, f16, bf16, u8 };

/** Size in bytes of one element of `t`. */
size_t dtype_size(dtype t);
/** Safetensors spelling ("F32", "F16", "BF16", "U8"). */
const char * dtype_name(dtype t);

/** The OLMoE fields of config.json. head_dim = hidden_size / num_attention_heads unless config gives head_dim. */
struct model_config {
  int hidden_size = 0;
  int intermediate_size = 0;
  int num_hidden_layers = 0;
  int num_attention_heads = 0;
  int num_key_value_heads = 0;
  int head_dim = 0;
  int num_experts = 0;
  int num_experts_per_tok = 0;
  bool norm_topk_prob = false;
  float rope_theta = 10000.0f;
  float rms_norm_eps = 1e-5f;
  float clip_qkv = 0.0f;  // 0 = no clipping (config null)
  int vocab_size = 0;
  bool tie_word_embeddings = false;
  int max_position_embeddings = 0;
  std::vector<int> eos_token_ids;  // from config.json eos_token_id (may be empty)
};

/** A read-only view of one tensor inside a mapped file; `data` stays valid while the owning weights live. */
struct tensor_view {
  std::string name;
  std::string file;  // path of the shard that holds it (for error messages)
  dtype type = dtype::f32;
  std::vector<int64_t> shape;
  const void * data = nullptr;
  size_t nbytes = 0;

  int64_t numel() const;
};


/** One layer's tensors. For int4, expert_* hold `.qweight` (U8) and expert_*_scales hold `.scales` (F16). */
struct layer_weights {
  const tensor_view * input_layernorm = nullptr;
  const tensor_view * post_attention_layernorm = nullptr;
  const tensor_view * q_proj = nullptr;
  const tensor_view * k_proj = nullptr;
  const tensor_view * v_proj = nullptr;
  const tensor_view * o_proj = nullptr;
  const tensor_view * q_norm = nullptr;
  const tensor_view * k_norm = nullptr;
  const tensor_view * router = nullptr;  // mlp.gate.weight [num_experts, hidden]
  std::vector<const tensor_view *> expert_gate, expert_up, expert_down;
  std::vector<const tensor_view *> expert_gate_scales, expert_up_scales, expert_down_scales;  // int4 only
};

class mapped_file;

/** A loaded model folder: config, tensor views and the mappings that keep them alive. */
struct model_weights {
  std::string dir;
  model_config config;
  weights_kind kind = weights_kind::bf16;
  int group_size = 0;  // int4 only
  std::unordered_map<std::string, tensor_view> tensors;
  const tensor_view * embed_tokens = nullptr;
  const tensor_view * final_norm = nullptr;
  const tensor_view * lm_head = nullptr;  // == embed_tokens when tied
  std::vector<layer_weights> layers;
  std::vector<std::shared_ptr<mapped_file>> files;
  std::vector<std::unique_ptr<uint64_t[]>> aligned_copies;  // tensors the file left misaligned for their dtype
  size_t total_bytes = 0;  // bytes of all tensors

  const tensor_view * find(const std::string & name) const;
  /** Drops the resident pages of a tensor read from a mapped file (a backend that keeps its own copy of it). */
  void release_pages(const tensor_view & t) const;
};

/**
 * Loads a model folder (config.json + *.safetensors, optionally model.safetensors.index.json).
 * `want` selects the precision: int4 requires a qpacked-v2 folder, bf16 a source checkpoint.
 * A tensor whose bytes are not aligned to its dtype in the file is copied to aligned memory; with `copy_misaligned`
 * false it is left in place, for a caller that only validates or reads bytes with memcpy.
 * On failure returns nullptr and sets `error` to a message naming the file and tensor at fault.
 */
std::unique_ptr<model_weights> model_weights_load(const std::string & dir, weights_kind want, std::string & error,
                                                  bool copy_misaligned = true);

/** Parses and validates config.json text (`path` is used in messages). */
bool model_config_parse(const std::string & text, const std::string & path, model_config & out, std::string & error);

}  // namespace rt
