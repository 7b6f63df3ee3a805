// cpu_row_dot_n / cpu_row_dot_q4_n (four tokens per pass over a weight row) and cpu_rows_dot_n (tiles of rows by
// tokens) must equal separate row dots bit for bit, for every weight format, token count (full groups of four and
// remainders), odd widths with a scalar tail, and both the AVX2 and the scalar path: the CPU backend's batch
// invariance rests on it.
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/cpu-kernels.h"
#include "quant/qpacked.h"
#include "test-helpers.h"

using namespace rt;
using test_util::matrix_view;

namespace {

int bits_differ(float a, float b) { return std::memcmp(&a, &b, sizeof a) != 0; }

}  // namespace

int main() {
  test_util::rng rng(11);
  const int rows = 7;
  for (int cols : {64, 70, 8}) {  // 70 and 8 leave a scalar tail after the 16-wide steps
    std::vector<float> wf(static_cast<size_t>(rows * cols));
    for (float & v : wf) v = rng.uniform();
    const test_util::dense_matrix m(std::move(wf), rows, cols);
    const auto & dense = m.views;
    for (bool simd : {true, false}) {
      cpu_kernels_set_simd(simd);
      for (int n : {1, 3, 4, 5, 8, 9}) {
        const int64_t ldx = cols + 3, ldy = 2;
        std::vector<float> x(static_cast<size_t>(n * ldx));
        for (float & v : x) v = rng.uniform();
        for (const tensor_view & w : dense) {
          for (int64_t r = 0; r < rows; ++r) {
            std::vector<float> y(static_cast<size_t>(n * ldy), -1.0f);
            cpu_row_dot_n(w, r, x.data(), ldx, n, y.data(), ldy);
            int bad = 0;
            for (int t = 0; t < n; ++t) bad += bits_differ(y[static_cast<size_t>(t * ldy)], cpu_row_dot(w, r, x.data() + t * ldx));
            CHECK(bad == 0, "dtype %d cols %d n %d row %lld simd %d: %d tokens differ", static_cast<int>(w.type), cols,
                  n, static_cast<long long>(r), simd, bad);
          }
          // Several rows a call (tiles of three rows by two tokens, and their remainders): every output one row dot's bits.
          for (int64_t first : {0, 2}) {
            const int64_t count = rows - first, ldr = rows + 1;
            std::vector<float> y(static_cast<size_t>(n * ldr), -1.0f);
            cpu_rows_dot_n(w, first, count, x.data(), ldx, n, y.data(), ldr);
            int bad = 0;
            for (int64_t k = 0; k < count; ++k)
              for (int t = 0; t < n; ++t) bad += bits_differ(y[static_cast<size_t>(k + t * ldr)], cpu_row_dot(w, first + k, x.data() + t * ldx));
            CHECK(bad == 0, "rows: dtype %d cols %d n %d first %lld simd %d: %d outputs differ", static_cast<int>(w.type), cols, n,
                  static_cast<long long>(first), simd, bad);
            CHECK(y[static_cast<size_t>(count)] == -1.0f, "rows: dtype %d n %d wrote past its rows", static_cast<int>(w.type), n);
          }
        }
      }
    }
  }

  for (int group : {16, 32, 8}) {  // 8: the AVX2 INT4 kernel needs groups of 16, so this exercises the scalar fallback
    const int cols = 64;
    std::vector<float> wf(static_cast<size_t>(rows * cols));
    for (float & v : wf) v = rng.uniform();
    std::vector<uint8_t> q(static_cast<size_t>(rows * cols / 2));
    std::vector<uint16_t> sc(static_cast<size_t>(rows * cols / group));
    for (int r = 0; r < rows; ++r) qpacked_quantize_row(wf.data() + r * cols, cols, group, q.data() + r * cols / 2, sc.data() + r * cols / group);
    const tensor_view qv = matrix_view(dtype::u8, rows, cols / 2, q.data(), 1);
    const tensor_view sv = matrix_view(dtype::f16, rows, cols / group, sc.data(), 2);
    for (bool simd : {true, false}) {
      cpu_kernels_set_simd(simd);
      for (int n : {1, 4, 6, 9}) {
        const int64_t ldx = cols + 5, ldy = 3;
        std::vector<float> x(static_cast<size_t>(n * ldx));
        for (float & v : x) v = rng.uniform();
        for (int64_t r = 0; r < rows; ++r) {
          std::vector<float> y(static_cast<size_t>(n * ldy), -1.0f);
          cpu_row_dot_q4_n(qv, sv, group, r, x.data(), ldx, n, y.data(), ldy);
          int bad = 0;
          for (int t = 0; t < n; ++t) bad += bits_differ(y[static_cast<size_t>(t * ldy)], cpu_row_dot_q4(qv, sv, group, r, x.data() + t * ldx));
          CHECK(bad == 0, "int4 group %d n %d row %lld simd %d: %d tokens differ", group, n, static_cast<long long>(r), simd, bad);
        }
      }
    }
  }
  cpu_kernels_set_simd(true);

  // cpu_row_to_f32 widens exactly one row of each dtype (U8 rows read as zeros) and writes nothing past it.
  {
    const int cols = 5;
    std::vector<float> values(static_cast<size_t>(2 * cols));
    for (float & v : values) v = rng.uniform();
    const test_util::dense_matrix m(std::move(values), 2, cols);
    const std::vector<float> & wf = m.f32;
    const std::vector<uint16_t> &wb = m.bf16, &wh = m.f16;
    const std::vector<uint8_t> wu(wf.size(), 0x77);
    const tensor_view rows_of[] = {m.views[0], m.views[1], m.views[2], matrix_view(dtype::u8, 2, cols, wu.data(), 1)};
    for (const tensor_view & t : rows_of) {
      std::vector<float> out(static_cast<size_t>(cols + 1), 42.0f);
      cpu_row_to_f32(t, 1, out.data());
      int bad = 0;
      for (int i = 0; i < cols; ++i) {
        const size_t at = static_cast<size_t>(cols + i);
        const float want = t.type == dtype::f32 ? wf[at] : t.type == dtype::bf16 ? f32_from_bf16(wb[at])
                                                        : t.type == dtype::f16 ? f32_from_fp16(wh[at]) : 0.0f;
        bad += bits_differ(out[static_cast<size_t>(i)], want);
      }
      CHECK(bad == 0, "dtype %d: %d elements of row 1 differ", static_cast<int>(t.type), bad);
      CHECK(out[static_cast<size_t>(cols)] == 42.0f, "dtype %d: written past the row", static_cast<int>(t.type));
    }
  }
  // The FP16 KV cache's store and P.V: the conversion gives fp16_from_f32's bits on both paths (odd widths, a
  // subnormal, a value past 65504); the axpy matches a double sum.
  for (int n : {1, 8, 13, 128}) {
    std::vector<float> x(static_cast<size_t>(n)), y0(static_cast<size_t>(n)), y1;
    for (float & v : x) v = rng.uniform() * 4.0f;
    x[0] = n > 1 ? std::ldexp(1.0f, -20) : 70000.0f;
    std::vector<uint16_t> a(static_cast<size_t>(n) + 1, 0xBEEF), b(static_cast<size_t>(n) + 1, 0xBEEF);
    cpu_kernels_set_simd(false);
    cpu_f32_to_f16(x.data(), a.data(), n);
    cpu_kernels_set_simd(true);
    cpu_f32_to_f16(x.data(), b.data(), n);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += a[static_cast<size_t>(i)] != fp16_from_f32(x[static_cast<size_t>(i)]) || b[static_cast<size_t>(i)] != a[static_cast<size_t>(i)];
    CHECK(bad == 0 && a[static_cast<size_t>(n)] == 0xBEEF && b[static_cast<size_t>(n)] == 0xBEEF, "f32->f16 n=%d: %d differ or written past", n, bad);
    for (float & v : y0) v = rng.uniform();
    y1 = y0;
    for (bool simd : {false, true}) {
      cpu_kernels_set_simd(simd);
      std::vector<float> y = y0;
      cpu_axpy_f16(0.375f, a.data(), y.data(), n);
      int off = 0;
      for (int i = 0; i < n; ++i) {
        const double want = y0[static_cast<size_t>(i)] + 0.375 * static_cast<double>(f32_from_fp16(a[static_cast<size_t>(i)]));
        off += std::fabs(y[static_cast<size_t>(i)] - want) > 1e-6 * (1 + std::fabs(want));
      }
      CHECK(off == 0, "axpy_f16 n=%d simd %d: %d elements off", n, simd ? 1 : 0, off);
    }
  }
  cpu_kernels_set_simd(true);
  return test_util::finish("test-cpu-kernels");
}
