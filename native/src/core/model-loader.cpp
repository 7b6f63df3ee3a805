#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <new>
#include <set>
#include <system_error>

#include "core/json.h"
#include "core/mapped-file.h"
#include "core/model-weights.h"
#include "core/safetensors.h"
#include "quant/qpacked.h"

namespace fs = std::filesystem;

namespace rt {

int64_t tensor_view::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const tensor_view * model_weights::find(const std::string & name) const {
  auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : &it->second;
}

void model_weights::release_pages(const tensor_view & t) const {
  for (const auto & f : files) f->release(t.data, t.nbytes);
}

namespace {

/** A JSON value as it would read in config.json, for messages. */
std::string value_str(const json_value & v) {
  switch (v.type) {
    case json_value::kind::null: return "null";
    case json_value::kind::boolean: return v.b ? "true" : "false";
    case json_value::kind::number: {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, v.num);
      return std::string(buf, r.ptr);
    }
    case json_value::kind::string: return json_quote(v.str);
    case json_value::kind::array: return "[...]";
    case json_value::kind::object: return "{...}";
  }
  return "?";
}

/** Reads an optional finite, positive number; a missing or null field keeps `out`. */
bool get_positive(const json_value & root, const char * key, const std::string & path, float & out, std::string & error) {
  const json_value * v = root.get(key);
  if (!v || v->is_null()) return true;
  const float f = v->is_number() ? static_cast<float>(v->num) : 0.0f;
  if (!v->is_number() || !std::isfinite(f) || !(f > 0.0f)) {
    error = path + ": field '" + key + "' is " + value_str(*v) + "; it must be a finite positive number";
    return false;
  }
  out = f;
  return true;
}

/** True when an index names `s` as a file directly inside the model folder (no path, no drive, no parent). */
bool plain_file_name(const std::string & s) {
  return !s.empty() && s != "." && s != ".." && s.find_first_of(std::string("/\\:\0", 4)) == std::string::npos;
}

bool get_int(const json_value & root, const char * key, const std::string & path, int & out, std::string & error,
             bool required = true) {
  const json_value * v = root.get(key);
  if (!v || v->is_null()) {
    if (!required) return true;
    error = path + ": missing field '" + key + "'";
    return false;
  }
  if (!v->is_number() || v->num != std::floor(v->num) || v->num < 0 || v->num > 2147483647.0) {
    error = path + ": field '" + key + "' is not a non-negative integer";
    return false;
  }
  out = static_cast<int>(v->num);
  return true;
}

std::string shape_str(const std::vector<int64_t> & s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "]";
}

}  // namespace

