// The qpacked-v2 packer: streams a source checkpoint tensor by tensor from the mapped shards into output shards
// (planned up front so each header is written first), converting rows in parallel.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <stdexcept>

#include "core/json.h"
#include "core/mapped-file.h"
#include "core/model-weights.h"
#include "core/safetensors.h"
#include "core/thread-pool.h"
#include "quant/qpacked.h"
#include "rt/rt-runtime.h"

namespace fs = std::filesystem;

namespace rt {

namespace {

struct src_tensor {
  safetensors_entry entry;
  size_t file = 0;  // index into the mapped shards
  bool expert = false;
};

struct out_tensor {
  std::string name;
  dtype type;
  std::vector<int64_t> shape;
  size_t nbytes = 0;
  size_t offset = 0;  // within the shard's data section
};

struct out_shard {
  std::string name;
  std::vector<size_t> sources;  // indexes into the source list, in write order
  std::vector<out_tensor> tensors;
  size_t data_bytes = 0;
};

bool write_atomic(const std::string & path, const std::string & data, std::string & error) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) { error = tmp + ": cannot create"; return false; }
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!f) { error = tmp + ": write failed"; return false; }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) { error = path + ": cannot rename from " + tmp + " (" + ec.message() + ")"; return false; }
  return true;
}

std::string shape_json(const std::vector<int64_t> & s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "]";
}

// Largest magnitudes the packed formats hold: FP16 for non-routed tensors, and for a 4-bit group 64 x FP16 max (its
// FP16 scale is about amax / 100, so this leaves a margin). Anything beyond (or NaN / infinite) would be written as
// inf or garbage without a word.
constexpr float kF16Max = 65504.0f;
constexpr float kInt4Max = 64.0f * kF16Max;

/** Throws naming the tensor and the element when `row` holds a value the target format cannot store. */
void check_row(const float * row, int64_t cols, int64_t r, float limit, const std::string & path, const std::string & name) {
  for (int64_t c = 0; c < cols; ++c) {
    const float v = row[c];
    if (std::fabs(v) <= limit) continue;  // false for NaN too
    char value[32];
    std::snprintf(value, sizeof value, "%g", static_cast<double>(v));
    const std::string where = path + ": tensor '" + name + "' [" + std::to_string(r) + ", " + std::to_string(c) + "] = " + value;
    if (!std::isfinite(v)) throw std::runtime_error(where + " is not a finite number; the checkpoint is damaged");
    throw std::runtime_error(where + (limit == kF16Max ? " is outside the FP16 range (|x| <= 65504) of the packed format"
                                                       : " is too large for 4-bit codes with FP16 group scales (|x| <= 4192256)"));
  }
}

std::string pad5(size_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%05zu", v);
  return buf;
}

