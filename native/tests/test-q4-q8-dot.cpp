// The 8-bit activation kernels of src/cpu/q4-q8-dot.cpp: quantisation against its definition (every path bit for bit),
// each ISA path against the scalar reference (token counts 1..9 and 17, rows of 1..24 blocks), and the scalar reference
// against float activations within the bound that 8-bit rounding allows.
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/q4-q8-dot.h"
#include "quant/qpacked.h"
#include "test-helpers.h"

using namespace rt;

/** |path - scalar| / sum|terms|: the paths add the same exact integer block sums in another float order. */
static const double MAX_REL_DIFF_ISA_VS_SCALAR = 1e-6;

// Activations quantised into owned buffers.
struct q8_buf {
  std::vector<int8_t> q;
  std::vector<float> d, sum;
  int64_t ld;
  q8_buf(const float * x, int n, int ld_) : q(n), d(n / 32), sum(n / 32), ld(ld_) { cpu_quantize_q8(x, n, q.data(), d.data(), sum.data()); }
  q8_rows rows() const { return {q.data(), d.data(), sum.data(), ld}; }
};

static void quantize_definition() {
  // Block 0: x = c - 16 (amax 16, d = 16/127, q = round(x * 127/16)); block 1: all zero.
  std::vector<float> x(64, 0.0f);
  for (int c = 0; c < 32; ++c) x[c] = static_cast<float>(c - 16);
  std::vector<int8_t> q(64);
  std::vector<float> d(2), sum(2, -1.0f);
  for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2}) {
    if (!cpu_isa_force(isa)) continue;
    cpu_quantize_q8(x.data(), 64, q.data(), d.data(), sum.data());
    CHECK(d[0] == 16.0f / 127.0f && d[1] == 0.0f, "%s: scales %g %g", cpu_isa_name(isa), d[0], d[1]);
    int want_sum = 0;
    for (int c = 0; c < 32; ++c) want_sum += static_cast<int>(std::nearbyint((c - 16) * (127.0f / 16.0f)));
    CHECK(sum[0] == static_cast<float>(want_sum) && sum[1] == 0.0f, "%s: block sums %g %g, want %d 0", cpu_isa_name(isa), sum[0], sum[1], want_sum);
    for (int j = 0; j < 16; ++j) {
      const int even = static_cast<int>(std::nearbyint((2 * j - 16) * (127.0f / 16.0f)));
      const int odd = static_cast<int>(std::nearbyint((2 * j + 1 - 16) * (127.0f / 16.0f)));
      CHECK(q[j] == even && q[16 + j] == odd, "%s: column pair %d -> %d %d, want %d %d", cpu_isa_name(isa), j, q[j], q[16 + j], even, odd);
    }
    CHECK(q[0] == -127, "%s: -16 is -127", cpu_isa_name(isa));
    for (int c = 32; c < 64; ++c) CHECK(q[c] == 0, "%s: zero block", cpu_isa_name(isa));
  }
  cpu_isa_reset();
  // Every path quantises random rows to the same bytes.
  test_util::rng r(5);
  std::vector<float> y(32 * 40);
  for (auto & v : y) v = r.uniform() * 3.0f;
  y[7] = 0.5f * (127.0f / 127.0f);
  std::vector<int8_t> qa(y.size()), qb(y.size());
  std::vector<float> da(y.size() / 32), db(y.size() / 32), sa(da.size()), sb(da.size());
  cpu_isa_force(cpu_isa::scalar);
  cpu_quantize_q8(y.data(), static_cast<int>(y.size()), qa.data(), da.data(), sa.data());
  cpu_isa_reset();
  cpu_quantize_q8(y.data(), static_cast<int>(y.size()), qb.data(), db.data(), sb.data());
  CHECK(qa == qb && da == db && sa == sb, "the %s quantiser equals the scalar one", cpu_isa_name(cpu_isa_active()));
}