bool model_config_parse(const std::string & text, const std::string & path, model_config & c, std::string & error) {
  json_value root;
  std::string jerr;
  if (!json_parse(text, root, jerr)) {
    error = path + ": not valid JSON (" + jerr + ")";
    return false;
  }
  if (!root.is_object()) {
    error = path + ": not a JSON object";
    return false;
  }
  bool is_olmoe = false;
  std::string arch_desc;
  if (const json_value * mt = root.get("model_type"); mt && mt->is_string()) {
    arch_desc = "model_type '" + mt->str + "'";
    is_olmoe = mt->str == "olmoe";
  }
  if (const json_value * a = root.get("architectures"); a && a->is_array()) {
    for (const auto & it : a->items) {
      if (it.is_string() && it.str == "OlmoeForCausalLM") is_olmoe = true;
      if (it.is_string() && arch_desc.find(it.str) == std::string::npos) arch_desc += (arch_desc.empty() ? "" : ", ") + std::string("architecture '") + it.str + "'";
    }
  }
  if (!is_olmoe) {
    error = path + ": unsupported model (" + (arch_desc.empty() ? std::string("no model_type") : arch_desc) +
            "); expected model_type 'olmoe' / OlmoeForCausalLM";
    return false;
  }
  c = model_config{};
  if (!get_int(root, "hidden_size", path, c.hidden_size, error) ||
      !get_int(root, "intermediate_size", path, c.intermediate_size, error) ||
      !get_int(root, "num_hidden_layers", path, c.num_hidden_layers, error) ||
      !get_int(root, "num_attention_heads", path, c.num_attention_heads, error) ||
      !get_int(root, "num_experts", path, c.num_experts, error) ||
      !get_int(root, "num_experts_per_tok", path, c.num_experts_per_tok, error) ||
      !get_int(root, "vocab_size", path, c.vocab_size, error)) {
    return false;
  }
  c.num_key_value_heads = c.num_attention_heads;
  c.max_position_embeddings = 4096;
  if (!get_int(root, "num_key_value_heads", path, c.num_key_value_heads, error, false) ||
      !get_int(root, "max_position_embeddings", path, c.max_position_embeddings, error, false) ||
      !get_int(root, "head_dim", path, c.head_dim, error, false)) {
    return false;
  }
  if (c.hidden_size <= 0 || c.intermediate_size <= 0 || c.num_hidden_layers <= 0 || c.num_attention_heads <= 0 ||
      c.num_key_value_heads <= 0 || c.num_experts <= 0 || c.vocab_size <= 0) {
    error = path + ": sizes must be positive";
    return false;
  }
  if (c.max_position_embeddings <= 0) {
    error = path + ": field 'max_position_embeddings' is 0; it must be positive";
    return false;
  }
  if (c.head_dim == 0) {
    if (c.hidden_size % c.num_attention_heads != 0) {
      error = path + ": hidden_size is not a multiple of num_attention_heads";
      return false;
    }
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim % 2 != 0) {
    error = path + ": head_dim " + std::to_string(c.head_dim) + " is odd (rotary embedding needs an even size)";
    return false;
  }
  if (c.num_attention_heads % c.num_key_value_heads != 0) {
    error = path + ": num_attention_heads is not a multiple of num_key_value_heads";
    return false;
  }
  if (c.num_experts_per_tok <= 0 || c.num_experts_per_tok > c.num_experts) {
    error = path + ": num_experts_per_tok must be in 1..num_experts";
    return false;
  }
  if (const json_value * v = root.get("norm_topk_prob"); v && v->is_bool()) c.norm_topk_prob = v->b;
  if (const json_value * v = root.get("tie_word_embeddings"); v && v->is_bool()) c.tie_word_embeddings = v->b;
  if (!get_positive(root, "rope_theta", path, c.rope_theta, error) ||
      !get_positive(root, "rms_norm_eps", path, c.rms_norm_eps, error)) {
    return false;
  }
  if (const json_value * v = root.get("clip_qkv"); v && v->is_number()) c.clip_qkv = static_cast<float>(v->num);
  if (const json_value * v = root.get("rope_scaling"); v && !v->is_null()) {
    error = path + ": rope_scaling is not supported";
    return false;
  }
  if (const json_value * v = root.get("eos_token_id"); v && !v->is_null()) {
    std::vector<const json_value *> ids;
    if (v->is_array()) {
      for (const auto & it : v->items) ids.push_back(&it);
    } else {
      ids.push_back(v);
    }
    for (const json_value * id : ids) {
      if (!id->is_number() || id->num != std::floor(id->num) || id->num < 0 || id->num >= c.vocab_size) {
        error = path + ": eos_token_id " + value_str(*id) + " is not a token id (an integer in 0.." +
                std::to_string(c.vocab_size - 1) + ")";
        return false;
      }
      c.eos_token_ids.push_back(static_cast<int>(id->num));
    }
  }
  return true;
}

