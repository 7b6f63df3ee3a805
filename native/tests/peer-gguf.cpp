// Writes an OLMoE-1B-7B-shaped GGUF with random weights for llama.cpp, the GPU benchmark's peer (scripts/gpu-check.sh),
// in the representation matched to the project's: Q4_0 routed experts (4-bit, an FP16 scale per 32 weights) and F16
// attention, embeddings and output; norms and the router F32 (as llama.cpp's converter keeps them). A GPU machine has
// no Python to run ../shared/peers/olmoe_to_gguf.py on a 14 GB BF16 checkpoint in its few minutes, and speed depends
// on the shapes and formats, not on the values: random bytes as bench-gpu's model has (its Q4_0 scales and F16
// weights kept small and finite). The metadata and tensor layout follow olmoe_to_gguf.py (gguf-py's GGUFWriter).
// Usage: peer-gguf OUT.gguf [--layers N] [--small]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

enum : uint32_t { GGUF_UINT32 = 4, GGUF_FLOAT32 = 6, GGUF_STRING = 8 };
enum : uint32_t { GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2 };
constexpr uint64_t kAlign = 32;  // general.alignment's default

struct tensor {
  std::string name;
  std::vector<uint64_t> ne;  // GGML order: ne[0] innermost
  uint32_t type;
  uint64_t bytes() const {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    return type == GGML_F32 ? n * 4 : type == GGML_F16 ? n * 2 : n / 32 * 18;
  }
};

struct writer {
  std::string buf;
  void u32(uint32_t v) { buf.append(reinterpret_cast<const char *>(&v), 4); }
  void u64(uint64_t v) { buf.append(reinterpret_cast<const char *>(&v), 8); }
  void f32(float v) { buf.append(reinterpret_cast<const char *>(&v), 4); }
  void str(const std::string & s) { u64(s.size()); buf += s; }
  void kv_u32(const std::string & k, uint32_t v) { str(k); u32(GGUF_UINT32); u32(v); }
  void kv_f32(const std::string & k, float v) { str(k); u32(GGUF_FLOAT32); f32(v); }
  void kv_str(const std::string & k, const std::string & v) { str(k); u32(GGUF_STRING); str(v); }
};

uint64_t rng_state = 0x9E3779B97F4A7C15ull;
uint64_t next() {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

// Random data of a tensor, streamed in pieces: F16 about +-0.016..0.031 (bench-gpu's weights), F32 norms of 1.0 and
// a router of small values, Q4_0 blocks with a scale of 2^-12..2^-11 and random nibbles.
void write_data(std::ofstream & out, const tensor & t) {
  std::vector<char> piece;
  uint64_t left = t.bytes();
  const uint64_t unit = t.type == GGML_Q4_0 ? 18 : t.type == GGML_F16 ? 2 : 4;
  const uint64_t step = (uint64_t{1} << 24) / unit * unit;
  while (left > 0) {
    const uint64_t n = left < step ? left : step;
    piece.resize(n);
    for (uint64_t i = 0; i < n; i += unit) {
      char * p = piece.data() + i;
      if (t.type == GGML_Q4_0) {
        const uint16_t d = static_cast<uint16_t>(0x0C00 | (next() & 0x03FF));
        std::memcpy(p, &d, 2);
        const uint64_t a = next(), b = next();
        std::memcpy(p + 2, &a, 8);
        std::memcpy(p + 10, &b, 8);
      } else if (t.type == GGML_F16) {
        const uint16_t h = static_cast<uint16_t>((next() & 0x83FF) | 0x2400);
        std::memcpy(p, &h, 2);
      } else {
        const bool norm = t.ne.size() == 1;
        const float v = norm ? 1.0f : static_cast<float>(static_cast<int64_t>(next() % 2001) - 1000) * 2e-5f;
        std::memcpy(p, &v, 4);
      }
    }
    out.write(piece.data(), static_cast<std::streamsize>(n));
    left -= n;
  }
}

}  // namespace

