// cpu_attention_heads_f16 (the CPU backend's attention over its FP16 KV cache) against ref::attention_head, head by
// head, on the same FP16 values widened to float, on every path this machine has: AVX-512 and AVX2 (head_dim
// 64/128/256) and the row-kernel loop (other head sizes, and everything on the scalar ISA); and the chunks of a
// token's positions computed apart and merged, and a step's work spread over threads, against the same chunks in
// order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "core/thread-pool.h"
#include "cpu/attention-f16.h"
#include "cpu/cpu-kernels.h"
#include "cpu/q4-q8-dot.h"
#include "cpu/ref-ops.h"
#include "test-helpers.h"

using namespace rt;

// Softmax weights sum to 1, so out is a convex mix of values: the bound is relative to the largest |value|. The worst
// case measured is a sharp softmax over many positions (1,030 at q x40: 5.5e-6 before the chunks, 5.1e-6 with them),
// where the scores themselves carry float rounding; a 2% error in one exp coefficient gives 2.4e-5.
static const double MAX_REL_DIFF_VS_REF = 1e-5;

struct head_case {
  int n, hd;
  int h0, heads, rep, kv_heads;  // heads h0 .. h0 + heads - 1 of a cache row of kv_heads heads, head h on KV head h / rep
  float q_scale;                 // larger: sharper softmax (and exp arguments far below -104)
};

static const char * path_name() { return cpu_float_path_name(cpu_float_path_active()); }

static void compare(const head_case & c, test_util::rng & r) {
  const int64_t ld = static_cast<int64_t>(c.kv_heads) * c.hd;
  std::vector<float> q(static_cast<size_t>(c.heads) * c.hd);
  for (auto & v : q) v = r.uniform() * c.q_scale;
  std::vector<uint16_t> k(static_cast<size_t>(c.n) * ld), v(k.size());
  std::vector<float> kf(k.size()), vf(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = ref::float_to_half(r.uniform());
    v[i] = ref::float_to_half(r.uniform() * 3.0f);
    kf[i] = ref::half_to_float(k[i]);
    vf[i] = ref::half_to_float(v[i]);
  }
  std::vector<float> got(q.size(), -99.0f), scratch(static_cast<size_t>(cpu_attention_scratch_floats(c.heads, c.hd)));
  cpu_attention_heads_f16({q.data(), k.data(), v.data(), ld, c.h0, c.heads, c.rep, c.hd, 1.0f / std::sqrt(static_cast<float>(c.hd))}, c.n,
                          scratch.data(), got.data());
  for (int i = 0; i < c.heads; ++i) {
    const int64_t kv = static_cast<int64_t>((c.h0 + i) / c.rep) * c.hd;
    std::vector<float> want(c.hd);
    ref::attention_head(q.data() + static_cast<size_t>(i) * c.hd, kf.data() + kv, vf.data() + kv, c.n, static_cast<int>(ld), c.hd, want.data());
    double worst = 0;
    for (int d = 0; d < c.hd; ++d) worst = std::fmax(worst, std::fabs(static_cast<double>(got[static_cast<size_t>(i) * c.hd + d]) - want[d]) / 3.0);
    CHECK(worst <= MAX_REL_DIFF_VS_REF, "%s n %d hd %d head %d of %d..%d (rep %d) q x%g: worst diff %g of max |v|", path_name(),
          c.n, c.hd, c.h0 + i, c.h0, c.h0 + c.heads - 1, c.rep, c.q_scale, worst);
  }
}

// In the first chunk and in a later one (merged into a chunk without NaN).
static void nan_reaches_output() {
  const int hd = 128;
  for (const auto & [n, at] : {std::pair{20, 7}, std::pair{300, 250}, std::pair{300, 3}}) {
    std::vector<float> q(hd, 0.1f), out(hd), scratch(static_cast<size_t>(cpu_attention_scratch_floats(1, hd)));
    std::vector<uint16_t> k(static_cast<size_t>(n) * hd, ref::float_to_half(0.5f)), v(k.size(), ref::float_to_half(1.0f));
    k[static_cast<size_t>(at) * hd + 3] = 0x7E00;  // NaN in one key
    cpu_attention_heads_f16({q.data(), k.data(), v.data(), hd, 0, 1, 1, hd, 0.1f}, n, scratch.data(), out.data());
    bool all_nan = true;
    for (float f : out) all_nan = all_nan && std::isnan(f);
    CHECK(all_nan, "%s: a NaN key at position %d of %d makes the head's output NaN", path_name(), at, n);
  }
}

