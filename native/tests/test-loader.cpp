// Loader error cases: each broken checkpoint must fail with a message that names the file and the tensor at fault.
// To add a case: build a tiny model, break one thing, and add an expect_error(...) line.
#include "core/model-weights.h"
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

int main() {
  const fs::path root = test_util::temp_dir("loader");
  test_util::tiny_config c;

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
    expect_error(d, weights_kind::bf16, {"config.json", "llama", "olmoe"}, "wrong model_type");
  }
  {  // No config.json.
    const fs::path d = root / "noconfig";
    test_util::write_tiny_model(d, c, 1);
    fs::remove(d / "config.json");
    expect_error(d, weights_kind::bf16, {"config.json"}, "missing config");
  }
  fs::remove_all(root);
  return test_util::finish("test-loader");
}