int main(int argc, char ** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: peer-gguf OUT.gguf [--layers N] [--small]\n");
    return 2;
  }
  const std::string path = argv[1];
  int layers = 16;
  bool small = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--layers" && i + 1 < argc) layers = std::atoi(argv[++i]);
    else if (a == "--small") small = true;
  }
  // OLMoE-1B-7B (bench-gpu's shapes; --small its small model).
  const uint64_t H = small ? 128 : 2048, I = small ? 128 : 1024, E = small ? 8 : 64, K = small ? 2 : 8, V = small ? 300 : 50304;
  const uint32_t heads = small ? 2 : 16;
  std::vector<tensor> ts;
  ts.push_back({"token_embd.weight", {H, V}, GGML_F16});
  for (int l = 0; l < layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    ts.push_back({b + "attn_norm.weight", {H}, GGML_F32});
    for (const char * m : {"attn_q", "attn_k", "attn_v", "attn_output"}) ts.push_back({b + m + ".weight", {H, H}, GGML_F16});
    ts.push_back({b + "attn_q_norm.weight", {H}, GGML_F32});
    ts.push_back({b + "attn_k_norm.weight", {H}, GGML_F32});
    ts.push_back({b + "ffn_norm.weight", {H}, GGML_F32});
    ts.push_back({b + "ffn_gate_inp.weight", {H, E}, GGML_F32});
    ts.push_back({b + "ffn_down_exps.weight", {I, H, E}, GGML_Q4_0});
    ts.push_back({b + "ffn_gate_exps.weight", {H, I, E}, GGML_Q4_0});
    ts.push_back({b + "ffn_up_exps.weight", {H, I, E}, GGML_Q4_0});
  }
  ts.push_back({"output_norm.weight", {H}, GGML_F32});
  ts.push_back({"output.weight", {H, V}, GGML_F16});

  writer w;
  w.buf += "GGUF";
  w.u32(3);
  w.u64(ts.size());
  w.u64(17);  // metadata entries below
  w.kv_str("general.architecture", "olmoe");
  w.kv_str("general.name", "random-olmoe");
  w.kv_u32("general.file_type", 2);  // LlamaFileType.MOSTLY_Q4_0
  w.kv_u32("general.quantization_version", 2);
  w.kv_u32("olmoe.context_length", 4096);
  w.kv_u32("olmoe.embedding_length", static_cast<uint32_t>(H));
  w.kv_u32("olmoe.feed_forward_length", static_cast<uint32_t>(I));
  w.kv_u32("olmoe.block_count", static_cast<uint32_t>(layers));
  w.kv_u32("olmoe.attention.head_count", heads);
  w.kv_u32("olmoe.attention.head_count_kv", heads);
  w.kv_f32("olmoe.rope.freq_base", 10000.0f);
  w.kv_f32("olmoe.attention.layer_norm_rms_epsilon", 1e-5f);
  w.kv_u32("olmoe.expert_count", static_cast<uint32_t>(E));
  w.kv_u32("olmoe.expert_used_count", static_cast<uint32_t>(K));
  w.kv_u32("olmoe.vocab_size", static_cast<uint32_t>(V));
  w.kv_str("tokenizer.ggml.model", "none");
  w.kv_u32("general.alignment", static_cast<uint32_t>(kAlign));
  uint64_t offset = 0;
  for (const tensor & t : ts) {
    w.str(t.name);
    w.u32(static_cast<uint32_t>(t.ne.size()));
    for (uint64_t d : t.ne) w.u64(d);
    w.u32(t.type);
    w.u64(offset);
    offset += (t.bytes() + kAlign - 1) / kAlign * kAlign;
  }
  while (w.buf.size() % kAlign != 0) w.buf += '\0';
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary);
  if (!out) {
    std::fprintf(stderr, "peer-gguf: %s: cannot create\n", tmp.c_str());
    return 1;
  }
  out.write(w.buf.data(), static_cast<std::streamsize>(w.buf.size()));
  for (const tensor & t : ts) {
    write_data(out, t);
    const uint64_t pad = (kAlign - t.bytes() % kAlign) % kAlign;
    for (uint64_t i = 0; i < pad; ++i) out.put('\0');
  }
  out.close();
  if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "peer-gguf: %s: write failed\n", path.c_str());
    return 1;
  }
  std::printf("wrote %s: %d layers, %.2f GB\n", path.c_str(), layers, static_cast<double>(offset + w.buf.size()) / 1e9);
  return 0;
}
