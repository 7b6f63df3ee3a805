// The panels' matmul (cpu/dense-panels.h) against the chain-order reference, bit for bit, on every path this CPU
// has: element types, row counts that leave a panel part-empty, token counts on both sides of each kernel's width and
// of the even split into groups, passes over columns wide enough to take one group a pass, several jobs in one call,
// and the row-major exact rows of the LM head screen.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/thread-pool.h"
#include "cpu/cpu-kernels.h"
#include "cpu/dense-panels.h"
#include "cpu/q4-q8-dot.h"
#include "test-helpers.h"

using namespace rt;

namespace {

struct matrix {
  dtype type;
  int64_t rows, cols;
  std::vector<uint16_t> half;
  std::vector<float> full;
  tensor_view view() const {
    return type == dtype::f32 ? test_util::matrix_view(type, rows, cols, full.data(), 4)
                              : test_util::matrix_view(type, rows, cols, half.data(), 2);
  }
};

matrix random_matrix(dtype type, int64_t rows, int64_t cols, uint64_t seed) {
  test_util::rng r(seed);
  matrix m{type, rows, cols, {}, {}};
  const size_t n = static_cast<size_t>(rows * cols);
  if (type == dtype::f32) {
    m.full.resize(n);
    for (float & v : m.full) v = r.uniform();
  } else {
    m.half.resize(n);
    for (uint16_t & v : m.half) v = type == dtype::f16 ? fp16_from_f32(r.uniform()) : test_util::bf16_from_f32(r.uniform());
  }
  return m;
}

std::vector<float> random_vector(size_t n, uint64_t seed) {
  test_util::rng r(seed);
  std::vector<float> v(n);
  for (float & f : v) f = r.uniform() * 2.0f;
  return v;
}

// The paths to run: every ISA this CPU has, each with the panels' path it must give.
std::vector<cpu_isa> isas() {
  std::vector<cpu_isa> out;
  for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni})
    if (cpu_isa_supported(isa)) out.push_back(isa);
  return out;
}

const char * type_name(dtype t) { return t == dtype::f32 ? "F32" : (t == dtype::f16 ? "F16" : "BF16"); }

// y[t * ldy + r] from the panels against the reference, for `tokens` tokens with padded strides.
int count_mismatches(const matrix & m, int tokens, thread_pool & pool, uint64_t seed) {
  const tensor_view v = m.view();
  dense_panels p;
  dense_panels_build(v, pool, p);
  const int64_t ldx = m.cols + 3, ldy = m.rows + 5;
  const std::vector<float> x = random_vector(static_cast<size_t>(tokens * ldx), seed);
  std::vector<float> y(static_cast<size_t>(tokens * ldy), -7.0f);
  dense_panels_matmul(p, x.data(), ldx, tokens, y.data(), ldy, pool);
  int bad = 0;
  for (int t = 0; t < tokens; ++t) {
    for (int64_t r = 0; r < m.rows; ++r) {
      const float want = dense_chain_dot_reference(v, r, x.data() + t * ldx);
      const float got = y[static_cast<size_t>(t * ldy + r)];
      if (std::memcmp(&want, &got, 4) != 0) ++bad;
    }
    // The padding past the rows stays as it was.
    for (int64_t r = m.rows; r < ldy; ++r) bad += y[static_cast<size_t>(t * ldy + r)] != -7.0f;
  }
  return bad;
}

void matmul_equals_reference() {
  thread_pool pool(2);
  const int token_counts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 23, 31, 32, 33, 40};
  struct shape {
    int64_t rows, cols;
  };
  const shape shapes[] = {{5, 33}, {16, 64}, {37, 130}, {70, 256}};
  for (cpu_isa isa : isas()) {
    cpu_isa_force(isa);
    const std::string path = dense_panels_path();
    if (isa == cpu_isa::scalar) CHECK(path == "scalar", "the scalar ISA gives the %s panels", path.c_str());
    else if (isa == cpu_isa::avx2) {
      // A CPU with AVX-512 but without VNNI (Skylake-X) takes the AVX2 integer kernels beside the AVX-512 float ones.
      const bool avx512_float = cpu_kernels_avx512() && !cpu_isa_supported(cpu_isa::avx_vnni) && !cpu_isa_supported(cpu_isa::avx512_vnni);
      CHECK(path == (avx512_float ? "avx512" : "avx2"), "the AVX2 ISA gives the %s panels", path.c_str());
    }
    else if (isa == cpu_isa::avx512_vnni) CHECK(path == "avx512", "the AVX-512 ISA gives the %s panels", path.c_str());
    for (dtype type : {dtype::f16, dtype::bf16, dtype::f32}) {
      for (const shape & s : shapes) {
        const matrix m = random_matrix(type, s.rows, s.cols, static_cast<uint64_t>(s.rows * 31 + s.cols));
        for (int tokens : token_counts) {
          const int bad = count_mismatches(m, tokens, pool, static_cast<uint64_t>(tokens));
          CHECK(bad == 0, "%s path, %s %lldx%lld, %d tokens: %d results differ from the chain order", path.c_str(),
                type_name(type), static_cast<long long>(s.rows), static_cast<long long>(s.cols), tokens, bad);
        }
      }
    }
    // Columns wide enough that a pass holds under one group of 16 tokens (8,200 columns: 12 tokens' activations fill
    // half a megabyte), so the 40 tokens' three groups take a pass each.
    CHECK(dense_panels_pass_groups(8200) == 1 && dense_panels_pass_groups(2048) == 4,
          "a pass takes %d group(s) of 8,200 columns and %d of 2,048", dense_panels_pass_groups(8200), dense_panels_pass_groups(2048));
    const matrix wide = random_matrix(dtype::f16, 21, 8200, 5);
    const int bad = count_mismatches(wide, 40, pool, 9);
    CHECK(bad == 0, "%s path, F16 21x8200, 40 tokens in passes: %d results differ", path.c_str(), bad);
  }
  cpu_isa_reset();
}

