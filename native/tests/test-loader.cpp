// Loader error cases: each broken checkpoint must fail with a message that names the file and the tensor at fault.
// To add a case: build a tiny model, break one thing, and add an expect_error(...) line (or a row to a table).
#ifndef _WIN32
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "core/mapped-file.h"
#include "core/model-weights.h"
#include "core/safetensors.h"
#include "rt/rt-runtime.h"
#include "test-helpers.h"

using namespace rt;
namespace fs = std::filesystem;

static void expect_error(const fs::path & dir, weights_kind kind, const std::vector<std::string> & needles, const char * what) {
  std::string err;
  auto w = model_weights_load(dir.string(), kind, err);
  CHECK(!w, "%s: loaded although broken", what);
  for (const auto & n : needles) CHECK(err.find(n) != std::string::npos, "%s: message '%s' lacks '%s'", what, err.c_str(), n.c_str());
  std::printf("%s -> %s\n", what, err.c_str());
}

// A safetensors file whose tensor i spans data bytes [offsets[i].first, offsets[i].second) of a `data_len`-byte
// block (zeros): for offsets that do not tile the data, which test_util::safetensors_bytes never writes.
static std::string safetensors_with_offsets(const std::vector<test_util::raw_tensor> & ts,
                                            const std::vector<std::pair<size_t, size_t>> & offsets, size_t data_len) {
  std::string header = "{";
  for (size_t i = 0; i < ts.size(); ++i) {
    header += (i ? "," : "") + std::string("\"") + ts[i].name + "\":{\"dtype\":\"" + ts[i].dtype + "\",\"shape\":" +
              test_util::shape_json(ts[i].shape) + ",\"data_offsets\":[" + std::to_string(offsets[i].first) + "," +
              std::to_string(offsets[i].second) + "]}";
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[b] = static_cast<char>((header.size() >> (8 * b)) & 0xff);
  return out + header + std::string(data_len, '\0');
}

// config.json of `c` with `extra` members appended: of a key given twice the last counts, so they override.
static std::string config_with(const test_util::tiny_config & c, const std::string & extra) {
  std::string s = test_util::config_json(c);
  return s.substr(0, s.size() - 1) + "," + extra + "}";
}

static std::string read_all(const fs::path & p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

static std::vector<std::vector<float>> logits_of(const fs::path & dir) {
  model_load_options o;
  o.dir = dir.string();
  o.threads = 1;
  rt_error err;
  std::vector<std::vector<float>> out;
  auto m = rt_model_load(o, err);
  CHECK(m != nullptr, "load %s: %s", dir.string().c_str(), err.message.c_str());
  if (m) CHECK(rt_model_logits(*m, {3, 17, 42, 5}, out, err), "logits of %s: %s", dir.string().c_str(), err.message.c_str());
  return out;
}

// Config values out of range: each row appends members to a valid config.json.
static void config_values() {
  test_util::tiny_config c;  // vocab 64
  struct config_case {
    const char * extra;
    std::vector<std::string> needles;  // empty: the config is valid
  };
  const config_case cases[] = {
      {"\"eos_token_id\":1e10", {"config.json", "eos_token_id 1e+10", "0..63"}},
      {"\"eos_token_id\":[5,-1]", {"config.json", "eos_token_id -1"}},
      {"\"eos_token_id\":[2147483648]", {"config.json", "eos_token_id 2147483648"}},
      {"\"eos_token_id\":1.5", {"config.json", "eos_token_id 1.5"}},
      {"\"eos_token_id\":64", {"config.json", "eos_token_id 64"}},
      {"\"eos_token_id\":\"2\"", {"config.json", "eos_token_id \"2\""}},
      {"\"eos_token_id\":[0,63]", {}},
      {"\"eos_token_id\":null", {}},
      {"\"rope_theta\":0", {"config.json", "'rope_theta' is 0"}},
      {"\"rope_theta\":-10000", {"config.json", "'rope_theta' is -10000"}},
      {"\"rope_theta\":1e39", {"config.json", "'rope_theta' is 1e+39"}},  // infinite as a float
      {"\"rope_theta\":\"10000\"", {"config.json", "'rope_theta' is \"10000\""}},
      {"\"rope_theta\":500000", {}},
      {"\"rms_norm_eps\":0", {"config.json", "'rms_norm_eps' is 0"}},
      {"\"rms_norm_eps\":-1e-05", {"config.json", "'rms_norm_eps' is -1e-05"}},
      {"\"rms_norm_eps\":1e-50", {"config.json", "'rms_norm_eps' is 1e-50"}},  // 0 as a float
      {"\"rms_norm_eps\":1e-06", {}},
      {"\"max_position_embeddings\":0", {"config.json", "'max_position_embeddings' is 0"}},
      {"\"rope_theta\":1e999", {"config.json", "number out of range"}},
      {"\"num_attention_heads\":5,\"num_key_value_heads\":5", {"config.json", "hidden_size is not a multiple of num_attention_heads"}},
      {"\"hidden_size\":0", {"config.json", "sizes must be positive"}},
      {"\"intermediate_size\":0", {"config.json", "sizes must be positive"}},
      {"\"num_hidden_layers\":0", {"config.json", "sizes must be positive"}},
      {"\"num_attention_heads\":0", {"config.json", "sizes must be positive"}},
      {"\"num_key_value_heads\":0", {"config.json", "sizes must be positive"}},
      {"\"num_experts\":0", {"config.json", "sizes must be positive"}},
      {"\"vocab_size\":0", {"config.json", "sizes must be positive"}},
  };
  for (const config_case & tc : cases) {
    model_config mc;
    std::string err;
    const bool ok = model_config_parse(config_with(c, tc.extra), "/m/config.json", mc, err);
    if (tc.needles.empty()) {
      CHECK(ok, "%s: refused: %s", tc.extra, err.c_str());
      continue;
    }
    CHECK(!ok, "%s: accepted", tc.extra);
    for (const auto & n : tc.needles) CHECK(err.find(n) != std::string::npos, "%s: message '%s' lacks '%s'", tc.extra, err.c_str(), n.c_str());
  }
}

// Only the required fields: the optional ones take their defaults; given ones are read.
static void config_defaults() {
  const std::string minimal = "{\"model_type\":\"olmoe\",\"hidden_size\":32,\"intermediate_size\":16,\"num_hidden_layers\":2,"
                              "\"num_attention_heads\":4,\"num_experts\":8,\"num_experts_per_tok\":2,\"vocab_size\":64";
  model_config mc;
  std::string err;
  CHECK(model_config_parse(minimal + "}", "/m/config.json", mc, err), "minimal config: %s", err.c_str());
  CHECK(mc.num_key_value_heads == 4 && mc.head_dim == 8 && mc.max_position_embeddings == 4096, "kv heads %d, head_dim %d, max positions %d",
        mc.num_key_value_heads, mc.head_dim, mc.max_position_embeddings);
  CHECK(!mc.norm_topk_prob && !mc.tie_word_embeddings && mc.clip_qkv == 0.0f && mc.eos_token_ids.empty(), "flags off by default");
  CHECK(mc.rope_theta == 10000.0f && mc.rms_norm_eps == 1e-5f, "rope_theta %g, rms_norm_eps %g", mc.rope_theta, mc.rms_norm_eps);
  CHECK(model_config_parse(minimal + ",\"norm_topk_prob\":true,\"tie_word_embeddings\":true,\"clip_qkv\":8,\"head_dim\":16,"
                                     "\"num_key_value_heads\":2,\"eos_token_id\":[7,9]}",
                           "/m/config.json", mc, err),
        "full config: %s", err.c_str());
  CHECK(mc.norm_topk_prob && mc.tie_word_embeddings && mc.clip_qkv == 8.0f && mc.head_dim == 16 && mc.num_key_value_heads == 2 &&
            mc.eos_token_ids == std::vector<int>({7, 9}),
        "given fields read");
}

// Safetensors headers the parser must refuse although their byte counts add up.
static void safetensors_headers() {
  struct header_case {
    const char * header;
    size_t data_len;
    const char * needle;  // nullptr: valid
  };
  const header_case cases[] = {
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, nullptr},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
       "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "tensor 'a' is listed twice"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0.9,4.9]}}", 5, "tensor 'a' has bad data_offsets"},
      {"{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4.5]}}", 4, "tensor 'a' has bad data_offsets"},
      {"{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "tensor 'a' lacks dtype/shape/data_offsets"},
      {"{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "tensor 'a' lacks dtype/shape/data_offsets"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "tensor 'a' lacks dtype/shape/data_offsets"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]}}", 4, "tensor 'a' lacks dtype/shape/data_offsets"},
      {"{\"a\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "tensor 'a' lacks dtype/shape/data_offsets"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4, "tensor 'a' lacks dtype/shape/data_offsets"},
      {"{\"a\":[0,4]}", 4, "tensor 'a' lacks dtype/shape/data_offsets"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "tensor 'a' has a bad shape"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "tensor 'a' spans 4 bytes but its shape and dtype need 8"},
      {"{\"__metadata__\":{\"format\":\"pt\"},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, nullptr},
      {"[]", 0, "the header is not a JSON object"},
      {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1125899906842624,16],\"data_offsets\":[0,4]}}", 4, "tensor 'a' has a shape too large to address"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[67108864,67108864],\"data_offsets\":[0,4]}}", 4,
       "tensor 'a' has a shape too large to address"},  // 2^52 elements: addressable, but not their 2^54 bytes
  };
  for (const header_case & tc : cases) {
    std::string h = tc.header;
    while (h.size() % 8) h += ' ';
    std::string bytes(8, '\0');
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<char>((h.size() >> (8 * b)) & 0xff);
    bytes += h + std::string(tc.data_len, '\0');
    safetensors_header out;
    std::string err;
    const bool ok = safetensors_parse(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(), "x.safetensors", out, err);
    if (!tc.needle) {
      CHECK(ok, "%s: %s", tc.header, err.c_str());
      continue;
    }
    CHECK(!ok && err.find("x.safetensors") != std::string::npos && err.find(tc.needle) != std::string::npos,
          "%s: %s", tc.header, ok ? "accepted" : err.c_str());
  }
}

// A header whose length is not a multiple of 8 leaves tensors misaligned in the mapping: they load as aligned
// copies and give the logits of the padded file, while tensors already aligned stay in the mapping.
static void misaligned_tensors(const fs::path & root) {
  test_util::tiny_config c;
  struct align_case {
    const char * dtype;
    size_t misalign;
    bool copied;  // whether the misalignment breaks the dtype's alignment
  };
  const align_case cases[] = {{"BF16", 1, true}, {"F32", 2, true}, {"F32", 4, false}, {"BF16", 6, false}};
  for (const align_case & tc : cases) {
    auto ts = test_util::tiny_tensors(c, 5);
    if (std::string(tc.dtype) == "F32")
      for (auto & t : ts) t = test_util::to_f32(t);
    const std::string tag = std::string(tc.dtype) + "+" + std::to_string(tc.misalign);
    const fs::path a = root / ("aligned-" + tag), b = root / ("misaligned-" + tag);
    for (const auto & [d, mis] : {std::pair{a, size_t{0}}, std::pair{b, tc.misalign}}) {
      fs::create_directories(d);
      test_util::write_file(d / "config.json", test_util::config_json(c));
      test_util::write_file(d / "model.safetensors", test_util::safetensors_bytes(ts, mis));
    }
    std::string err;
    auto wa = model_weights_load(a.string(), weights_kind::bf16, err);
    auto wb = model_weights_load(b.string(), weights_kind::bf16, err);
    CHECK(wa && wb, "%s: %s", tag.c_str(), err.c_str());
    if (!wa || !wb) continue;
    CHECK(wa->aligned_copies.empty(), "%s: the padded file needs no copies", tag.c_str());
    CHECK(wb->aligned_copies.empty() != tc.copied, "%s: %zu aligned copies", tag.c_str(), wb->aligned_copies.size());
    const unsigned char * map_begin = wa->files[0]->data();
    const unsigned char * map_end = map_begin + wa->files[0]->size();
    size_t misplaced = 0, differing = 0, outside = 0;
    for (const auto & [name, t] : wb->tensors) {
      if (reinterpret_cast<uintptr_t>(t.data) % dtype_size(t.type) != 0) ++misplaced;
      const tensor_view * ta = wa->find(name);
      if (!ta || ta->nbytes != t.nbytes || std::memcmp(ta->data, t.data, t.nbytes) != 0) ++differing;
      if (ta && (static_cast<const unsigned char *>(ta->data) < map_begin || static_cast<const unsigned char *>(ta->data) >= map_end)) ++outside;
    }
    CHECK(misplaced == 0, "%s: %zu tensors misaligned for their dtype", tag.c_str(), misplaced);
    CHECK(differing == 0, "%s: %zu tensors differ from the padded file", tag.c_str(), differing);
    CHECK(outside == 0, "%s: %zu aligned tensors copied out of the mapping", tag.c_str(), outside);
    const auto la = logits_of(a), lb = logits_of(b);
    CHECK(!la.empty() && la == lb, "%s: logits differ from the padded file", tag.c_str());
  }
}

// Replaces `from` by `to` in the JSON header of a safetensors file (re-padded to 8 bytes; data offsets are relative
// to the header's end, so the tensors stay valid).
static void edit_header(const fs::path & file, const std::string & from, const std::string & to) {
  const std::string bytes = read_all(file);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  std::string header = bytes.substr(8, static_cast<size_t>(n));
  const size_t at = header.find(from);
  CHECK(at != std::string::npos, "%s: header lacks %s", file.string().c_str(), from.c_str());
  if (at == std::string::npos) return;
  header.replace(at, from.size(), to);
  while (header.size() % 8) header += ' ';
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[static_cast<size_t>(b)] = static_cast<char>((header.size() >> (8 * b)) & 0xff);
  test_util::write_file(file, out + header + bytes.substr(8 + static_cast<size_t>(n)));
}

// A qpacked-v2 folder whose metadata or INT4 tensors are wrong fails to load with a message naming the shard and
// the problem. Each case packs the tiny model (one shard, group 16) afresh and breaks one thing.
static void qpacked_reader(const fs::path & root) {
  test_util::tiny_config c;
  const fs::path src = root / "int4-src";
  test_util::write_tiny_model(src, c, 4);
  const fs::path d = root / "int4";
  const std::string shard = "model-qpacked-00001-of-00001.safetensors";
  auto pack_fresh = [&]() {
    fs::remove_all(d);
    pack_options o;
    o.src_dir = src.string();
    o.dst_dir = d.string();
    o.threads = 1;
    o.group_size = 16;
    pack_result r;
    rt_error err;
    CHECK(rt_qpacked_pack(o, nullptr, nullptr, r, err) && r.group_size == 16, "pack: %s", err.message.c_str());
  };
  pack_fresh();
  {
    std::string err;
    auto w = model_weights_load(d.string(), weights_kind::int4, err);
    CHECK(w && w->kind == weights_kind::int4 && w->group_size == 16, "the packed folder loads as int4: %s", err.c_str());
    if (w) CHECK(w->layers.size() == 2 && w->layers[1].expert_down_scales.size() == 8, "int4 layer views");
    expect_error(d, weights_kind::bf16, {"qpacked-v2", "int4"}, "bf16 requested on a packed folder");
  }
  struct reader_case {
    const char * what;
    std::string from, to;
    std::vector<std::string> needles;
    std::string meta_to;  // when not empty, the group_size metadata is changed to this too
  };
  const std::string gate0 = "model.layers.0.mlp.experts.0.gate_proj.scales";
  const reader_case cases[] = {
      {"a qpacked-v1 folder (the older uniform INT4 format)", "\"format\":\"qpacked-v2\"", "\"format\":\"qpacked-v1\"",
       {shard, "packed as qpacked-v1", "re-pack the model"}},
      {"another codebook", "\"codebook\":\"hq4nl\"", "\"codebook\":\"nf4\"", {shard, "codebook \"nf4\" is not hq4nl"}},
      {"packed tensors without the format metadata", "\"format\":\"qpacked-v2\"", "\"format\":\"pt\"",
       {"holds .qweight tensors but no shard says __metadata__ format \"qpacked-v2\"", "re-pack"}},
      {"group_size metadata disagrees", "\"group_size\":\"16\"", "\"group_size\":\"8\"",
       {shard, "__metadata__ group_size 8 disagrees with tensor '" + gate0 + "' (group 16)"}},
      {"group_size metadata not a number", "\"group_size\":\"16\"", "\"group_size\":\"16x\"",
       {shard, "__metadata__ group_size \"16x\" is not a positive integer"}},
      {"group_size metadata zero", "\"group_size\":\"16\"", "\"group_size\":\"0\"", {shard, "group_size \"0\" is not a positive integer"}},
      {"group_size metadata negative", "\"group_size\":\"16\"", "\"group_size\":\"-16\"",
       {shard, "group_size \"-16\" is not a positive integer"}},
      {"scales of the wrong dtype", "\"model.layers.1.mlp.experts.3.down_proj.scales\":{\"dtype\":\"F16\"",
       "\"model.layers.1.mlp.experts.3.down_proj.scales\":{\"dtype\":\"BF16\"",
       {shard, "tensor 'model.layers.1.mlp.experts.3.down_proj.scales' has dtype BF16, expected F16"}},
      {"qweight of the wrong shape", "\"model.layers.1.mlp.experts.5.up_proj.qweight\":{\"dtype\":\"U8\",\"shape\":[16,16]",
       "\"model.layers.1.mlp.experts.5.up_proj.qweight\":{\"dtype\":\"U8\",\"shape\":[32,8]",
       {shard, "tensor 'model.layers.1.mlp.experts.5.up_proj.qweight' has shape [32,8], expected [16,16]"}},
      {"first scales not a matrix", "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[16,2]",
       "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[32]", {shard, "missing or mis-shaped tensor '" + gate0 + "'"}},
      {"first scales give a group that does not divide the expert width", "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[16,2]",
       "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[32,1]", {shard, "group size 32 does not divide intermediate_size"},
       "\"group_size\":\"32\""},
  };
  for (const reader_case & tc : cases) {
    pack_fresh();
    edit_header(d / shard, tc.from, tc.to);
    if (!tc.meta_to.empty()) edit_header(d / shard, "\"group_size\":\"16\"", tc.meta_to);
    expect_error(d, weights_kind::int4, tc.needles, tc.what);
  }
  // Experts 64 wide (first scales [64,2]): the same bytes as scales 64 wide, which does not divide hidden_size 32, or
  // 32 wide, which makes a group of 1.
  c.inter = 64;
  test_util::write_tiny_model(src, c, 4);
  const reader_case wide_cases[] = {
      {"first scales wider than hidden_size", "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[64,2]",
       "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[2,64]", {shard, "missing or mis-shaped tensor '" + gate0 + "'"}},
      {"first scales give an odd group", "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[64,2]",
       "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[4,32]", {shard, "group size 1 does not divide intermediate_size or is odd"},
       "\"group_size\":\"1\""},
      {"first scales of three dimensions", "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[64,2]",
       "\"" + gate0 + "\":{\"dtype\":\"F16\",\"shape\":[64,2,1]", {shard, "missing or mis-shaped tensor '" + gate0 + "'"}},
  };
  for (const reader_case & tc : wide_cases) {
    pack_fresh();
    edit_header(d / shard, tc.from, tc.to);
    if (!tc.meta_to.empty()) edit_header(d / shard, "\"group_size\":\"16\"", tc.meta_to);
    expect_error(d, weights_kind::int4, tc.needles, tc.what);
  }
}

int main() {
  const fs::path root = test_util::temp_dir("loader");
  test_util::tiny_config c;
  config_values();
  config_defaults();
  safetensors_headers();
  misaligned_tensors(root);
  qpacked_reader(root);

  {  // A valid sharded model loads, with the config fields read.
    const fs::path d = root / "ok";
    test_util::write_tiny_model(d, c, 1, 3);
    std::string err;
    auto w = model_weights_load(d.string(), weights_kind::bf16, err);
    CHECK(w != nullptr, "valid model failed: %s", err.c_str());
    if (w) {
      CHECK(w->config.hidden_size == 32 && w->config.num_experts == 8 && w->config.head_dim == 8, "config fields");
      CHECK(w->layers.size() == 2 && w->layers[1].expert_down.size() == 8, "layer views");
      CHECK(w->files.size() == 3, "three shards mapped");
      size_t want_bytes = 0;
      for (const auto & t : test_util::tiny_tensors(c, 1)) want_bytes += t.bytes.size();
      CHECK(w->total_bytes == want_bytes, "total_bytes %zu is the bytes of every tensor (%zu)", w->total_bytes, want_bytes);
    }
    expect_error(d, weights_kind::int4, {"qpacked"}, "int4 requested on a source folder");
  }
  {  // Truncated shard: the last tensor's bytes are cut off.
    const fs::path d = root / "truncated";
    test_util::write_tiny_model(d, c, 1);
    const fs::path f = d / "model.safetensors";
    fs::resize_file(f, fs::file_size(f) - 10);
    expect_error(d, weights_kind::bf16, {"model.safetensors", "truncated", "lm_head.weight"}, "truncated file");
  }
  {  // Header that is not JSON.
    const fs::path d = root / "badjson";
    test_util::write_tiny_model(d, c, 1);
    std::string bytes = std::string(8, '\0') + "{\"a\": tru}";
    bytes[0] = 10;
    test_util::write_file(d / "model.safetensors", bytes);
    expect_error(d, weights_kind::bf16, {"model.safetensors", "header JSON"}, "bad header JSON");
  }
  {  // Header length larger than the file.
    const fs::path d = root / "badlen";
    test_util::write_tiny_model(d, c, 1);
    test_util::write_file(d / "model.safetensors", std::string("\xff\xff\x00\x00\x00\x00\x00\x00{}", 10));
    expect_error(d, weights_kind::bf16, {"model.safetensors", "header length"}, "header length past the end");
  }
  {  // A header length above 100 MiB is refused before it is read (a sparse file, so nothing is written).
    const fs::path d = root / "hugeheader";
    test_util::write_tiny_model(d, c, 1);
    const uint64_t n = (100ull << 20) + 8;
    std::string len(8, '\0');
    for (int b = 0; b < 8; ++b) len[static_cast<size_t>(b)] = static_cast<char>((n >> (8 * b)) & 0xff);
    test_util::write_file(d / "model.safetensors", len);
    fs::resize_file(d / "model.safetensors", n + 8);
    expect_error(d, weights_kind::bf16, {"model.safetensors", "header length 104857608 is implausibly large"}, "huge header length");
  }
  {  // Wrong shape of one tensor.
    const fs::path d = root / "shape";
    auto ts = test_util::tiny_tensors(c, 1);
    for (auto & t : ts)
      if (t.name == "model.layers.1.self_attn.k_proj.weight") t.shape = {16, 64};
    fs::create_directories(d);
    test_util::write_file(d / "config.json", test_util::config_json(c));
    test_util::write_file(d / "model.safetensors", test_util::safetensors_bytes(ts));
    expect_error(d, weights_kind::bf16, {"model.safetensors", "model.layers.1.self_attn.k_proj.weight", "[16,64]", "[32,32]"}, "wrong shape");
  }
  {  // Missing tensor (sharded: the message names the shard the index points to).
    const fs::path d = root / "missing";
    test_util::write_tiny_model(d, c, 1, 2);
    auto ts = test_util::tiny_tensors(c, 1);
    const size_t per = (ts.size() + 1) / 2;
    std::vector<test_util::raw_tensor> part(ts.begin(), ts.begin() + per);
    part.erase(std::remove_if(part.begin(), part.end(), [](const auto & t) { return t.name == "model.layers.0.mlp.experts.3.up_proj.weight"; }), part.end());
    test_util::write_file(d / "model-00001-of-00002.safetensors", test_util::safetensors_bytes(part));
    expect_error(d, weights_kind::bf16, {"model-00001-of-00002.safetensors", "missing tensor", "model.layers.0.mlp.experts.3.up_proj.weight"}, "missing tensor");
  }
  {  // Data offsets that do not tile the data: two experts on the same bytes, a gap before the first, bytes left over.
    const auto ts = test_util::tiny_tensors(c, 1);
    std::vector<std::pair<size_t, size_t>> tiled;
    size_t off = 0;
    for (const auto & t : ts) {
      tiled.push_back({off, off + t.bytes.size()});
      off += t.bytes.size();
    }
    size_t a = 0, b = 0;
    for (size_t i = 0; i < ts.size(); ++i) {
      if (ts[i].name == "model.layers.0.mlp.experts.0.up_proj.weight") a = i;
      if (ts[i].name == "model.layers.0.mlp.experts.1.up_proj.weight") b = i;
    }
    struct tiling_case {
      const char * what;
      std::vector<std::pair<size_t, size_t>> offsets;
      size_t data_len;
      std::vector<std::string> needles;
    };
    std::vector<tiling_case> cases;
    {  // experts.1.up_proj aliases experts.0.up_proj; every tensor after experts.1 moves down by its size
      auto o = tiled;
      const size_t sz = o[b].second - o[b].first;
      o[b] = o[a];
      for (size_t i = b + 1; i < o.size(); ++i) o[i] = {o[i].first - sz, o[i].second - sz};
      cases.push_back({"aliased experts", o, off - sz, {"model.safetensors", "inside tensor", "tile"}});
    }
    {
      auto o = tiled;
      for (auto & p : o) p = {p.first + 16, p.second + 16};
      cases.push_back({"gap before the first tensor", o, off + 16, {"model.safetensors", "not at 0"}});
    }
    cases.push_back({"bytes after the last tensor", tiled, off + 16, {"model.safetensors", std::to_string(off) + " of its " + std::to_string(off + 16)}});
    for (const auto & tc : cases) {
      const fs::path d = root / (std::string("tiling-") + std::to_string(&tc - cases.data()));
      fs::create_directories(d);
      test_util::write_file(d / "config.json", test_util::config_json(c));
      test_util::write_file(d / "model.safetensors", safetensors_with_offsets(ts, tc.offsets, tc.data_len));
      expect_error(d, weights_kind::bf16, tc.needles, tc.what);
    }
    {  // The same writer with the tiled offsets loads: the cases above fail for their offsets alone.
      const fs::path d = root / "tiling-ok";
      fs::create_directories(d);
      test_util::write_file(d / "config.json", test_util::config_json(c));
      test_util::write_file(d / "model.safetensors", safetensors_with_offsets(ts, tiled, off));
      std::string err;
      CHECK(model_weights_load(d.string(), weights_kind::bf16, err) != nullptr, "tiled offsets: %s", err.c_str());
    }
  }
  {  // Unsupported dtype.
    const fs::path d = root / "dtype";
    auto ts = test_util::tiny_tensors(c, 1);
    ts[0].dtype = "I16";
    fs::create_directories(d);
    test_util::write_file(d / "config.json", test_util::config_json(c));
    test_util::write_file(d / "model.safetensors", test_util::safetensors_bytes(ts));
    expect_error(d, weights_kind::bf16, {"model.safetensors", "model.embed_tokens.weight", "I16", "not supported"}, "unsupported dtype");
  }
  {  // A shape whose element count wraps around 2^64 (to 0 here) must not pass the size check.
    const fs::path d = root / "wrap";
    auto ts = test_util::tiny_tensors(c, 1);
    ts[0].dtype = "U8";
    ts[0].shape = {4294967296LL, 4294967296LL};
    ts[0].bytes.clear();
    fs::create_directories(d);
    test_util::write_file(d / "config.json", test_util::config_json(c));
    test_util::write_file(d / "model.safetensors", test_util::safetensors_bytes(ts));
    expect_error(d, weights_kind::bf16, {"model.safetensors", "model.embed_tokens.weight", "too large"}, "wrapping shape");
  }
  {  // Wrong architecture.
    const fs::path d = root / "arch";
    test_util::tiny_config llama = c;
    llama.model_type = "llama";
    test_util::write_tiny_model(d, llama, 1);
    std::string cfg = test_util::config_json(llama);
    cfg.replace(cfg.find("OlmoeForCausalLM"), 16, "LlamaForCausalLM");
    test_util::write_file(d / "config.json", cfg);
    expect_error(d, weights_kind::bf16, {"config.json", "(model_type 'llama', architecture 'LlamaForCausalLM')", "olmoe"},
                 "wrong model_type");
  }
  {  // A config whose layer count the tensors do not back fails at the first missing layer, sizing nothing by it.
    const fs::path d = root / "huge-layers";
    test_util::write_tiny_model(d, c, 1);
    test_util::tiny_config huge = c;
    huge.layers = 2147483647;
    test_util::write_file(d / "config.json", test_util::config_json(huge));
    expect_error(d, weights_kind::bf16, {"missing tensor 'model.layers.2.input_layernorm.weight'"}, "2147483647 layers");
  }
  {  // Without an index, a tensor in two files is ambiguous.
    const fs::path d = root / "dup-no-index";
    test_util::write_tiny_model(d, c, 1);
    test_util::rng r(9);
    test_util::write_file(d / "stale.safetensors", test_util::safetensors_bytes({test_util::make_tensor("model.norm.weight", {32}, r, 1.0f)}));
    expect_error(d, weights_kind::bf16, {"stale.safetensors", "model.safetensors", "'model.norm.weight'", "index"}, "duplicate without an index");
  }
  {  // Index entries must name files in the model folder.
    const fs::path d = root / "index-paths";
    test_util::write_tiny_model(d, c, 1, 2);
    const std::string index = read_all(d / "model.safetensors.index.json");
    const std::string shard = "model-00001-of-00002.safetensors";
    fs::copy_file(d / shard, root / shard);  // reachable through "../", so only the check can refuse it
    const std::string names[] = {"../" + shard, (root / shard).generic_string(), "sub/" + shard, "..\\\\" + shard, "C:" + shard,
                                 "..", ".", "", shard + "\\u0000x"};
    for (const std::string & bad : names) {
      std::string broken = index;
      broken.replace(broken.find(shard), shard.size(), bad);
      test_util::write_file(d / "model.safetensors.index.json", broken);
      expect_error(d, weights_kind::bf16, {"model.safetensors.index.json", "weight_map entry 'model.embed_tokens.weight'", "not a file name"},
                   ("index entry " + bad).c_str());
    }
  }
#ifndef _WIN32
  {  // A FIFO or a directory where a file should be is refused, not waited on.
    alarm(60);  // a hang fails the test instead of stalling ctest
    const fs::path d = root / "special";
    for (const char * victim : {"config.json", "model-00002-of-00002.safetensors", "model.safetensors.index.json"}) {
      test_util::write_tiny_model(d, c, 1, 2);
      fs::remove(d / victim);
      CHECK(mkfifo((d / victim).c_str(), 0600) == 0, "mkfifo %s", victim);
      expect_error(d, weights_kind::bf16, {victim, "not a regular file"}, (std::string("FIFO as ") + victim).c_str());
      fs::remove(d / victim);
      fs::create_directories(d / victim);
      expect_error(d, weights_kind::bf16, {victim, "not a regular file"}, (std::string("directory as ") + victim).c_str());
    }
    alarm(0);
  }
#endif
  {  // No config.json.
    const fs::path d = root / "noconfig";
    test_util::write_tiny_model(d, c, 1);
    fs::remove(d / "config.json");
    expect_error(d, weights_kind::bf16, {"config.json"}, "missing config");
  }
  fs::remove_all(root);
  return test_util::finish("test-loader");
}
