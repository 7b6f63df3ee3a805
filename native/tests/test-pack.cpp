// The qpacked-v1 packer's edges: group size rules, cancellation (no temp or partial shard left, no index), and
// loading a packed folder with a missing INT4 tensor. To add a case, add a block to main().
#include <atomic>

#include "core/model-weights.h"
#include "rt/rt-runtime.h"
#include "test-helpers.h"

using namespace rt;
namespace fs = std::filesystem;

static bool pack(const fs::path & src, const fs::path & dst, int group, std::string & err, const std::atomic<bool> * cancel = nullptr,
                 const pack_progress & progress = nullptr, pack_result * out = nullptr) {
  pack_options o;
  o.src_dir = src.string();
  o.dst_dir = dst.string();
  o.group_size = group;
  o.threads = 2;
  o.shard_bytes = 30000;
  pack_result r;
  const bool ok = rt_qpacked_pack(o, progress, cancel, r, err);
  if (out) *out = r;
  return ok;
}

int main() {
  const fs::path root = test_util::temp_dir("pack");
  test_util::tiny_config c;
  c.hidden = 48;  // expert widths 48 and 16: default group 16
  c.heads = 4;
  test_util::write_tiny_model(root / "src", c, 3, 2);
  std::string err;

  pack_result r;
  CHECK(pack(root / "src", root / "g16", 0, err, nullptr, nullptr, &r), "default pack: %s", err.c_str());
  CHECK(r.group_size == 16, "default group is the largest of 128..8 dividing 48 and 16, got %d", r.group_size);
  CHECK(pack(root / "src", root / "g8", 8, err, nullptr, nullptr, &r) && r.group_size == 8, "--group-size 8");
  CHECK(!pack(root / "src", root / "g32", 32, err) && err.find("group size 32") != std::string::npos, "32 does not divide 48: %s", err.c_str());
  CHECK(!pack(root / "src", root / "g3", 3, err) && err.find("even") != std::string::npos, "odd group refused: %s", err.c_str());

  {  // Cancel after the first tensor: nothing half-written stays behind.
    std::atomic<bool> cancel{false};
    int calls = 0;
    const bool ok = pack(root / "src", root / "cancelled", 0, err, &cancel, [&](uint64_t, uint64_t) {
      if (++calls == 2) cancel.store(true);
    });
    CHECK(!ok && err.find("cancelled") != std::string::npos, "cancel reported: %s", err.c_str());
    for (const auto & e : fs::directory_iterator(root / "cancelled")) {
      const std::string name = e.path().filename().string();
      CHECK(name.find(".tmp") == std::string::npos, "temp file left: %s", name.c_str());
    }
    CHECK(!fs::exists(root / "cancelled" / "model.safetensors.index.json"), "no index after a cancelled pack");
  }
  {  // Values the packed formats cannot hold fail the pack, naming the shard, tensor and element; no output is left.
    struct bad_case { const char * tensor; float value; const char * expect; };
    const bad_case cases[] = {
        {"model.layers.1.mlp.experts.2.up_proj.weight", std::nanf(""), "is not a finite number"},
        {"model.layers.0.mlp.experts.0.down_proj.weight", 1e6f, "too large for INT4"},
        {"model.layers.0.self_attn.q_proj.weight", 70000.0f, "outside the FP16 range"},
    };
    for (const bad_case & bc : cases) {
      std::vector<test_util::raw_tensor> ts = test_util::tiny_tensors(c, 3);
      bool planted = false;
      for (auto & t : ts) {
        if (t.name != bc.tensor) continue;
        const uint16_t b = test_util::bf16_from_f32(bc.value);
        std::memcpy(t.bytes.data() + 2 * (t.shape.back() + 5), &b, 2);  // row 1, column 5
        planted = true;
      }
      CHECK(planted, "tensor %s exists in the tiny model", bc.tensor);
      const fs::path bad = root / "bad-src";
      fs::remove_all(bad);
      fs::create_directories(bad);
      test_util::write_file(bad / "config.json", test_util::config_json(c));
      test_util::write_file(bad / "model.safetensors", test_util::safetensors_bytes(ts));
      const bool ok = pack(bad, root / "bad-out", 0, err);
      const std::string want = std::string("model.safetensors: tensor '") + bc.tensor + "' [1, 5] = ";
      CHECK(!ok && err.find(want) != std::string::npos && err.find(bc.expect) != std::string::npos, "%s: %s", bc.tensor, err.c_str());
      CHECK(!fs::exists(root / "bad-out" / "model.safetensors.index.json"), "no index after a refused pack");
      for (const auto & e : fs::directory_iterator(root / "bad-out"))
        CHECK(e.path().extension() != ".tmp", "temp file left: %s", e.path().string().c_str());
    }
  }
  {  // A packed folder missing one INT4 tensor fails to load, naming it.
    const fs::path d = root / "g16";
    std::string text;
    {
      std::ifstream f(d / "model.safetensors.index.json");
      std::stringstream ss;
      ss << f.rdbuf();
      text = ss.str();
    }
    const std::string victim = "\"model.layers.1.mlp.experts.2.up_proj.scales\"";
    const size_t at = text.find(victim);
    CHECK(at != std::string::npos, "index lists %s", victim.c_str());
    if (at != std::string::npos) {
      const size_t end = text.find('\n', at);
      text.erase(at, end - at + 1);
      // One entry per line and this one is not the last (model.norm follows), so the JSON stays valid.
      test_util::write_file(d / "model.safetensors.index.json", text);
      auto w = model_weights_load(d.string(), weights_kind::int4, err);
      CHECK(!w && err.find("model.layers.1.mlp.experts.2.up_proj.scales") != std::string::npos && err.find("missing") != std::string::npos,
            "missing scales named: %s", err.c_str());
    }
  }
  fs::remove_all(root);
  return test_util::finish("test-pack");
}