// The q, k and v projections in one call: each job's results as in its own call.
void jobs_in_one_call() {
  thread_pool pool(2);
  const matrix a = random_matrix(dtype::f16, 48, 96, 1), b = random_matrix(dtype::f16, 19, 96, 2), c = random_matrix(dtype::f16, 16, 96, 3);
  dense_panels pa, pb, pc;
  dense_panels_build(a.view(), pool, pa);
  dense_panels_build(b.view(), pool, pb);
  dense_panels_build(c.view(), pool, pc);
  for (cpu_isa isa : isas()) {
    cpu_isa_force(isa);
    for (int tokens : {1, 3, 18}) {
      const std::vector<float> x = random_vector(static_cast<size_t>(tokens * 96), 11);
      std::vector<float> ya(static_cast<size_t>(tokens * 48)), yb(static_cast<size_t>(tokens * 19)), yc(static_cast<size_t>(tokens * 16));
      const dense_job jobs[] = {{&pa, ya.data(), 48}, {&pb, yb.data(), 19}, {&pc, yc.data(), 16}};
      dense_panels_matmul(jobs, 3, x.data(), 96, tokens, pool);
      std::vector<float> sa(ya.size()), sb(yb.size()), sc(yc.size());
      dense_panels_matmul(pa, x.data(), 96, tokens, sa.data(), 48, pool);
      dense_panels_matmul(pb, x.data(), 96, tokens, sb.data(), 19, pool);
      dense_panels_matmul(pc, x.data(), 96, tokens, sc.data(), 16, pool);
      CHECK(ya == sa && yb == sb && yc == sc, "%s panels, %d tokens: three jobs in one call differ from their own calls",
            dense_panels_path(), tokens);
    }
  }
  cpu_isa_reset();
}

// The screen's exact rows from the row-major matrix: the panels' bits for any list of rows.
void chain_rows_equal_panels() {
  thread_pool pool(1);
  for (cpu_isa isa : isas()) {
    cpu_isa_force(isa);
    for (dtype type : {dtype::f16, dtype::bf16, dtype::f32}) {
      const matrix m = random_matrix(type, 67, 200, 4);
      dense_panels p;
      dense_panels_build(m.view(), pool, p);
      const std::vector<float> x = random_vector(200, 8);
      std::vector<float> all(67);
      dense_panels_matmul(p, x.data(), 200, 1, all.data(), 67, pool);
      for (int n : {1, 7, 8, 9, 19}) {
        std::vector<int32_t> rows(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = (i * 29 + n) % 67;
        std::vector<float> y(static_cast<size_t>(n));
        cpu_rows_dot_chain(m.view(), rows.data(), n, x.data(), y.data());
        int bad = 0;
        for (int i = 0; i < n; ++i) bad += std::memcmp(&y[static_cast<size_t>(i)], &all[static_cast<size_t>(rows[static_cast<size_t>(i)])], 4) != 0;
        CHECK(bad == 0, "%s, %s: %d of %d exact rows differ from the panels' results", dense_panels_path(), type_name(type), bad, n);
      }
    }
  }
  cpu_isa_reset();
}

// The reference is the chain order and not another order that the same data might agree with: a sum whose terms
// cancel gives a different float when added pairwise. And each step rounds once: 1 + (1 + 2^-12)(16773121 * 2^-48)
// is 1 + 2^-24 + 2^-60, just above the halfway point between 1 and its next float, where rounding first to double
// (as MinGW's fmaf does) lands on the halfway point and then on 1. Every path must give the next float.
void reference_is_the_chain() {
  const float w[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  const float x[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  const tensor_view v = test_util::matrix_view(dtype::f32, 1, 4, w, 4);
  // fma chain: ((1e8 + 1) rounds to 1e8) - 1e8 + 1 = 1; pairwise: (1e8 + 1) + (-1e8 + 1) = 0.
  CHECK(dense_chain_dot_reference(v, 0, x) == 1.0f, "the chain order gives %g", static_cast<double>(dense_chain_dot_reference(v, 0, x)));

  const float hw[2] = {1.0f, 1.0f + std::ldexp(1.0f, -12)};
  const float hx[2] = {1.0f, std::ldexp(16773121.0f, -48)};
  const float want = std::nextafter(1.0f, 2.0f);
  const tensor_view hv = test_util::matrix_view(dtype::f32, 1, 2, hw, 4);
  CHECK(dense_chain_dot_reference(hv, 0, hx) == want, "the reference rounds the halfway case to %.9g", static_cast<double>(dense_chain_dot_reference(hv, 0, hx)));
  thread_pool pool(1);
  dense_panels p;
  dense_panels_build(hv, pool, p);
  for (cpu_isa isa : isas()) {
    cpu_isa_force(isa);
    float y = 0;
    dense_panels_matmul(p, hx, 2, 1, &y, 1, pool);
    CHECK(y == want, "%s panels round the halfway case to %.9g", dense_panels_path(), static_cast<double>(y));
    const int32_t row = 0;
    cpu_rows_dot_chain(hv, &row, 1, hx, &y);
    CHECK(y == want, "%s exact rows round the halfway case to %.9g", dense_panels_path(), static_cast<double>(y));
  }
  cpu_isa_reset();
}

}  // namespace

int main() {
  reference_is_the_chain();
  matmul_equals_reference();
  jobs_in_one_call();
  chain_rows_equal_panels();
  return test_util::finish("test-dense-panels");
}