static void paths_agree() {
  test_util::rng r(11);
  int paths = 0;
  // Multiples of 8 take the pair kernels: eight tokens a call up to 64 blocks, seven at 72, four at 128.
  for (int nb : {1, 2, 3, 5, 8, 16, 24, 72, 128}) {
    const int cols = nb * 32;
    const int max_t = 17;
    std::vector<float> w(cols), x(static_cast<size_t>(max_t) * cols);
    std::vector<uint8_t> q(cols / 2);
    std::vector<uint16_t> sc(nb);
    for (auto & v : w) v = r.uniform() * 0.05f;
    for (auto & v : x) v = r.uniform() * 2.0f;
    qpacked_quantize_row(w.data(), cols, 32, q.data(), sc.data());
    const q8_buf xb(x.data(), static_cast<int>(x.size()), cols);
    const std::vector<float> & xd = xb.d;
    std::vector<float> back(cols);
    qpacked_dequantize_row(q.data(), sc.data(), cols, 32, back.data());
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 17}) {
      std::vector<float> ref(n), got(n);
      cpu_isa_force(cpu_isa::scalar);
      cpu_row_dot_q4q8_n(q.data(), sc.data(), cols, xb.rows(), n, ref.data(), 1);
      for (int t = 0; t < n; ++t) {
        // Scalar against float activations: each activation moves by at most half its block's step d/2.
        double exact = 0, bound = 1e-6, mag = 1e-12;
        for (int c = 0; c < cols; ++c) {
          exact += static_cast<double>(back[c]) * x[static_cast<size_t>(t) * cols + c];
          bound += std::fabs(back[c]) * xd[static_cast<size_t>(t) * nb + c / 32] * 0.5;
          mag += std::fabs(back[c] * x[static_cast<size_t>(t) * cols + c]);
        }
        CHECK(std::fabs(ref[t] - exact) <= bound * 1.001 + 1e-5 * mag, "nb %d token %d: %g vs float %g (bound %g)", nb, t, ref[t], exact, bound);
      }
      for (cpu_isa isa : {cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni}) {
        if (!cpu_isa_force(isa)) continue;
        ++paths;
        // Output stride 3 checks that each token's result lands at t * ldy.
        std::vector<float> strided(static_cast<size_t>(n) * 3, -7.0f);
        cpu_row_dot_q4q8_n(q.data(), sc.data(), cols, xb.rows(), n, strided.data(), 3);
        for (int t = 0; t < n; ++t) {
          double mag = 1e-12;
          for (int c = 0; c < cols; ++c) mag += std::fabs(back[c] * x[static_cast<size_t>(t) * cols + c]);
          CHECK(std::fabs(strided[static_cast<size_t>(t) * 3] - ref[t]) <= MAX_REL_DIFF_ISA_VS_SCALAR * mag,
                "%s nb %d n %d token %d: %g vs scalar %g", cpu_isa_name(isa), nb, n, t, strided[static_cast<size_t>(t) * 3], ref[t]);
          CHECK(strided[static_cast<size_t>(t) * 3 + 1] == -7.0f, "%s writes only its outputs", cpu_isa_name(isa));
        }
      }
    }
  }
  cpu_isa_reset();
  std::printf("paths: best %s; avx2 %d, avx-vnni %d, avx512-vnni %d; %d path runs compared with the scalar reference\n",
              cpu_isa_name(cpu_isa_active()), cpu_isa_supported(cpu_isa::avx2) ? 1 : 0, cpu_isa_supported(cpu_isa::avx_vnni) ? 1 : 0,
              cpu_isa_supported(cpu_isa::avx512_vnni) ? 1 : 0, paths);
  CHECK(cpu_isa_force(cpu_isa::scalar) && cpu_isa_active() == cpu_isa::scalar, "the scalar path can always be forced");
  cpu_isa_reset();
}

static void hand_dot() {
  // One block: codes u_c = c % 16, scale 0.5; activations exactly representable: x_c = (c % 3 - 1) * 2 -> d = 2/127.
  uint8_t q[16];
  for (int j = 0; j < 16; ++j) q[j] = static_cast<uint8_t>(((2 * j) % 16) | (((2 * j + 1) % 16) << 4));
  const uint16_t sc = fp16_from_f32(0.5f);
  float x[32];
  for (int c = 0; c < 32; ++c) x[c] = static_cast<float>((c % 3 - 1) * 2);
  const q8_buf xb(x, 32, 32);
  int64_t s = 0;
  for (int c = 0; c < 32; ++c) s += static_cast<int64_t>(kHq4Codebook[c % 16]) * ((c % 3 - 1) * 127);
  const float want = static_cast<float>(s) * (0.5f * (2.0f / 127.0f));
  for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni}) {
    if (!cpu_isa_force(isa)) continue;
    float y = 0;
    cpu_row_dot_q4q8_n(q, &sc, 32, xb.rows(), 1, &y, 1);
    CHECK(y == want, "%s: hand block %g, want %g", cpu_isa_name(isa), y, want);
  }
  cpu_isa_reset();
}

// Whole rows whose every partial sum is exact in float (d = 1, scale 0.5, |sum| < 2^24), so every path must give the
// integer answer exactly: the extremes of the codebook against the extremes of the activations, in rows that the pair
// kernels take (the VNNI ones take their unsigned-level shift back in the integer sums).
static void exact_rows() {
  const uint16_t half = fp16_from_f32(0.5f);
  for (int nb : {8, 16, 40}) {
    const int cols = nb * 32;
    for (int wp = 0; wp < 3; ++wp) {
      for (int xp = 0; xp < 3; ++xp) {
        std::vector<int> u(cols);
        std::vector<float> x(cols);
        for (int c = 0; c < cols; ++c) {
          u[c] = wp == 0 ? (c * 7) % 16 : wp == 1 ? 0 : 15;
          x[c] = xp == 0 ? static_cast<float>((c % 3 - 1) * 127) : xp == 1 ? -127.0f : (c % 32 == 5 ? 127.0f : (c % 5) * 25.0f);
        }
        std::vector<uint8_t> q(cols / 2);
        for (int j = 0; j < cols / 2; ++j) q[j] = static_cast<uint8_t>(u[2 * j] | (u[2 * j + 1] << 4));
        std::vector<uint16_t> sc(nb, half);
        // The same row as nine tokens: the pair kernels take one, three or eight of them a call (and nine in two
        // calls).
        std::vector<float> x9;
        for (int t = 0; t < 9; ++t) x9.insert(x9.end(), x.begin(), x.end());
        const q8_buf xb(x9.data(), 9 * cols, cols);
        int64_t s = 0;
        for (int c = 0; c < cols; ++c) s += static_cast<int64_t>(kHq4Codebook[u[c]]) * static_cast<int64_t>(x[c]);
        const float want = static_cast<float>(s) * 0.5f;
        for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni}) {
          if (!cpu_isa_force(isa)) continue;
          for (int n : {1, 3, 8, 9}) {
            float y[9] = {};
            cpu_row_dot_q4q8_n(q.data(), sc.data(), cols, xb.rows(), n, y, 1);
            for (int t = 0; t < n; ++t)
              CHECK(y[t] == want, "%s nb %d weights %d activations %d, %d token(s): %g, want %g", cpu_isa_name(isa), nb, wp, xp, n, y[t], want);
          }
        }
      }
    }
  }
  cpu_isa_reset();
}