// `code` says what kind of failure `error` describes; it stays io_error unless a step sets another.
bool pack_folder(const pack_options & opt, const pack_progress & progress, const std::atomic<bool> * cancel,
                 const pack_shard_done & on_shard, pack_result & result, std::string & error, rt_status & code) {
  result = pack_result{};
  code = rt_status::model_invalid;
  const fs::path src(opt.src_dir), dst(opt.dst_dir);
  // The source must pass the loader's checks (config, index, every tensor and shape the model needs), and what is
  // packed is the loader's choice of tensors: where the index maps a name to one shard, copies in other shards are
  // stale and skipped. Only validated here, so misaligned tensors need no aligned copies (rows are read with memcpy).
  const std::unique_ptr<model_weights> w = model_weights_load(opt.src_dir, weights_kind::bf16, error, false);
  if (!w) return false;
  const bool has_index = fs::exists(src / "model.safetensors.index.json");

  std::vector<std::string> source_paths;
  std::vector<src_tensor> sources;
  uint64_t total = 0;
  for (size_t f = 0; f < w->files.size(); ++f) {
    const mapped_file & mf = *w->files[f];
    const std::string & path = mf.path();
    safetensors_header h;
    if (!safetensors_parse(mf.data(), mf.size(), path, h, error)) return false;
    std::sort(h.tensors.begin(), h.tensors.end(), [](const safetensors_entry & a, const safetensors_entry & b) { return a.begin < b.begin; });
    for (auto & e : h.tensors) {
      const tensor_view * chosen = w->find(e.name);
      if (!chosen || chosen->file != path) continue;
      src_tensor s;
      s.expert = qpacked_is_expert_weight(e.name);
      if (e.type == dtype::u8) { error = path + ": tensor '" + e.name + "' has dtype U8; the source must hold BF16/F16/F32 weights"; return false; }
      if (s.expert && e.shape.size() != 2) { error = path + ": expert tensor '" + e.name + "' is not a matrix"; return false; }
      s.entry = std::move(e);
      s.file = f;
      total += s.entry.end - s.entry.begin;
      sources.push_back(std::move(s));
    }
    source_paths.push_back(path);
    result.source_files.push_back(fs::path(path).filename().string());
  }

  std::vector<int64_t> ins;
  for (const auto & s : sources) if (s.expert) ins.push_back(s.entry.shape[1]);
  if (ins.empty()) { error = opt.src_dir + ": no routed expert tensors (model.layers.L.mlp.experts.E.*_proj.weight) found"; return false; }
  int group = opt.group_size;
  auto divides_all = [&](int g) { for (int64_t in : ins) if (in % g != 0) return false; return true; };
  if (group == 0) {
    for (int g : {32, 16, 8}) if (divides_all(g)) { group = g; break; }
    if (group == 0) { error = opt.src_dir + ": no group size of 32, 16 or 8 divides every expert input width"; return false; }
  } else if (group < 2 || group % 2 != 0 || !divides_all(group)) {
    code = rt_status::invalid_request;
    error = "group size " + std::to_string(group) + " must be even and divide every expert input width";
    return false;
  }
  result.group_size = group;

  // Plan shards.
  std::vector<out_shard> shards(1);
  for (size_t i = 0; i < sources.size(); ++i) {
    const safetensors_entry & e = sources[i].entry;
    std::vector<out_tensor> outs;
    if (sources[i].expert) {
      const std::string base = e.name.substr(0, e.name.size() - std::string(".weight").size());
      const int64_t rows = e.shape[0], in = e.shape[1];
      if (rows * (in / 2) % 2 != 0) {
        error = source_paths[sources[i].file] + ": expert tensor '" + e.name + "' of shape " + shape_json(e.shape) +
                " packs to an odd number of 4-bit code bytes (" + std::to_string(rows * (in / 2)) +
                "), which would leave the FP16 tensor after it misaligned; qpacked-v2 needs an even row count or an "
                "input width that is a multiple of 4";
        return false;
      }
      outs.push_back({base + ".qweight", dtype::u8, {rows, in / 2}, static_cast<size_t>(rows * (in / 2)), 0});
      outs.push_back({base + ".scales", dtype::f16, {rows, in / group}, static_cast<size_t>(rows * (in / group) * 2), 0});
    } else {
      int64_t n = 1;
      for (int64_t d : e.shape) n *= d;
      outs.push_back({e.name, dtype::f16, e.shape, static_cast<size_t>(n * 2), 0});
    }
    size_t add = 0;
    for (const auto & o : outs) add += o.nbytes;
    if (shards.back().data_bytes > 0 && shards.back().data_bytes + add > opt.shard_bytes) shards.emplace_back();
    out_shard & sh = shards.back();
    sh.sources.push_back(i);
    for (auto & o : outs) {
      o.offset = sh.data_bytes;
      sh.data_bytes += o.nbytes;
      sh.tensors.push_back(std::move(o));
    }
  }
  code = rt_status::io_error;
  std::error_code ec;
  fs::create_directories(dst, ec);
  if (ec) { error = opt.dst_dir + ": cannot create (" + ec.message() + ")"; return false; }
  fs::remove(dst / "horizon-manifest.json", ec);

  thread_pool pool(opt.threads);
  uint64_t done = 0;
  if (progress) progress(0, total);
  std::vector<uint8_t> qbuf;   // INT4 bytes of an expert
  std::vector<uint16_t> hbuf;  // FP16 bits: an expert's scales or a whole non-routed tensor
  std::string weight_map;
  uint64_t total_size = 0;
  for (size_t si = 0; si < shards.size(); ++si) {
    out_shard & sh = shards[si];
    sh.name = "model-qpacked-" + pad5(si + 1) + "-of-" + pad5(shards.size()) + ".safetensors";
    std::string header = std::string("{\"__metadata__\":{\"format\":\"") + kQpackedFormat + "\",\"group_size\":\"" +
                         std::to_string(group) + "\",\"codebook\":\"" + kQpackedCodebook + "\"}";
    for (const auto & o : sh.tensors) {
      header += "," + json_quote(o.name) + ":{\"dtype\":\"" + dtype_name(o.type) + "\",\"shape\":" + shape_json(o.shape) +
                ",\"data_offsets\":[" + std::to_string(o.offset) + "," + std::to_string(o.offset + o.nbytes) + "]}";
      weight_map += std::string(weight_map.empty() ? "" : ",\n    ") + json_quote(o.name) + ": " + json_quote(sh.name);
      total_size += o.nbytes;
    }
    header += "}";
    while (header.size() % 8 != 0) header += ' ';
    const std::string final_path = (dst / sh.name).string();
    const std::string tmp_path = final_path + ".tmp";
    std::FILE * fp = std::fopen(tmp_path.c_str(), "wb");
    if (!fp) { error = tmp_path + ": cannot create"; return false; }
    auto fail = [&](const std::string & msg) {
      std::fclose(fp);
      fs::remove(tmp_path, ec);
      error = msg;
      return false;
    };
    unsigned char len8[8];
    uint64_t hl = header.size();
    for (int b = 0; b < 8; ++b) len8[b] = static_cast<unsigned char>((hl >> (8 * b)) & 0xff);
    if (std::fwrite(len8, 1, 8, fp) != 8 || std::fwrite(header.data(), 1, header.size(), fp) != header.size())
      return fail(tmp_path + ": write failed");
    for (size_t idx : sh.sources) {
      if (cancel && cancel->load()) {
        code = rt_status::cancelled;
        return fail("pack cancelled");
      }
      const src_tensor & s = sources[idx];
      const safetensors_entry & e = s.entry;
      const unsigned char * base = w->files[s.file]->data() + e.begin;
      const std::string & src_path = source_paths[s.file];
      const int64_t cols = e.shape.empty() ? 1 : e.shape.back();
      const int64_t rows = cols == 0 ? 0 : static_cast<int64_t>((e.end - e.begin) / dtype_size(e.type)) / cols;
      auto to_f32 = [&](int64_t r, float * out) {
        const unsigned char * p = base + static_cast<size_t>(r * cols) * dtype_size(e.type);
        if (e.type == dtype::f32) {
          std::memcpy(out, p, static_cast<size_t>(cols) * 4);
        } else if (e.type == dtype::bf16) {
          for (int64_t c = 0; c < cols; ++c) {
            uint16_t h;
            std::memcpy(&h, p + c * 2, 2);
            out[c] = f32_from_bf16(h);
          }
        } else {
          for (int64_t c = 0; c < cols; ++c) {
            uint16_t h;
            std::memcpy(&h, p + c * 2, 2);
            out[c] = f32_from_fp16(h);
          }
        }
      };
      // Each row is widened to FP32, range-checked for its target format, then written as INT4 + scales or FP16.
      const size_t qbytes = s.expert ? static_cast<size_t>(rows * (cols / 2)) : 0;
      const size_t hcount = static_cast<size_t>(s.expert ? rows * (cols / group) : rows * cols);
      try {
        qbuf.resize(qbytes);
        hbuf.resize(hcount);
      } catch (const std::bad_alloc &) {
        code = rt_status::out_of_memory;
        return fail(src_path + ": cannot allocate " + std::to_string(qbytes + 2 * hcount) + " bytes for converting tensor '" +
                    e.name + "'");
      }
      std::function<void(int64_t, const float *)> emit_row;
      if (s.expert) {
        uint8_t * q = qbuf.data();
        uint16_t * sc = hbuf.data();
        emit_row = [=](int64_t r, const float * row) {
          qpacked_quantize_row(row, static_cast<int>(cols), group, q + r * (cols / 2), sc + r * (cols / group));
        };
      } else {
        uint16_t * out = hbuf.data();
        emit_row = [=](int64_t r, const float * row) {
          for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = fp16_from_f32(row[c]);
        };
      }
      const float limit = s.expert ? kInt4Max : kF16Max;
      try {
        pool.parallel_for(rows, [&](int64_t r0, int64_t r1) {
          std::vector<float> row(static_cast<size_t>(cols));
          for (int64_t r = r0; r < r1; ++r) {
            to_f32(r, row.data());
            check_row(row.data(), cols, r, limit, src_path, e.name);
            emit_row(r, row.data());
          }
        });
      } catch (const std::bad_alloc & ex) {
        code = rt_status::out_of_memory;
        return fail(ex.what());
      } catch (const std::exception & ex) {
        code = rt_status::model_invalid;  // check_row: a weight the format cannot hold
        return fail(ex.what());
      }
      if ((!qbuf.empty() && std::fwrite(qbuf.data(), 1, qbuf.size(), fp) != qbuf.size()) ||
          (!hbuf.empty() && std::fwrite(hbuf.data(), 2, hbuf.size(), fp) != hbuf.size()))
        return fail(tmp_path + ": write failed (disk full?)");
      done += e.end - e.begin;
      if (progress) progress(done, total);
    }
    if (std::fclose(fp) != 0) { fs::remove(tmp_path, ec); error = tmp_path + ": close failed"; return false; }
    fs::rename(tmp_path, final_path, ec);
    if (ec) { error = final_path + ": cannot rename from " + tmp_path + " (" + ec.message() + ")"; return false; }
    result.output_files.push_back(sh.name);
    if (on_shard) on_shard(sh.name);
  }
  std::vector<uint8_t>().swap(qbuf);
  std::vector<uint16_t>().swap(hbuf);

  // The checkpoint's metadata, so that the packed folder runs on its own: chat_template.jinja too, which the chat
  // tokenizer prefers to tokenizer_config.json's template (as Transformers does).
  for (const char * name : {"config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json",
                            "chat_template.jinja"}) {
    const fs::path from = src / name;
    if (!fs::exists(from)) continue;
    std::string text;
    if (!read_regular_file(from.string(), text, error)) return false;
    if (!write_atomic((dst / name).string(), text, error)) return false;
    result.source_files.push_back(name);
    result.output_files.push_back(name);
  }
  if (has_index) result.source_files.push_back("model.safetensors.index.json");
  const std::string index = "{\n  \"metadata\": {\"total_size\": " + std::to_string(total_size) + ", \"format\": \"" + kQpackedFormat +
                            "\", \"group_size\": " + std::to_string(group) + ", \"codebook\": \"" + kQpackedCodebook + "\"},\n  \"weight_map\": {\n    " + weight_map + "\n  }\n}\n";
  if (!write_atomic((dst / "model.safetensors.index.json").string(), index, error)) return false;
  result.output_files.push_back("model.safetensors.index.json");
  result.source_bytes = total;
  return true;
}

}  // namespace

bool rt_qpacked_pack(const pack_options & options, const pack_progress & progress, const std::atomic<bool> * cancel,
                     pack_result & result, rt_error & error, const pack_shard_done & on_shard) {
  error = rt_error{};
  std::string message;
  rt_status code = rt_status::io_error;
  if (pack_folder(options, progress, cancel, on_shard, result, message, code)) return true;
  error = rt_error{code, -1, message};
  return false;
}

}  // namespace rt
