#pragma once
// Shared by the cpu ctest drivers: a seeded tiny OLMoE checkpoint writer (config.json + BF16 safetensors) and
// small check macros. Not a test itself (ctest globs test-*.cpp only).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/model-weights.h"
#include "quant/qpacked.h"

namespace test_util {

inline int g_failures = 0;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                              \
      std::fprintf(stderr, "\n");                                     \
      ++test_util::g_failures;                                        \
    }                                                                 \
  } while (0)

struct tiny_config {
  int hidden = 32, inter = 16, layers = 2, heads = 4, kv_heads = 4, experts = 8, top_k = 2, vocab = 64;
  bool norm_topk = false, tie = false;
  std::string model_type = "olmoe";
};

struct raw_tensor {
  std::string name;
  std::string dtype = "BF16";
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/** A [rows, cols] view of `data` (elements of `elem` bytes), as the kernels take weights. */
inline rt::tensor_view matrix_view(rt::dtype type, int64_t rows, int64_t cols, const void * data, size_t elem) {
  rt::tensor_view t;
  t.name = "w";
  t.type = type;
  t.shape = {rows, cols};
  t.data = data;
  t.nbytes = static_cast<size_t>(rows * cols) * elem;
  return t;
}

inline uint16_t bf16_from_f32(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7fffu + lsb) >> 16);
}

/** A float matrix with its BF16 and F16 roundings (to nearest even) and a view of each: the dense dtypes kernels read. */
struct dense_matrix {
  std::vector<float> f32;
  std::vector<uint16_t> bf16, f16;
  rt::tensor_view views[3];  // F32, BF16, F16
  dense_matrix(std::vector<float> values, int64_t rows, int64_t cols) : f32(std::move(values)), bf16(f32.size()), f16(f32.size()) {
    for (size_t i = 0; i < f32.size(); ++i) {
      bf16[i] = bf16_from_f32(f32[i]);
      f16[i] = rt::fp16_from_f32(f32[i]);
    }
    views[0] = matrix_view(rt::dtype::f32, rows, cols, f32.data(), 4);
    views[1] = matrix_view(rt::dtype::bf16, rows, cols, bf16.data(), 2);
    views[2] = matrix_view(rt::dtype::f16, rows, cols, f16.data(), 2);
  }
  // The views point into the vectors.
  dense_matrix(const dense_matrix &) = delete;
  dense_matrix & operator=(const dense_matrix &) = delete;
};

struct rng {
  uint64_t s;
  explicit rng(uint64_t seed) : s(seed * 2654435761ull + 1) {}
  float uniform() {  // [-1, 1)
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    return static_cast<float>((s >> 11) & 0xffffff) / 8388608.0f - 1.0f;
  }
};

inline raw_tensor make_tensor(const std::string & name, std::vector<int64_t> shape, rng & r, float scale, float offset = 0.0f) {
  raw_tensor t;
  t.name = name;
  t.shape = std::move(shape);
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  t.bytes.resize(static_cast<size_t>(n) * 2);
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t b = bf16_from_f32(offset + scale * r.uniform());
    std::memcpy(t.bytes.data() + i * 2, &b, 2);
  }
  return t;
}

inline std::string shape_json(const std::vector<int64_t> & s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "]";
}

/** Serialises tensors to safetensors bytes (header padded to 8, plus `misalign` more bytes as some writers leave it). */
inline std::string safetensors_bytes(const std::vector<raw_tensor> & ts, size_t misalign = 0) {
  std::string header = "{";
  size_t off = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    header += (i ? "," : "") + std::string("\"") + ts[i].name + "\":{\"dtype\":\"" + ts[i].dtype + "\",\"shape\":" +
              shape_json(ts[i].shape) + ",\"data_offsets\":[" + std::to_string(off) + "," +
              std::to_string(off + ts[i].bytes.size()) + "]}";
    off += ts[i].bytes.size();
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  header.append(misalign, ' ');
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[b] = static_cast<char>((header.size() >> (8 * b)) & 0xff);
  out += header;
  for (const auto & t : ts) out.append(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
  return out;
}

/** `t` (BF16) widened to F32, exactly. */
inline raw_tensor to_f32(const raw_tensor & t) {
  raw_tensor o = t;
  o.dtype = "F32";
  o.bytes.resize(t.bytes.size() * 2);
  for (size_t i = 0; i < t.bytes.size() / 2; ++i) {
    uint16_t h;
    std::memcpy(&h, t.bytes.data() + 2 * i, 2);
    const float f = rt::f32_from_bf16(h);
    std::memcpy(o.bytes.data() + 4 * i, &f, 4);
  }
  return o;
}

inline void write_file(const std::filesystem::path & p, const std::string & data) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
}

inline std::string config_json(const tiny_config & c) {
  return std::string("{\"architectures\":[\"OlmoeForCausalLM\"],\"model_type\":\"") + c.model_type +
         "\",\"hidden_size\":" + std::to_string(c.hidden) + ",\"intermediate_size\":" + std::to_string(c.inter) +
         ",\"num_hidden_layers\":" + std::to_string(c.layers) + ",\"num_attention_heads\":" + std::to_string(c.heads) +
         ",\"num_key_value_heads\":" + std::to_string(c.kv_heads) + ",\"num_experts\":" + std::to_string(c.experts) +
         ",\"num_experts_per_tok\":" + std::to_string(c.top_k) + ",\"norm_topk_prob\":" + (c.norm_topk ? "true" : "false") +
         ",\"rope_theta\":10000.0,\"rms_norm_eps\":1e-05,\"vocab_size\":" + std::to_string(c.vocab) +
         ",\"tie_word_embeddings\":" + (c.tie ? "true" : "false") +
         ",\"max_position_embeddings\":256,\"eos_token_id\":" + std::to_string(c.vocab - 1) + ",\"clip_qkv\":null}";
}

