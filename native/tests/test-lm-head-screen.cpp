// The LM head's INT8 screen (cpu/lm-head-screen.h) must give exactly the argmax of the full product for every token:
// random heads in each weight format, ties between identical rows (the lowest id wins), rows one FP16 step apart,
// activations that are zero, NaN, infinite or huge (the full product then), a head holding a NaN; on every ISA path
// the CPU has, and the scalar kernels. Its integer dot product must equal the scalar reference on every path. And it
// must screen: on a head of 8,000 rows the FP16 rows it computes stay a small share of the vocabulary.
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <limits>
#include <vector>

#include "core/thread-pool.h"
#include "cpu/cpu-kernels.h"
#include "cpu/dense-panels.h"
#include "cpu/lm-head-screen.h"
#include "cpu/q4-q8-dot.h"
#include "cpu/ref-ops.h"
#include "quant/qpacked.h"
#include "test-helpers.h"

using namespace rt;
using test_util::matrix_view;

namespace {

/** Largest share of a random head's rows that the screen may compute in FP16 for a token (it computes about 0.1%). */
constexpr double MAX_EXACT_ROW_SHARE = 0.02;

// The full product's argmax in the chain order the CPU backend's LM head takes (the reference, row by row).
int32_t full_argmax(const tensor_view & w, const float * x, thread_pool & pool) {
  (void)pool;
  std::vector<float> logits(static_cast<size_t>(w.shape[0]));
  for (int64_t r = 0; r < w.shape[0]; ++r) logits[static_cast<size_t>(r)] = dense_chain_dot_reference(w, r, x);
  return ref::argmax(logits.data(), static_cast<int>(logits.size()));
}

// One matrix in each format (each format's values rounded from the same floats).
struct head {
  std::vector<float> f32;
  std::vector<uint16_t> f16, bf16;
  int rows, cols;
  tensor_view as(dtype t) const {
    if (t == dtype::f32) return matrix_view(t, rows, cols, f32.data(), 4);
    return matrix_view(t, rows, cols, t == dtype::f16 ? f16.data() : bf16.data(), 2);
  }
  void set(size_t i, float v) {
    f16[i] = fp16_from_f32(v);
    bf16[i] = test_util::bf16_from_f32(v);
    f32[i] = v;
  }
  // Element i one step of each 16-bit format above its (positive) value; the FP32 head takes the FP16 step (one
  // FP32 step would be lost in the full product's float sum, which then ties).
  void step_up(size_t i) {
    ++f16[i];
    ++bf16[i];
    f32[i] = f32_from_fp16(f16[i]);
  }
};

head random_head(int rows, int cols, uint64_t seed, float scale) {
  test_util::rng rng(seed);
  head h{std::vector<float>(static_cast<size_t>(rows) * cols), std::vector<uint16_t>(static_cast<size_t>(rows) * cols),
         std::vector<uint16_t>(static_cast<size_t>(rows) * cols), rows, cols};
  for (size_t i = 0; i < h.f32.size(); ++i) h.set(i, scale * rng.uniform());
  return h;
}

bool same_screen(const lm_head_screen & a, const lm_head_screen & b) {
  return a.rows == b.rows && a.cols == b.cols && a.q == b.q && a.scale == b.scale && a.err == b.err && a.max_abs == b.max_abs &&
         a.l1 == b.l1 && a.q_sum == b.q_sum && a.max_abs_all == b.max_abs_all && a.ok == b.ok;
}

// Every token's screened argmax against the full product's; returns the FP16 rows the screen computed.
uint64_t check_tokens(const char * label, const tensor_view & w, const std::vector<float> & x, int n, thread_pool & pool,
                      uint64_t * full_products = nullptr) {
  // The backend builds its screen from the head's panels: the same copy as from the rows.
  dense_panels panels;
  dense_panels_build(w, pool, panels);
  lm_head_screen s, from_rows;
  lm_head_screen_build(panels, pool, s);
  lm_head_screen_build(w, pool, from_rows);
  CHECK(same_screen(s, from_rows), "%s: the screen built from the panels differs from the one built from the rows", label);
  const int H = static_cast<int>(w.shape[1]);
  std::vector<int32_t> next(static_cast<size_t>(n), -2);
  lm_head_screen_stats st;
  lm_head_screen_argmax(s, w, panels, x.data(), H, n, pool, next.data(), st);
  for (int t = 0; t < n; ++t) {
    const int32_t want = full_argmax(w, x.data() + static_cast<size_t>(t) * H, pool);
    CHECK(next[static_cast<size_t>(t)] == want, "%s, token %d: screened argmax %d, full product's %d", label, t,
          next[static_cast<size_t>(t)], want);
  }
  CHECK(st.tokens + st.full_products == static_cast<uint64_t>(n), "%s: every token screened or computed in full", label);
  if (full_products != nullptr) *full_products = st.full_products;
  return st.exact_rows;
}

std::vector<float> random_x(int n, int cols, uint64_t seed, float scale = 1.0f) {
  test_util::rng rng(seed);
  std::vector<float> x(static_cast<size_t>(n) * cols);
  for (float & v : x) v = scale * rng.uniform();
  return x;
}

}  // namespace