std::unique_ptr<model_weights> model_weights_load(const std::string & dir, weights_kind want, std::string & error,
                                                  bool copy_misaligned) {
  auto w = std::make_unique<model_weights>();
  w->dir = dir;
  const std::string config_path = (fs::path(dir) / "config.json").string();
  std::string text;
  if (!fs::is_directory(dir)) {
    error = dir + ": not a model folder (no such directory)";
    return nullptr;
  }
  if (!read_regular_file(config_path, text, error)) return nullptr;
  if (!model_config_parse(text, config_path, w->config, error)) return nullptr;
  const model_config & c = w->config;

  // Which shard each tensor should be in, per the index (when present).
  std::vector<std::string> shard_names;
  std::unordered_map<std::string, std::string> index_map;
  const std::string index_path = (fs::path(dir) / "model.safetensors.index.json").string();
  if (fs::exists(index_path)) {
    if (!read_regular_file(index_path, text, error)) return nullptr;
    json_value idx;
    std::string jerr;
    if (!json_parse(text, idx, jerr)) {
      error = index_path + ": not valid JSON (" + jerr + ")";
      return nullptr;
    }
    const json_value * wm = idx.get("weight_map");
    if (!wm || !wm->is_object()) {
      error = index_path + ": no weight_map object";
      return nullptr;
    }
    for (const auto & m : wm->members) {
      if (!m.second.is_string() || !plain_file_name(m.second.str)) {
        error = index_path + ": weight_map entry '" + m.first + "' names " + value_str(m.second) +
                ", which is not a file name in the model folder";
        return nullptr;
      }
      index_map[m.first] = m.second.str;  // of a key listed twice the last counts, as when Python reads the index
    }
    std::set<std::string> seen;
    for (const auto & m : wm->members) {
      if (index_map[m.first] == m.second.str && seen.insert(m.second.str).second) shard_names.push_back(m.second.str);
    }
  } else {
    for (const auto & e : fs::directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".safetensors") shard_names.push_back(e.path().filename().string());
    }
    std::sort(shard_names.begin(), shard_names.end());
  }
  if (shard_names.empty()) {
    error = dir + ": no *.safetensors files";
    return nullptr;
  }

  std::string qpacked_format;
  for (const std::string & shard : shard_names) {
    const std::string path = (fs::path(dir) / shard).string();
    auto mf = mapped_file::open(path, error);
    if (!mf) return nullptr;
    safetensors_header h;
    if (!safetensors_parse(mf->data(), mf->size(), path, h, error)) return nullptr;
    for (const auto & kv : h.metadata) {
      if (kv.first == "format" && kv.second == "qpacked-v1") {
        error = path + ": packed as qpacked-v1 (uniform INT4, scale amax/7), a format this version no longer reads; "
                "re-pack the model (horizon pack, or prepare it again) to get qpacked-v2";
        return nullptr;
      }
      if (kv.first == "format" && kv.second == kQpackedFormat) qpacked_format = kv.second;
      if (kv.first == "codebook" && kv.second != kQpackedCodebook) {
        error = path + ": __metadata__ codebook " + json_quote(kv.second) + " is not " + kQpackedCodebook + ", the only one this version reads";
        return nullptr;
      }
      if (kv.first == "group_size") {
        const char * b = kv.second.data();
        const char * e = b + kv.second.size();
        const auto r = std::from_chars(b, e, w->group_size);
        if (r.ec != std::errc() || r.ptr != e || w->group_size <= 0) {
          error = path + ": __metadata__ group_size " + json_quote(kv.second) + " is not a positive integer";
          return nullptr;
        }
      }
    }
    for (auto & e : h.tensors) {
      if (!index_map.empty()) {
        auto it = index_map.find(e.name);
        if (it == index_map.end() || it->second != shard) continue;  // not the copy the index points to
      } else if (const tensor_view * other = w->find(e.name)) {
        error = path + ": tensor '" + e.name + "' is also in " + other->file +
                ", and there is no model.safetensors.index.json to say which copy to load";
        return nullptr;
      }
      tensor_view v;
      v.name = e.name;
      v.file = path;
      v.type = e.type;
      v.shape = e.shape;
      v.data = mf->data() + e.begin;
      v.nbytes = e.end - e.begin;
      // Writers that do not pad the header to 8 bytes leave tensors misaligned for their dtype; the kernels read
      // elements in place, so such a tensor is copied.
      if (copy_misaligned && reinterpret_cast<uintptr_t>(v.data) % dtype_size(v.type) != 0) {
        std::unique_ptr<uint64_t[]> copy;
        try {
          copy.reset(new uint64_t[(v.nbytes + 7) / 8]);
        } catch (const std::bad_alloc &) {
          error = path + ": cannot allocate " + std::to_string(v.nbytes) + " bytes for an aligned copy of tensor '" +
                  e.name + "'";
          return nullptr;
        }
        std::memcpy(copy.get(), v.data, v.nbytes);
        v.data = copy.get();
        w->aligned_copies.push_back(std::move(copy));
      }
      w->total_bytes += v.nbytes;
      w->tensors[e.name] = std::move(v);
    }
    w->files.push_back(mf);
  }

  bool has_qweight = false;
  for (const auto & kv : w->tensors) {
    const std::string & n = kv.first;
    if (n.size() > 8 && n.compare(n.size() - 8, 8, ".qweight") == 0) { has_qweight = true; break; }
  }
  if (has_qweight && qpacked_format.empty()) {
    error = dir + ": holds .qweight tensors but no shard says __metadata__ format \"" + kQpackedFormat +
            "\"; re-pack the model (horizon pack)";
    return nullptr;
  }
  w->kind = !qpacked_format.empty() ? weights_kind::int4 : weights_kind::bf16;
  if (want == weights_kind::int4 && w->kind != weights_kind::int4) {
    error = dir + ": int4 weights need a qpacked-v2 folder (run 'horizon pack'); this folder holds source weights";
    return nullptr;
  }
  if (want == weights_kind::bf16 && w->kind != weights_kind::bf16) {
    error = dir + ": this is a qpacked-v2 (int4) folder; load it with weights 'int4' or use the source checkpoint for bf16";
    return nullptr;
  }

  auto where = [&](const std::string & name) {
    auto it = index_map.find(name);
    if (it != index_map.end()) return (fs::path(dir) / it->second).string();
    return dir + " (" + std::to_string(shard_names.size()) + " shard" + (shard_names.size() == 1 ? "" : "s") + ")";
  };
  auto need = [&](const std::string & name, std::vector<int64_t> shape, bool is_float, dtype exact,
                  bool check_exact) -> const tensor_view * {
    const tensor_view * t = w->find(name);
    if (!t) {
      error = where(name) + ": missing tensor '" + name + "'";
      return nullptr;
    }
    if (t->shape != shape) {
      error = t->file + ": tensor '" + name + "' has shape " + shape_str(t->shape) + ", expected " + shape_str(shape);
      return nullptr;
    }
    if (check_exact && t->type != exact) {
      error = t->file + ": tensor '" + name + "' has dtype " + dtype_name(t->type) + ", expected " + dtype_name(exact);
      return nullptr;
    }
    if (is_float && t->type == dtype::u8) {
      error = t->file + ": tensor '" + name + "' has dtype U8, which is not supported here (expected BF16, F16 or F32)";
      return nullptr;
    }
    return t;
  };
  const int64_t H = c.hidden_size, I = c.intermediate_size, V = c.vocab_size;
  const int64_t QD = static_cast<int64_t>(c.num_attention_heads) * c.head_dim;
  const int64_t KD = static_cast<int64_t>(c.num_key_value_heads) * c.head_dim;
  auto f = [&](const std::string & name, std::vector<int64_t> shape) { return need(name, std::move(shape), true, dtype::f32, false); };

  if (!(w->embed_tokens = f("model.embed_tokens.weight", {V, H}))) return nullptr;
  if (!(w->final_norm = f("model.norm.weight", {H}))) return nullptr;
  if (c.tie_word_embeddings) {
    w->lm_head = w->embed_tokens;
  } else if (!(w->lm_head = f("lm_head.weight", {V, H}))) {
    return nullptr;
  }

  int group = 0;
  if (w->kind == weights_kind::int4) {
    const tensor_view * s = w->find("model.layers.0.mlp.experts.0.gate_proj.scales");
    if (!s || s->shape.size() != 2 || s->shape[1] <= 0 || H % s->shape[1] != 0) {
      error = where("model.layers.0.mlp.experts.0.gate_proj.scales") +
              ": missing or mis-shaped tensor 'model.layers.0.mlp.experts.0.gate_proj.scales'";
      return nullptr;
    }
    group = static_cast<int>(H / s->shape[1]);
    if (w->group_size != 0 && w->group_size != group) {
      error = s->file + ": __metadata__ group_size " + std::to_string(w->group_size) + " disagrees with tensor '" +
              s->name + "' (group " + std::to_string(group) + ")";
      return nullptr;
    }
    if (group % 2 != 0 || I % group != 0) {
      error = s->file + ": group size " + std::to_string(group) + " does not divide intermediate_size or is odd";
      return nullptr;
    }
    w->group_size = group;
  }

  // The layers grow as their tensors are found: a config's counts alone must not size anything (a huge
  // num_hidden_layers fails at the first missing tensor, after work in proportion to the tensors present).
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    layer_weights & L = w->layers.emplace_back();
    const std::string p = "model.layers." + std::to_string(l) + ".";
    if (!(L.input_layernorm = f(p + "input_layernorm.weight", {H})) ||
        !(L.post_attention_layernorm = f(p + "post_attention_layernorm.weight", {H})) ||
        !(L.q_proj = f(p + "self_attn.q_proj.weight", {QD, H})) ||
        !(L.k_proj = f(p + "self_attn.k_proj.weight", {KD, H})) ||
        !(L.v_proj = f(p + "self_attn.v_proj.weight", {KD, H})) ||
        !(L.o_proj = f(p + "self_attn.o_proj.weight", {H, QD})) ||
        !(L.q_norm = f(p + "self_attn.q_norm.weight", {QD})) ||
        !(L.k_norm = f(p + "self_attn.k_norm.weight", {KD})) ||
        !(L.router = f(p + "mlp.gate.weight", {c.num_experts, H}))) {
      return nullptr;
    }
    for (int e = 0; e < c.num_experts; ++e) {
      const std::string ep = p + "mlp.experts." + std::to_string(e) + ".";
      struct proj { const char * name; int64_t out, in; std::vector<const tensor_view *> * w, * s; };
      const proj projs[] = {{"gate_proj", I, H, &L.expert_gate, &L.expert_gate_scales},
                            {"up_proj", I, H, &L.expert_up, &L.expert_up_scales},
                            {"down_proj", H, I, &L.expert_down, &L.expert_down_scales}};
      for (const proj & pr : projs) {
        if (w->kind == weights_kind::bf16) {
          const tensor_view * t = f(ep + pr.name + ".weight", {pr.out, pr.in});
          if (!t) return nullptr;
          pr.w->push_back(t);
        } else {
          const tensor_view * q = need(ep + pr.name + ".qweight", {pr.out, pr.in / 2}, false, dtype::u8, true);
          if (!q) return nullptr;
          const tensor_view * s = need(ep + pr.name + ".scales", {pr.out, pr.in / group}, false, dtype::f16, true);
          if (!s) return nullptr;
          pr.w->push_back(q);
          pr.s->push_back(s);
        }
      }
    }
  }
  return w;
}

}  // namespace rt