// Chunks of 1 to RT_CPU_ATTENTION_CHUNK positions in order, covering 0 .. n - 1, as few as that allows.
static void chunk_cut() {
  for (int n = 1; n <= 5 * RT_CPU_ATTENTION_CHUNK + 3; ++n) {
    const int chunks = attention_chunks(n);
    bool ok = attention_chunk_begin(n, 0) == 0 && attention_chunk_begin(n, chunks) == n &&
              (chunks - 1) * RT_CPU_ATTENTION_CHUNK < n;
    for (int k = 0; k < chunks; ++k) {
      const int len = attention_chunk_begin(n, k + 1) - attention_chunk_begin(n, k);
      ok = ok && len >= 1 && len <= RT_CPU_ATTENTION_CHUNK;
    }
    CHECK(ok, "n %d: %d chunks do not cut 0 .. n - 1 into runs of 1 to %d", n, chunks, RT_CPU_ATTENTION_CHUNK);
  }
}

// What the backend does for a decode step: each (chunk, run of heads) computed on its own, here last chunk first,
// then merged in order; bit for bit what cpu_attention_heads_f16 gives taking the chunks one after another.
static void chunks_apart_match_in_order(test_util::rng & r) {
  const int heads = 16, hd = 128;
  const int64_t ld = static_cast<int64_t>(heads) * hd;
  for (int n : {1, 128, 129, 300, 1030}) {
    std::vector<float> q(static_cast<size_t>(heads) * hd);
    for (auto & f : q) f = r.uniform() * 4.0f;
    std::vector<uint16_t> k(static_cast<size_t>(n) * ld), v(k.size());
    for (size_t i = 0; i < k.size(); ++i) {
      k[i] = ref::float_to_half(r.uniform());
      v[i] = ref::float_to_half(r.uniform() * 3.0f);
    }
    std::vector<float> whole(q.size()), scratch(static_cast<size_t>(cpu_attention_scratch_floats(heads, hd)));
    cpu_attention_heads_f16({q.data(), k.data(), v.data(), ld, 0, heads, 1, hd, 0.0884f}, n, scratch.data(), whole.data());
    const int chunks = attention_chunks(n);
    const int run = 6;  // runs of heads 0-5, 6-11, 12-15
    std::vector<float> out(static_cast<size_t>(chunks) * heads * hd), mx(static_cast<size_t>(chunks) * heads),
        sum(mx.size()), sc(static_cast<size_t>(run) * RT_CPU_ATTENTION_CHUNK);
    const auto part = [&](int c, int h0) {
      return attention_partial{out.data() + (static_cast<size_t>(c) * heads + h0) * hd, mx.data() + static_cast<size_t>(c) * heads + h0,
                               sum.data() + static_cast<size_t>(c) * heads + h0};
    };
    for (int c = chunks - 1; c >= 0; --c)
      for (int h0 = 0; h0 < heads; h0 += run) {
        const int nh = std::min(run, heads - h0);
        cpu_attention_chunk_f16({q.data() + static_cast<size_t>(h0) * hd, k.data(), v.data(), ld, h0, nh, 1, hd, 0.0884f},
                                attention_chunk_begin(n, c), attention_chunk_begin(n, c + 1), sc.data(), part(c, h0));
      }
    for (int c = 1; c < chunks; ++c) attention_partial_merge(part(0, 0), part(c, 0), heads, hd);
    std::vector<float> apart(q.size());
    attention_partial_finish(part(0, 0), heads, hd, apart.data());
    CHECK(std::memcmp(apart.data(), whole.data(), whole.size() * sizeof(float)) == 0,
          "%s n %d: %d chunks computed apart and merged differ from the chunks in order", path_name(), n, chunks);
  }
}

// Equal keys: the softmax is uniform, so out is the mean of the values (exact inputs, small n).
static void uniform_mean() {
  const int hd = 64, n = 5;
  std::vector<float> q(hd, 0.25f), out(hd), scratch(static_cast<size_t>(cpu_attention_scratch_floats(1, hd)));
  std::vector<uint16_t> k(static_cast<size_t>(n) * hd, ref::float_to_half(1.0f)), v(k.size());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < hd; ++i) v[static_cast<size_t>(j) * hd + i] = ref::float_to_half(static_cast<float>(j * 2 + (i % 3)));
  cpu_attention_heads_f16({q.data(), k.data(), v.data(), hd, 0, 1, 1, hd, 0.125f}, n, scratch.data(), out.data());
  for (int i = 0; i < hd; ++i) {
    const float want = 4.0f + static_cast<float>(i % 3);  // mean of 0, 2, 4, 6, 8 plus i % 3
    CHECK(std::fabs(out[i] - want) <= 4e-6f * want, "%s: lane %d is %g, want %g", path_name(), i, out[i], want);
  }
}