int main() {
  thread_pool pool(2);

  // The integer dot products on each path against the scalar loop: lengths with and without a tail past the kernels'
  // 32-, 64- and 128-byte steps, one to nineteen tokens (one at a time, four at a time, tiles of four rows by four
  // tokens and what they leave), one to seven rows, extreme values.
  {
    test_util::rng rng(3);
    for (int cols : {32, 64, 200, 2048, 2050, 7}) {
      const int ldx = cols + 5, qs = cols + 3, max_rows = 7, max_n = 19;
      std::vector<int8_t> q(static_cast<size_t>(max_rows * qs)), x(static_cast<size_t>(max_n * ldx));
      for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>(i % 5 == 0 ? 127 : static_cast<int>(127 * rng.uniform()));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i % 7 == 0 ? -127 : static_cast<int>(127 * rng.uniform()));
      for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni}) {
        if (!cpu_isa_force(isa)) continue;
        for (int rows : {1, 4, 5, 7}) {
          for (int n : {1, 2, 3, 4, 5, 8, 9, 12, 13, 16, 19}) {
            std::vector<int32_t> got(static_cast<size_t>(rows * max_n), -1);
            lm_head_screen_dots(q.data(), qs, rows, x.data(), ldx, cols, n, got.data(), max_n);
            int bad = 0;
            for (int r = 0; r < rows; ++r)
              for (int t = 0; t < n; ++t)
                bad += got[static_cast<size_t>(r * max_n + t)] != lm_head_screen_dot_reference(q.data() + r * qs, x.data() + t * ldx, cols);
            CHECK(bad == 0, "%d rows x %d tokens of %d on %s: %d dots differ from the scalar loop", rows, n, cols, cpu_isa_name(isa), bad);
          }
        }
      }
      cpu_isa_reset();
    }
  }

  // Random heads, each format, every ISA path and the scalar float kernels: the same tokens as the full product, and a
  // screen that computes few rows. 24 tokens take the INT8 tiles of four rows by four tokens; 7 tokens of 200 columns
  // a row against four tokens and then one at a time, with columns past the kernels' steps; 13 tokens of 8,002 rows
  // the tiles, a token and two rows left over.
  for (const auto & [rows, cols, n] : {std::tuple<int, int, int>{8000, 256, 24}, std::tuple<int, int, int>{8000, 200, 7},
                                       std::tuple<int, int, int>{8002, 200, 13}}) {
    const head h = random_head(rows, cols, 5, 0.05f);
    const std::vector<float> x = random_x(n, cols, 6);
    for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni}) {
      if (!cpu_isa_force(isa)) continue;
      for (dtype t : {dtype::f16, dtype::bf16, dtype::f32}) {
        const std::string label = std::string("random head ") + std::to_string(cols) + " cols, " + dtype_name(t) + ", " +
                                  cpu_isa_name(isa);
        const uint64_t exact = check_tokens(label.c_str(), h.as(t), x, n, pool);
        const double share = static_cast<double>(exact) / (static_cast<double>(n) * rows);
        std::printf("%s: %.4f of the rows computed in FP16\n", label.c_str(), share);
        CHECK(share <= MAX_EXACT_ROW_SHARE, "%s: the screen computed %.4f of the rows (at most %.2f)", label.c_str(),
              share, MAX_EXACT_ROW_SHARE);
      }
    }
    cpu_isa_reset();
    cpu_kernels_set_simd(false);
    check_tokens("random head, f16, scalar float kernels", h.as(dtype::f16), x, n, pool);
    cpu_kernels_set_simd(true);
  }

  // Near-ties: rows 2000 and 3000 equal and the largest for these activations (the lowest id must win); then row 2001
  // the same but one step of its format above in one column where x > 0 (it must win by that step).
  {
    const int rows = 4000, cols = 128;
    head h = random_head(rows, cols, 7, 0.05f);
    const std::vector<float> x = random_x(1, cols, 8);
    for (int i = 0; i < cols; ++i) {
      const float v = x[static_cast<size_t>(i)] > 0 ? 0.25f : -0.25f;
      h.set(static_cast<size_t>(2000) * cols + i, v);
      h.set(static_cast<size_t>(3000) * cols + i, v);
    }
    for (dtype t : {dtype::f16, dtype::bf16, dtype::f32}) {
      const std::string label = std::string("tie head, ") + dtype_name(t);
      CHECK(full_argmax(h.as(t), x.data(), pool) == 2000, "%s: the full product ties rows 2000 and 3000", label.c_str());
      check_tokens(label.c_str(), h.as(t), x, 1, pool);
    }
    int col = 0;
    while (x[static_cast<size_t>(col)] <= 0) ++col;
    for (int i = 0; i < cols; ++i) h.set(static_cast<size_t>(2001) * cols + i, h.f32[static_cast<size_t>(2000) * cols + i]);
    h.step_up(static_cast<size_t>(2001) * cols + col);
    for (dtype t : {dtype::f16, dtype::bf16, dtype::f32}) {
      const std::string label = std::string("one-step head, ") + dtype_name(t);
      const int32_t full = full_argmax(h.as(t), x.data(), pool);
      CHECK(full == 2001, "%s: the row one step above wins the full product (got %d)", label.c_str(), full);
      check_tokens(label.c_str(), h.as(t), x, 1, pool);
    }
  }

  // INT8 rounding that orders two rows the wrong way: row 100 wins the full product, row 200 the INT8 one (its larger
  // scale rounds its codes up). Only the weights' rounding term of the bound keeps row 100 a candidate.
  {
    const int rows = 1000, cols = 64;
    head h = random_head(rows, cols, 12, 0.01f);
    for (int i = 0; i < cols; ++i) {
      h.set(static_cast<size_t>(100) * cols + i, i == 0 ? 1.27f : 0.5049f);
      h.set(static_cast<size_t>(200) * cols + i, i == 0 ? 1.28f : 0.5045f);
    }
    const std::vector<float> x(static_cast<size_t>(cols), 1.0f);
    const tensor_view w = h.as(dtype::f32);
    lm_head_screen s;
    lm_head_screen_build(w, pool, s);
    const auto int8_logit = [&](int r) {
      double sum = 0;
      for (int i = 0; i < cols; ++i) sum += s.q[static_cast<size_t>(r) * cols + i];
      return sum * s.scale[static_cast<size_t>(r)];
    };
    CHECK(full_argmax(w, x.data(), pool) == 100 && int8_logit(200) > int8_logit(100),
          "misordering head: row 100 wins the full product, row 200 the INT8 one (%g vs %g)", int8_logit(200),
          int8_logit(100));
    check_tokens("misordering head", w, x, 1, pool);
  }

  // Activations whose INT8 rounding orders two rows the wrong way: x rounds down on the columns row 100 weighs and up
  // on those row 200 weighs. Only the activations' rounding term of the bound keeps row 100 a candidate.
  {
    const int rows = 1000, cols = 64;
    head h = random_head(rows, cols, 13, 0.01f);
    std::vector<float> x(static_cast<size_t>(cols), 0.0f);
    x[0] = 1.0f;  // the largest: the INT8 step is 1/127
    for (int i = 1; i < cols; ++i) {
      const bool down = i < 32;
      x[static_cast<size_t>(i)] = (down ? 63.49f : 63.51f) / 127.0f;
      h.set(static_cast<size_t>(100) * cols + i, down ? 1.0f : 0.0f);
      h.set(static_cast<size_t>(200) * cols + i, down || i == 63 ? 0.0f : 0.999f);
    }
    h.set(static_cast<size_t>(100) * cols, 0.0f);
    h.set(static_cast<size_t>(200) * cols, 0.0f);
    const tensor_view w = h.as(dtype::f32);
    CHECK(full_argmax(w, x.data(), pool) == 100, "rounded-activations head: row 100 wins the full product");
    check_tokens("rounded-activations head", w, x, 1, pool);
  }

  // Activations the screen hands to the full product (NaN, infinite, huge) or screens trivially (zero); a head with
  // a NaN (no screen: every token computed in full, -1 where the NaN reaches the logits).
  {
    const int rows = 500, cols = 64;
    const head h = random_head(rows, cols, 9, 0.05f);
    std::vector<float> x = random_x(5, cols, 10);
    for (int i = 0; i < cols; ++i) x[static_cast<size_t>(i)] = 0.0f;                            // token 0: zero
    x[static_cast<size_t>(cols) + 3] = std::numeric_limits<float>::quiet_NaN();                  // token 1: NaN
    x[static_cast<size_t>(2 * cols) + 5] = std::numeric_limits<float>::infinity();               // token 2: +Inf
    for (int i = 0; i < cols; ++i) x[static_cast<size_t>(3 * cols) + i] *= 1e38f;                // token 3: huge
    uint64_t full = 0;
    check_tokens("special activations", h.as(dtype::f32), x, 5, pool, &full);
    CHECK(full == 3, "special activations: NaN, Inf and huge tokens take the full product (%llu did)",
          static_cast<unsigned long long>(full));
    head bad = h;
    bad.set(static_cast<size_t>(17) * cols + 2, std::numeric_limits<float>::quiet_NaN());
    lm_head_screen s;
    lm_head_screen_build(bad.as(dtype::f32), pool, s);
    CHECK(!s.ok, "a head holding a NaN is not screened");
    const std::vector<float> xr = random_x(3, cols, 11);
    check_tokens("head with a NaN", bad.as(dtype::f32), xr, 3, pool, &full);
    CHECK(full == 3, "head with a NaN: every token computed in full");
  }

  return test_util::finish("test-lm-head-screen");
}
