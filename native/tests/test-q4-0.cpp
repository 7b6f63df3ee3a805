// llama.cpp's Q4_0 as the quality check rounds BF16 experts with it (quant/q4-0.h): blocks worked by hand from
// ggml's reference quantiser (its clamp at 15, the first largest magnitude setting the sign, id taken before the FP16
// rounding of d), cpu_rows_dot_q4_0_n equal to dots with the rounded rows, bit for bit, on both kernel paths, and
// the experts' inputs rounded as ggml's Q8_0 quantiser does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

#include "cpu/cpu-kernels.h"
#include "quant/q4-0.h"
#include "quant/qpacked.h"
#include "test-helpers.h"

using namespace rt;
using test_util::matrix_view;

namespace {

struct block_case {
  const char * name;
  std::vector<float> x;         // the first values of the block; the rest are 0
  std::vector<float> expected;  // their Q4_0 values; the rest are 0
};

std::vector<float> round_trip(const std::vector<float> & head) {
  std::vector<float> x(kQ4_0Block, 0.0f), out(kQ4_0Block, -1.0f);
  std::copy(head.begin(), head.end(), x.begin());
  q4_0_round_trip(x.data(), kQ4_0Block, out.data());
  return out;
}

void check_cases() {
  const block_case cases[] = {
      // max -4: d = 0.5, id = 2, q = trunc(2x + 8.5); 3.9 clamps at q = 15, (15 - 8) * 0.5.
      {"negative largest", {-4.0f, 1.0f, 2.0f, 3.0f, 3.9f, -1.2f}, {-4.0f, 1.0f, 2.0f, 3.0f, 3.5f, -1.0f}},
      // The first of two equal magnitudes sets the sign: max 2, d = -0.25, id = -4; -2 gives 16.5, clamped to 15.
      {"first largest positive", {2.0f, -2.0f}, {2.0f, -1.75f}},
      {"first largest negative", {-2.0f, 2.0f}, {-2.0f, 1.75f}},
      // d = 1.0001 / -8 rounds to -0.125 in FP16, but id = -7.9992 comes from the unrounded d: 0.56253 gives
      // 8.5 - 4.49979 -> q = 4, value 0.5 (with id = -8 from the rounded d it would be 3.99976 -> q = 3, 0.625).
      {"id from d before its FP16 rounding", {1.0001f, 0.56253f}, {1.0f, 0.5f}},
      {"all zero", {}, {}},
  };
  for (const block_case & c : cases) {
    const std::vector<float> got = round_trip(c.x);
    for (int j = 0; j < kQ4_0Block; ++j) {
      const float want = j < static_cast<int>(c.expected.size()) ? c.expected[static_cast<size_t>(j)] : 0.0f;
      CHECK(got[static_cast<size_t>(j)] == want, "%s: value %d is %.9g, want %.9g", c.name, j, got[static_cast<size_t>(j)], want);
    }
  }
  // x_j = j: max 31, d = -3.875 (exact in FP16), q_j = trunc(8.5 - j / 3.875) (never an integer plus 0.5 for integer
  // j: 31 (2k + 1) / 16 is not an integer), value (8 - q_j) * 3.875.
  std::vector<float> ramp(kQ4_0Block), out(kQ4_0Block);
  for (int j = 0; j < kQ4_0Block; ++j) ramp[static_cast<size_t>(j)] = static_cast<float>(j);
  q4_0_round_trip(ramp.data(), kQ4_0Block, out.data());
  for (int j = 0; j < kQ4_0Block; ++j) {
    const double q = std::floor(8.5 - j / 3.875);
    CHECK(out[static_cast<size_t>(j)] == static_cast<float>((8.0 - q) * 3.875), "ramp %d: %.9g", j, out[static_cast<size_t>(j)]);
  }
  const q4_0_block b = q4_0_quantize_block(ramp.data());
  CHECK(b.d == fp16_from_f32(-3.875f), "ramp scale bits %04x", b.d);
  CHECK(b.q[0] == 8 && b.q[2] == 7 && b.q[31] == 0, "ramp codes %d %d %d", b.q[0], b.q[2], b.q[31]);
}

int bits_differ(float a, float b) { return std::memcmp(&a, &b, sizeof a) != 0; }

// The AVX2 round trip gives the scalar one's bits: random blocks with outliers, ties of magnitude, zero and -0 blocks.
void check_paths() {
  test_util::rng rng(9);
  const int blocks = 512;
  std::vector<float> x(static_cast<size_t>(blocks * kQ4_0Block));
  for (float & v : x) v = 0.02f * (rng.uniform() - 0.5f);
  for (size_t i = 0; i < x.size(); i += 67) x[i] *= 50.0f;
  for (int j = 0; j < kQ4_0Block; ++j) {
    x[static_cast<size_t>(kQ4_0Block + j)] = 0.0f;
    x[static_cast<size_t>(2 * kQ4_0Block + j)] = -0.0f;
  }
  x[3 * kQ4_0Block + 5] = 0.5f;  // a tie of magnitude: the first (+0.5) sets the sign
  x[3 * kQ4_0Block + 9] = -0.5f;
  x[4 * kQ4_0Block + 30] = -0.5f;  // the largest in the block's last lanes
  std::vector<float> simd(x.size()), scalar(x.size());
  cpu_kernels_set_simd(true);
  q4_0_round_trip(x.data(), static_cast<int64_t>(x.size()), simd.data());
  cpu_kernels_set_simd(false);
  q4_0_round_trip(x.data(), static_cast<int64_t>(x.size()), scalar.data());
  cpu_kernels_set_simd(true);
  int differ = 0;
  for (size_t i = 0; i < x.size(); ++i) differ += bits_differ(simd[i], scalar[i]);
  CHECK(differ == 0, "%d of %zu values differ between the AVX2 and the scalar round trip", differ, x.size());
  CHECK(!bits_differ(scalar[kQ4_0Block], -0.0f) && !bits_differ(scalar[2 * kQ4_0Block], -0.0f), "zero blocks: d = +0 / -8 = -0");
  CHECK(scalar[3 * kQ4_0Block + 9] == -0.4375f, "tie: %.9g", scalar[3 * kQ4_0Block + 9]);
}

// The quality check's expert rows: each row rounded, then the float kernel, whatever the source dtype, token count
// (a lone token, whole pairs and a remainder) and row count (a whole tile of rows and a part of one).
void check_row_dot() {
  test_util::rng rng(5);
  const int rows = 5;
  for (int cols : {64, 4160}) {  // 4160: past the kernel's stack rows
    std::vector<float> wf(static_cast<size_t>(rows * cols));
    for (float & v : wf) v = 0.05f * rng.uniform();
    const test_util::dense_matrix m(std::move(wf), rows, cols);
    const auto & sources = m.views;
    for (bool simd : {true, false}) {
      cpu_kernels_set_simd(simd);
      for (int n : {1, 4, 5}) {
        const int64_t ldx = cols + 1, ldy = rows + 2;
        std::vector<float> x(static_cast<size_t>(n * ldx));
        for (float & v : x) v = rng.uniform();
        for (const tensor_view & w : sources) {
          std::vector<float> rounded(static_cast<size_t>(rows * cols));
          for (int r = 0; r < rows; ++r) {
            cpu_row_to_f32(w, r, rounded.data() + r * cols);
            q4_0_round_trip(rounded.data() + r * cols, cols, rounded.data() + r * cols);
          }
          const tensor_view rw = matrix_view(dtype::f32, rows, cols, rounded.data(), 4);
          for (int first : {0, 1}) {
            const int count = rows - first;
            std::vector<float> got(static_cast<size_t>(n * ldy), 0.0f), want(got.size(), 0.0f);
            cpu_rows_dot_q4_0_n(w, first, count, x.data(), ldx, n, got.data(), ldy);
            for (int k = 0; k < count; ++k) cpu_row_dot_n(rw, first + k, x.data(), ldx, n, want.data() + k, ldy);
            for (int k = 0; k < count; ++k)
              for (int t = 0; t < n; ++t) {
                const size_t i = static_cast<size_t>(k + t * ldy);
                CHECK(!bits_differ(got[i], want[i]), "cols %d dtype %d simd %d n %d row %d token %d: %.9g vs %.9g", cols,
                      static_cast<int>(w.type), simd, n, first + k, t, got[i], want[i]);
              }
          }
          // The rounding moved the row: the rounded dot is not the source's.
          std::vector<float> plain(static_cast<size_t>(n * ldy)), q(plain.size());
          cpu_row_dot_n(w, 0, x.data(), ldx, n, plain.data(), ldy);
          cpu_rows_dot_q4_0_n(w, 0, 1, x.data(), ldx, n, q.data(), ldy);
          CHECK(plain[0] != q[0], "cols %d: the Q4_0 row dot equals the unrounded one", cols);
        }
      }
    }
  }
  cpu_kernels_set_simd(true);
}

// llama.cpp's 8-bit activations (Q8_0) as the check rounds the experts' inputs, worked by hand from ggml's reference.
void check_q8_0() {
  std::vector<float> x(2 * kQ4_0Block, 0.0f);
  // amax 127: d = 1 (exact in FP16), id = 1; roundf takes ties away from zero (nearest-even would give 2 and -2).
  const float head[] = {127.0f, 2.5f, -2.5f, 0.4999f, -63.5f, 1.5f};
  const float want[] = {127.0f, 3.0f, -3.0f, 0.0f, -64.0f, 2.0f};
  std::copy(std::begin(head), std::end(head), x.begin());
  // amax 1: d = 1/127 rounds to 1032 * 2^-17 in FP16; 1 * id rounds to 127, so the value is 127 * 1032 * 2^-17.
  x[kQ4_0Block] = 1.0f;
  x[kQ4_0Block + 1] = -0.5f;  // id = 1 / d rounds back to 127: -63.5, and roundf gives -64
  std::vector<float> out(x.size(), -1.0f);
  q8_0_round_trip(x.data(), static_cast<int64_t>(x.size()), out.data());
  for (size_t j = 0; j < std::size(want); ++j) CHECK(out[j] == want[j], "q8_0 value %zu is %.9g, want %.9g", j, out[j], want[j]);
  for (int j = 6; j < kQ4_0Block; ++j) CHECK(out[static_cast<size_t>(j)] == 0.0f, "q8_0 zero %d is %.9g", j, out[static_cast<size_t>(j)]);
  const float dh = 1032.0f / 131072.0f;
  CHECK(fp16_from_f32(1.0f / 127.0f) == fp16_from_f32(dh), "FP16 of 1/127 is not 1032 * 2^-17");
  CHECK(out[kQ4_0Block] == 127.0f * dh, "q8_0 of 1 in a block of amax 1: %.9g, want %.9g", out[kQ4_0Block], 127.0f * dh);
  CHECK(out[kQ4_0Block + 1] == -64.0f * dh, "q8_0 of -0.5: %.9g, want %.9g", out[kQ4_0Block + 1], -64.0f * dh);

  // Random blocks, rounded in place: every value is an integer multiple q of its block's FP16 scale, |q| <= 127, and
  // within half a step (plus the scale's FP16 error, at most 2^-11 relative, times 127) of the input.
  test_util::rng rng(13);
  std::vector<float> r(static_cast<size_t>(64 * kQ4_0Block));
  for (float & v : r) v = 3.0f * (rng.uniform() - 0.5f);
  for (size_t i = 0; i < r.size(); i += 41) r[i] *= 30.0f;
  std::vector<float> rounded = r;
  q8_0_round_trip(rounded.data(), static_cast<int64_t>(rounded.size()), rounded.data());
  for (size_t b = 0; b < r.size(); b += kQ4_0Block) {
    float amax = 0.0f;
    for (int j = 0; j < kQ4_0Block; ++j) amax = std::max(amax, std::fabs(r[b + static_cast<size_t>(j)]));
    const float d = f32_from_fp16(fp16_from_f32(amax / 127.0f));
    for (int j = 0; j < kQ4_0Block; ++j) {
      const float v = rounded[b + static_cast<size_t>(j)], q = v / d;
      CHECK(q == std::nearbyint(q) && std::fabs(q) <= 127.0f, "block %zu value %d: %.9g is not a multiple of %.9g", b / kQ4_0Block, j, v, d);
      CHECK(std::fabs(v - r[b + static_cast<size_t>(j)]) <= 0.5f * d + amax / 1024.0f, "block %zu value %d: %.9g from %.9g", b / kQ4_0Block, j, v,
            r[b + static_cast<size_t>(j)]);
    }
  }
}

}  // namespace

int main() {
  for (bool simd : {true, false}) {
    cpu_kernels_set_simd(simd);
    check_cases();
  }
  cpu_kernels_set_simd(true);
  check_paths();
  check_row_dot();
  check_q8_0();
  if (test_util::g_failures) {
    std::fprintf(stderr, "test-q4-0: %d failure(s)\n", test_util::g_failures);
    return 1;
  }
  std::printf("test-q4-0: ok\n");
  return 0;
}