// `rows` random rows of `cols` weights packed to qpacked-v2 (group 32): codes and scales.
struct packed_rows {
  std::vector<uint8_t> q;
  std::vector<uint16_t> sc;
};
static packed_rows random_packed_rows(test_util::rng & r, int rows, int cols) {
  std::vector<float> w(static_cast<size_t>(rows) * cols);
  for (auto & v : w) v = r.uniform() * 0.05f;
  packed_rows p{std::vector<uint8_t>(w.size() / 2), std::vector<uint16_t>(w.size() / 32)};
  for (int i = 0; i < rows; ++i)
    qpacked_quantize_row(w.data() + i * cols, cols, 32, p.q.data() + i * cols / 2, p.sc.data() + i * (cols / 32));
  return p;
}

// cpu_rows_dot_q4q8 gives each row's per-row result, bit for bit, on every path (one token and several).
static void rows_call() {
  test_util::rng r(23);
  for (int cols : {64, 256}) {
    const int rows = 5, nb = cols / 32, max_t = 9;
    const packed_rows pw = random_packed_rows(r, rows, cols);
    const std::vector<uint8_t> & q = pw.q;
    const std::vector<uint16_t> & sc = pw.sc;
    std::vector<float> x(static_cast<size_t>(max_t) * cols);
    for (auto & v : x) v = r.uniform();
    const q8_buf xb(x.data(), static_cast<int>(x.size()), cols);
    for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni}) {
      if (!cpu_isa_force(isa)) continue;
      for (int n : {1, 3, 8, 9}) {
        std::vector<float> one(static_cast<size_t>(n) * rows), all(static_cast<size_t>(n) * rows, -1.0f);
        for (int i = 0; i < rows; ++i) cpu_row_dot_q4q8_n(q.data() + i * cols / 2, sc.data() + i * nb, cols, xb.rows(), n, one.data() + i, rows);
        cpu_rows_dot_q4q8(q.data(), sc.data(), cols, rows, xb.rows(), n, all.data(), rows);
        CHECK(std::memcmp(one.data(), all.data(), one.size() * sizeof(float)) == 0, "%s cols %d n %d: the rows call differs from per-row calls",
              cpu_isa_name(isa), cols, n);
      }
    }
  }
  cpu_isa_reset();
}

// A token's result does not depend on the tokens beside it: on every path, each of 17 tokens (three calls of the pair
// kernels, or tiles of 8, 8 and 1) gives the bits it gets alone, for rows the pair kernels take and rows the tiles do.
static void batch_invariant() {
  test_util::rng r(31);
  for (int nb : {2, 5, 8, 24}) {
    const int cols = nb * 32, rows = 3, n = 17;
    const packed_rows pw = random_packed_rows(r, rows, cols);
    const std::vector<uint8_t> & q = pw.q;
    const std::vector<uint16_t> & sc = pw.sc;
    std::vector<float> x(static_cast<size_t>(n) * cols);
    for (auto & v : x) v = r.uniform() * 2.0f;
    const q8_buf xb(x.data(), static_cast<int>(x.size()), cols);
    for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni}) {
      if (!cpu_isa_force(isa)) continue;
      std::vector<float> together(static_cast<size_t>(n) * rows), alone(static_cast<size_t>(n) * rows);
      cpu_rows_dot_q4q8(q.data(), sc.data(), cols, rows, xb.rows(), n, together.data(), rows);
      for (int t = 0; t < n; ++t) cpu_rows_dot_q4q8(q.data(), sc.data(), cols, rows, xb.rows().from(t), 1, alone.data() + t * rows, rows);
      CHECK(std::memcmp(together.data(), alone.data(), together.size() * sizeof(float)) == 0,
            "%s nb %d: a token's result differs in a call of %d tokens from its own call", cpu_isa_name(isa), nb, n);
    }
  }
  cpu_isa_reset();
}

int main() {
  quantize_definition();
  rows_call();
  batch_invariant();
  hand_dot();
  exact_rows();
  paths_agree();
  return test_util::finish("test-q4-q8-dot");
}
