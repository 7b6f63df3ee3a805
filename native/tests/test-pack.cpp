// The qpacked-v2 packer's edges: group size rules, shards reported as they are done, cancellation (no temp or partial
// shard left, no index), sources it must refuse, stale copies the index does not point to, and loading a packed folder
// with a missing INT4 tensor.
// To add a case, add a block to main() (or a row to the refused sources).
#ifndef _WIN32
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <functional>

#include "core/mapped-file.h"
#include "core/model-weights.h"
#include "core/safetensors.h"
#include "rt/rt-runtime.h"
#include "test-helpers.h"

using namespace rt;
namespace fs = std::filesystem;

static bool pack(const fs::path & src, const fs::path & dst, int group, rt_error & err, const std::atomic<bool> * cancel = nullptr,
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

using source_files = std::vector<std::pair<std::string, std::vector<test_util::raw_tensor>>>;

// Writes config.json, one safetensors file per entry of `files` and, when `index` is not empty, an index of those
// (tensor, file) pairs.
static void write_source(const fs::path & d, const test_util::tiny_config & c, const source_files & files,
                         const std::vector<std::pair<std::string, std::string>> & index) {
  fs::remove_all(d);
  fs::create_directories(d);
  test_util::write_file(d / "config.json", test_util::config_json(c));
  for (const auto & [name, ts] : files) test_util::write_file(d / name, test_util::safetensors_bytes(ts));
  if (index.empty()) return;
  std::string wm;
  for (const auto & [t, f] : index) wm += (wm.empty() ? "" : ",") + std::string("\"") + t + "\":\"" + f + "\"";
  test_util::write_file(d / "model.safetensors.index.json", "{\"metadata\":{},\"weight_map\":{" + wm + "}}");
}

// The tiny model's tensors in a.safetensors (first half) and b.safetensors, with an index.
static void split_source(const std::vector<test_util::raw_tensor> & ts, source_files & files,
                         std::vector<std::pair<std::string, std::string>> & index) {
  files = {{"a.safetensors", {}}, {"b.safetensors", {}}};
  index.clear();
  for (size_t i = 0; i < ts.size(); ++i) {
    auto & f = files[i < ts.size() / 2 ? 0 : 1];
    f.second.push_back(ts[i]);
    index.push_back({ts[i].name, f.first});
  }
}

int main() {
  const fs::path root = test_util::temp_dir("pack");
  test_util::tiny_config c;
  c.hidden = 48;  // expert widths 48 and 16: default group 16
  c.heads = 4;
  test_util::write_tiny_model(root / "src", c, 3, 2);
  rt_error err;

  pack_result r;
  CHECK(pack(root / "src", root / "g16", 0, err, nullptr, nullptr, &r), "default pack: %s", err.message.c_str());
  CHECK(r.group_size == 16, "default group is the largest of 128..8 dividing 48 and 16, got %d", r.group_size);
  CHECK(pack(root / "src", root / "g8", 8, err, nullptr, nullptr, &r) && r.group_size == 8, "--group-size 8");
  CHECK(!pack(root / "src", root / "g32", 32, err) && err.message.find("group size 32") != std::string::npos, "32 does not divide 48: %s", err.message.c_str());
  CHECK(!pack(root / "src", root / "g3", 3, err) && err.message.find("even") != std::string::npos &&
            err.code == rt_status::invalid_request,
        "odd group refused: %s", err.message.c_str());

  {  // A shard that cannot be created (a folder holds its temp name) fails the pack, naming it; no index is written.
    const fs::path blocked = root / "blocked";
    const std::string first = r.output_files.empty() ? std::string("none") : r.output_files[0];
    fs::create_directories(blocked / (first + ".tmp"));
    CHECK(!pack(root / "src", blocked, 8, err) && err.message.find(first + ".tmp: cannot create") != std::string::npos &&
              err.code == rt_status::io_error,
          "uncreatable shard: %s", err.message.c_str());
    CHECK(!fs::exists(blocked / "model.safetensors.index.json") && !fs::exists(blocked / first), "nothing published");
  }
  {  // Each output shard is reported once it is in place under its own name, in order; nothing writes it after.
    pack_options o;
    o.src_dir = (root / "src").string();
    o.dst_dir = (root / "reported").string();
    o.threads = 2;
    o.shard_bytes = 30000;
    std::vector<std::string> reported;
    std::vector<uintmax_t> sizes_then;
    bool in_place = true;
    pack_result pr;
    const bool ok = rt_qpacked_pack(o, nullptr, nullptr, pr, err, [&](const std::string & name) {
      const fs::path f = root / "reported" / name;
      in_place = in_place && fs::is_regular_file(f) && !fs::exists(root / "reported" / (name + ".tmp"));
      reported.push_back(name);
      sizes_then.push_back(fs::is_regular_file(f) ? fs::file_size(f) : 0);
    });
    CHECK(ok, "pack reporting shards: %s", err.message.c_str());
    std::vector<std::string> shards;
    for (const auto & f : pr.output_files)
      if (f.rfind("model-qpacked-", 0) == 0) shards.push_back(f);
    CHECK(shards.size() >= 2 && reported == shards, "%zu shards reported, %zu written (want the same names, in order)", reported.size(),
          shards.size());
    CHECK(in_place, "a shard was reported before it was renamed into place");
    bool unchanged = true;
    for (size_t i = 0; i < reported.size(); ++i) unchanged = unchanged && fs::file_size(root / "reported" / reported[i]) == sizes_then[i];
    CHECK(unchanged, "a shard's size changed after it was reported");
  }
  {  // The metadata goes with the pack, chat_template.jinja included: the packed folder alone renders the same prompt.
    const std::string jinja = "{% for m in messages %}<|user|>{{ m.content }}{% endfor %}<|assistant|>";
    test_util::write_file(root / "src" / "chat_template.jinja", jinja);
    pack_result pr;
    CHECK(pack(root / "src", root / "with-jinja", 0, err, nullptr, nullptr, &pr), "pack with a template: %s", err.message.c_str());
    std::ifstream in(root / "with-jinja" / "chat_template.jinja", std::ios::binary);
    const std::string copied((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(copied == jinja, "chat_template.jinja copied into the packed folder (got %zu bytes)", copied.size());
    const auto has = [](const std::vector<std::string> & v, const char * n) { return std::find(v.begin(), v.end(), n) != v.end(); };
    CHECK(has(pr.source_files, "chat_template.jinja") && has(pr.output_files, "chat_template.jinja"),
          "chat_template.jinja is among the sources read and the files written");
    fs::remove(root / "src" / "chat_template.jinja");
  }
  {  // Cancel after the first tensor: nothing half-written stays behind.
    std::atomic<bool> cancel{false};
    int calls = 0;
    const bool ok = pack(root / "src", root / "cancelled", 0, err, &cancel, [&](uint64_t, uint64_t) {
      if (++calls == 2) cancel.store(true);
    });
    CHECK(!ok && err.message.find("cancelled") != std::string::npos && err.code == rt_status::cancelled, "cancel reported: %s", err.message.c_str());
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
        {"model.layers.0.mlp.experts.0.down_proj.weight", 5e6f, "too large for 4-bit codes"},
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
      CHECK(!ok && err.message.find(want) != std::string::npos && err.message.find(bc.expect) != std::string::npos &&
                err.code == rt_status::model_invalid,
            "%s: %s", bc.tensor, err.message.c_str());
      CHECK(!fs::exists(root / "bad-out" / "model.safetensors.index.json"), "no index after a refused pack");
      for (const auto & e : fs::directory_iterator(root / "bad-out"))
        CHECK(e.path().extension() != ".tmp", "temp file left: %s", e.path().string().c_str());
    }
  }
  {  // The largest magnitudes each format holds pack: 65504 as FP16, 64 x 65504 in a 4-bit group (a finite scale).
    std::vector<test_util::raw_tensor> ts = test_util::tiny_tensors(c, 3);
    for (auto & t : ts) {
      t = test_util::to_f32(t);
      const float v = t.name == "model.layers.0.self_attn.q_proj.weight" ? -65504.0f
                      : t.name == "model.layers.0.mlp.experts.1.up_proj.weight" ? 4192256.0f : 0.0f;
      if (v != 0.0f) std::memcpy(t.bytes.data() + 4 * 3, &v, 4);
    }
    const fs::path lim = root / "limits-src";
    fs::remove_all(lim);
    fs::create_directories(lim);
    test_util::write_file(lim / "config.json", test_util::config_json(c));
    test_util::write_file(lim / "model.safetensors", test_util::safetensors_bytes(ts));
    CHECK(pack(lim, root / "limits-out", 0, err), "values at the format limits pack: %s", err.message.c_str());
    auto w = model_weights_load((root / "limits-out").string(), weights_kind::int4, err.message);
    const tensor_view * q = w ? w->find("model.layers.0.self_attn.q_proj.weight") : nullptr;
    const tensor_view * s = w ? w->find("model.layers.0.mlp.experts.1.up_proj.scales") : nullptr;
    const tensor_view * u = w ? w->find("model.layers.0.mlp.experts.1.up_proj.qweight") : nullptr;
    float back[16] = {};
    if (s && u) qpacked_dequantize_row(static_cast<const uint8_t *>(u->data), static_cast<const uint16_t *>(s->data), 16, 16, back);
    CHECK(q && s && u && static_cast<const uint16_t *>(q->data)[3] == 0xFBFF && std::fabs(back[3] - 4192256.0f) < 0.01f * 4192256.0f,
          "-65504 packs to 0xFBFF and 4192256 to a 4-bit code within 1%% (%g; %s)", back[3], err.message.c_str());
  }
  {  // A stale copy in a shard the index does not point to is not packed: the indexed one is, once.
    auto ts = test_util::tiny_tensors(c, 3);
    source_files files;
    std::vector<std::pair<std::string, std::string>> index;
    split_source(ts, files, index);
    test_util::rng r(77);
    files[0].second.push_back(test_util::make_tensor("model.norm.weight", {c.hidden}, r, 1.0f, -5.0f));
    write_source(root / "stale-src", c, files, index);
    pack_result pr;
    CHECK(pack(root / "stale-src", root / "stale-out", 0, err, nullptr, nullptr, &pr), "stale copy: %s", err.message.c_str());
    int listed = 0;
    for (const auto & f : pr.output_files) {
      if (f.find("model-qpacked-") != 0) continue;
      auto mf = mapped_file::open((root / "stale-out" / f).string(), err.message);
      safetensors_header h;
      CHECK(mf && safetensors_parse(mf->data(), mf->size(), f, h, err.message), "parse %s: %s", f.c_str(), err.message.c_str());
      for (const auto & t : h.tensors) listed += t.name == "model.norm.weight";
    }
    CHECK(listed == 1, "model.norm.weight is in the packed shards %d times", listed);
    auto w = model_weights_load((root / "stale-out").string(), weights_kind::int4, err.message);
    const test_util::raw_tensor * indexed = nullptr;
    for (const auto & t : ts) if (t.name == "model.norm.weight") indexed = &t;
    const tensor_view * packed = w ? w->find("model.norm.weight") : nullptr;
    bool same = packed && indexed && packed->numel() == c.hidden;
    for (int i = 0; same && i < c.hidden; ++i) {
      uint16_t b, h;
      std::memcpy(&b, indexed->bytes.data() + 2 * i, 2);
      std::memcpy(&h, static_cast<const uint8_t *>(packed->data) + 2 * i, 2);
      same = h == fp16_from_f32(f32_from_bf16(b));
    }
    CHECK(same, "the packed model.norm.weight is the indexed copy (%s)", err.message.c_str());
  }
  {  // Sources the packer must refuse, with the loader's message where the loader would refuse them.
    struct refused_case {
      const char * what;
      int group;
      std::function<void(const fs::path &)> build;
      std::vector<std::string> needles;
    };
    const std::string victim = "model.layers.1.mlp.experts.4.up_proj.weight";
    std::vector<refused_case> cases;
    cases.push_back({"an expert missing", 0, [&](const fs::path & d) {
                       auto ts = test_util::tiny_tensors(c, 3);
                       ts.erase(std::remove_if(ts.begin(), ts.end(), [&](const auto & t) { return t.name == victim; }), ts.end());
                       source_files files;
                       std::vector<std::pair<std::string, std::string>> index;
                       split_source(ts, files, index);
                       write_source(d, c, files, index);
                     }, {"missing tensor '" + victim + "'"}});
    cases.push_back({"an index entry outside the folder", 0, [&](const fs::path & d) {
                       source_files files;
                       std::vector<std::pair<std::string, std::string>> index;
                       split_source(test_util::tiny_tensors(c, 3), files, index);
                       for (auto & e : index) if (e.second == "a.safetensors") e.second = "../a.safetensors";
                       write_source(d, c, files, index);
                       fs::copy_file(d / "a.safetensors", d.parent_path() / "a.safetensors", fs::copy_options::overwrite_existing);
                     }, {"model.safetensors.index.json", "\"../a.safetensors\"", "not a file name"}});
    cases.push_back({"an expert of an odd number of INT4 bytes", 2, [&](const fs::path & d) {
                       auto ts = test_util::tiny_tensors(c, 3);
                       test_util::rng r(5);
                       ts.push_back(test_util::make_tensor("model.layers.0.mlp.experts.99.gate_proj.weight", {1, 2}, r, 1.0f));
                       write_source(d, c, {{"model.safetensors", ts}}, {});
                     }, {"model.safetensors", "'model.layers.0.mlp.experts.99.gate_proj.weight'", "odd number of 4-bit code bytes"}});
    cases.push_back({"an expert that is not a matrix", 0, [&](const fs::path & d) {
                       auto ts = test_util::tiny_tensors(c, 3);
                       test_util::rng r(6);
                       ts.push_back(test_util::make_tensor("model.layers.0.mlp.experts.99.gate_proj.weight", {48}, r, 1.0f));
                       write_source(d, c, {{"model.safetensors", ts}}, {});
                     }, {"model.safetensors", "expert tensor 'model.layers.0.mlp.experts.99.gate_proj.weight' is not a matrix"}});
#ifndef _WIN32
    cases.push_back({"a FIFO as tokenizer.json", 0, [&](const fs::path & d) {
                       write_source(d, c, {{"model.safetensors", test_util::tiny_tensors(c, 3)}}, {});
                       CHECK(mkfifo((d / "tokenizer.json").c_str(), 0600) == 0, "mkfifo");
                     }, {"tokenizer.json", "not a regular file"}});
    alarm(60);  // a hang fails the test instead of stalling ctest
#endif
    for (const refused_case & tc : cases) {
      const fs::path d = root / "refused" / "src";
      fs::remove_all(root / "refused");
      tc.build(d);
      const bool ok = pack(d, root / "refused" / "out", tc.group, err);
      CHECK(!ok, "%s: packed", tc.what);
      for (const auto & n : tc.needles) CHECK(err.message.find(n) != std::string::npos, "%s: message '%s' lacks '%s'", tc.what, err.message.c_str(), n.c_str());
      CHECK(!fs::exists(root / "refused" / "out" / "model.safetensors.index.json"), "%s: no index after a refused pack", tc.what);
      std::printf("%s -> %s\n", tc.what, err.message.c_str());
    }
#ifndef _WIN32
    alarm(0);
#endif
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
      auto w = model_weights_load(d.string(), weights_kind::int4, err.message);
      CHECK(!w && err.message.find("model.layers.1.mlp.experts.2.up_proj.scales") != std::string::npos && err.message.find("missing") != std::string::npos,
            "missing scales named: %s", err.message.c_str());
    }
  }
  fs::remove_all(root);
  return test_util::finish("test-pack");
}