// cpu_attention_step on pools of 1 to 3 threads, steps of 1 to 7 tokens (chunks spread over the threads, or a token
// an item): each token's output equal, bit for bit, to cpu_attention_heads_f16's; grouped-query heads too.
static void step_matches_heads(test_util::rng & r) {
  const int heads = 8, kv_heads = 2, hd = 64;
  const int64_t ld = static_cast<int64_t>(kv_heads) * hd;
  const int max_n = 700;
  std::vector<uint16_t> k(static_cast<size_t>(max_n) * ld), v(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = ref::float_to_half(r.uniform());
    v[i] = ref::float_to_half(r.uniform() * 3.0f);
  }
  const int lengths[] = {700, 1, 129, 256, 390, 64, 513};
  std::vector<float> q(std::size(lengths) * heads * hd);
  for (auto & f : q) f = r.uniform() * 4.0f;
  std::vector<float> scratch(static_cast<size_t>(cpu_attention_scratch_floats(heads, hd)));
  std::vector<float> want(q.size());
  const auto heads_of = [&](int t) {
    return attention_heads{q.data() + static_cast<size_t>(t) * heads * hd, k.data(), v.data(), ld, 0, heads, heads / kv_heads, hd, 0.125f};
  };
  for (int t = 0; t < static_cast<int>(std::size(lengths)); ++t)
    cpu_attention_heads_f16(heads_of(t), lengths[t], scratch.data(), want.data() + static_cast<size_t>(t) * heads * hd);
  for (int threads : {1, 2, 3}) {
    thread_pool pool(threads);
    attention_step_scratch step;
    for (int count = 1; count <= static_cast<int>(std::size(lengths)); ++count) {
      std::vector<float> got(q.size(), -99.0f);
      std::vector<attention_token> tokens;
      for (int t = 0; t < count; ++t) tokens.push_back({heads_of(t), lengths[t], got.data() + static_cast<size_t>(t) * heads * hd});
      cpu_attention_step(tokens, pool, step);
      CHECK(std::memcmp(got.data(), want.data(), static_cast<size_t>(count) * heads * hd * sizeof(float)) == 0,
            "%s, %d thread(s), a step of %d token(s): outputs differ from cpu_attention_heads_f16", path_name(), threads, count);
    }
  }
}

int main() {
  test_util::rng r(31);
  for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni}) {
    if (!cpu_isa_force(isa)) continue;
    const cpu_float_path path = cpu_float_path_active();
    const cpu_float_path want =
        isa == cpu_isa::scalar ? cpu_float_path::scalar : (isa == cpu_isa::avx512_vnni ? cpu_float_path::avx512 : cpu_float_path::avx2);
    // AVX-512 F/BW/VL without VNNI takes the AVX-512 loop on the AVX2 ISA.
    CHECK(path == want || (isa == cpu_isa::avx2 && path == cpu_float_path::avx512 && !cpu_isa_supported(cpu_isa::avx512_vnni)),
          "ISA %s runs the %s attention", cpu_isa_name(isa), path_name());
    for (int hd : {64, 128, 256, 80})
      for (int n : {1, 2, 7, 8, 9, 15, 16, 17, 33, 300})
        for (float qs : {1.0f, 40.0f}) compare({n, hd, 1, 1, 1, 3, qs}, r);
    // Runs of heads as the backend splits them: all of a row, a middle run, grouped-query heads (a run starting
    // inside a KV group).
    compare({37, 128, 0, 16, 1, 16, 4.0f}, r);
    compare({37, 64, 3, 5, 1, 9, 4.0f}, r);
    compare({20, 128, 3, 6, 4, 4, 4.0f}, r);
    compare({1030, 128, 8, 8, 1, 16, 4.0f}, r);
    compare({1030, 128, 0, 16, 1, 16, 40.0f}, r);
    compare({700, 64, 0, 3, 1, 3, 40.0f}, r);
    nan_reaches_output();
    uniform_mean();
    chunks_apart_match_in_order(r);
    step_matches_heads(r);
  }
  cpu_isa_reset();
  chunk_cut();
  return test_util::finish("test-attention-f16");
}