/** All tensors of a tiny checkpoint, in HF naming. */
inline std::vector<raw_tensor> tiny_tensors(const tiny_config & c, uint64_t seed) {
  rng r(seed);
  const int64_t H = c.hidden, I = c.inter, hd = c.hidden / c.heads;
  const int64_t QD = c.heads * hd, KD = c.kv_heads * hd;
  const float ws = 1.0f / std::sqrt(static_cast<float>(H));
  std::vector<raw_tensor> ts;
  ts.push_back(make_tensor("model.embed_tokens.weight", {c.vocab, H}, r, 1.0f));
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    ts.push_back(make_tensor(p + "input_layernorm.weight", {H}, r, 0.1f, 1.0f));
    ts.push_back(make_tensor(p + "post_attention_layernorm.weight", {H}, r, 0.1f, 1.0f));
    ts.push_back(make_tensor(p + "self_attn.q_proj.weight", {QD, H}, r, ws));
    ts.push_back(make_tensor(p + "self_attn.k_proj.weight", {KD, H}, r, ws));
    ts.push_back(make_tensor(p + "self_attn.v_proj.weight", {KD, H}, r, ws));
    ts.push_back(make_tensor(p + "self_attn.o_proj.weight", {H, QD}, r, ws));
    ts.push_back(make_tensor(p + "self_attn.q_norm.weight", {QD}, r, 0.1f, 1.0f));
    ts.push_back(make_tensor(p + "self_attn.k_norm.weight", {KD}, r, 0.1f, 1.0f));
    ts.push_back(make_tensor(p + "mlp.gate.weight", {c.experts, H}, r, ws * 4));
    for (int e = 0; e < c.experts; ++e) {
      const std::string ep = p + "mlp.experts." + std::to_string(e) + ".";
      ts.push_back(make_tensor(ep + "gate_proj.weight", {I, H}, r, ws * 2));
      ts.push_back(make_tensor(ep + "up_proj.weight", {I, H}, r, ws * 2));
      ts.push_back(make_tensor(ep + "down_proj.weight", {H, I}, r, 2.0f / std::sqrt(static_cast<float>(I))));
    }
  }
  ts.push_back(make_tensor("model.norm.weight", {H}, r, 0.1f, 1.0f));
  if (!c.tie) ts.push_back(make_tensor("lm_head.weight", {c.vocab, H}, r, ws * 4));
  return ts;
}

/** Writes config.json and the tensors in `shards` files (with an index when shards > 1). */
inline void write_tiny_model(const std::filesystem::path & dir, const tiny_config & c, uint64_t seed, int shards = 1,
                             std::vector<raw_tensor> * tensors_out = nullptr) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_file(dir / "config.json", config_json(c));
  std::vector<raw_tensor> ts = tiny_tensors(c, seed);
  if (shards <= 1) {
    write_file(dir / "model.safetensors", safetensors_bytes(ts));
  } else {
    std::string wm;
    const size_t per = (ts.size() + shards - 1) / shards;
    for (int s = 0; s < shards; ++s) {
      char name[64];
      std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, shards);
      std::vector<raw_tensor> part(ts.begin() + std::min(ts.size(), s * per), ts.begin() + std::min(ts.size(), (s + 1) * per));
      for (const auto & t : part) wm += (wm.empty() ? "" : ",") + std::string("\"") + t.name + "\":\"" + name + "\"";
      write_file(dir / name, safetensors_bytes(part));
    }
    write_file(dir / "model.safetensors.index.json", "{\"metadata\":{},\"weight_map\":{" + wm + "}}");
  }
  if (tensors_out) *tensors_out = std::move(ts);
}

/** The checkpoint in `src` packed to INT4 by rt_qpacked_pack into `dst` (a failure is a CHECK failure); its group size. */
inline int pack_model(const std::filesystem::path & src, const std::filesystem::path & dst, int threads) {
  rt::pack_options po;
  po.src_dir = src.string();
  po.dst_dir = dst.string();
  po.threads = threads;
  rt::pack_result pr;
  rt::rt_error err;
  CHECK(rt::rt_qpacked_pack(po, nullptr, nullptr, pr, err), "pack %s: %s", src.string().c_str(), err.message.c_str());
  return pr.group_size;
}

inline std::filesystem::path temp_dir(const std::string & name) {
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  auto p = std::filesystem::temp_directory_path() / ("horizon-native-" + name + "-" + std::to_string(stamp));
  std::filesystem::create_directories(p);
  return p;
}

inline int finish(const char * name) {
  if (g_failures) {
    std::fprintf(stderr, "%s: %d check(s) failed\n", name, g_failures);
    return 1;
  }
  std::printf("%s: all checks passed\n", name);
  return 0;
}

}  // namespace test_util
