// Each CUDA op (src/cuda/*.cuh) against its scalar CPU reference (src/cpu/ref-ops.h) under a named tolerance.
// To add an op: write `static void test_<op>()` that builds inputs with `rng`, runs the kernel through `dev<T>`
// buffers, computes the reference and compares with `expect_close(name, gpu, ref, MAX_ABS_ERR_<OP>)`; call it from
// main(). Without a CUDA device (or without a CUDA build) the driver prints "SKIP: no CUDA device (<reason>)".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/ref-ops.h"
#include "quant/qpacked.h"

/** ctest's SKIP_RETURN_CODE for the gpu label (CMakeLists.txt): no device is a skip, not a pass. */
constexpr int kSkip = 77;

#ifdef RT_WITH_CUDA
#include <cuda_runtime.h>

#include "cuda/argmax.cuh"
#include "cuda/attention.cuh"
#include "cuda/embedding.cuh"
#include "cuda/launch.cuh"
#include "cuda/lm-screen.cuh"
#include "cuda/matmul-f16.cuh"
#include "cuda/matmul-w4a16.cuh"
#include "cuda/moe-group.cuh"
#include "cuda/moe-reduce.cuh"
#include "cuda/qk-norm-rope.cuh"
#include "cuda/rmsnorm.cuh"
#include "cuda/rope.cuh"
#include "cuda/router-topk.cuh"
#include "cuda/swiglu.cuh"

// Tolerances: max |gpu - ref| on outputs of magnitude ~1 (inputs are scaled so). FP32 accumulation in a different
// order bounds the matmuls; FP16 outputs add one rounding (2^-11 relative).
static const float MAX_ABS_ERR_W4A16_GEMV = 2e-4f;
static const float MAX_ABS_ERR_W4A16_GEMM = 2e-4f;
static const float MAX_ABS_ERR_F16_GEMM = 2e-4f;
// Tensor cores sum a k-step's products in FP32 without IEEE order (and, on some GPUs, align before adding): against
// the FP32 reference over the same FP16 weights, outputs of magnitude ~20 move by up to ~1e-4.
static const float MAX_ABS_ERR_MMA = 1e-3f;
// Rows of 16 K columns: FP32 sums of that many terms (outputs up to ~10) in two different orders.
static const float MAX_ABS_ERR_WIDE_ROWS = 1e-3f;
static const float MAX_ABS_ERR_RMSNORM_F16 = 4e-3f;
static const float MAX_ABS_ERR_RMSNORM_F32 = 1e-5f;
// powf (CUDA: up to 4 ulp) and sincosf differ by ulps; at 1000 rad one ulp of inv_freq already moves an output by
// 1.6e-4 and two by 3.1e-4 (measured on this test's data). A wrong rotation convention errs by ~1.
static const float MAX_ABS_ERR_ROPE = 1e-3f;
static const float MAX_ABS_ERR_ATTENTION = 2e-3f;
static const float MAX_ABS_ERR_ROUTER = 1e-6f;
static const float MAX_ABS_ERR_SWIGLU = 8e-3f;  // outputs up to 16 rounded to FP16 (half ulp 0.004)
static const float MAX_ABS_ERR_MOE_REDUCE = 1e-5f;
static const float MAX_ABS_ERR_QK_NORM_ROPE = 2e-4f;  // as rope; K/V also rounded to FP16 on both sides
// The LM head's screen is exact (the decode GEMV's token); what it may cost: the share of a random head's rows it
// computes in FP16 for a token (about 0.1% on the CPU's screen of the same bound).
static const double MAX_LM_SCREEN_ROW_SHARE = 0.02;

static int failures = 0;

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

namespace {

struct rng {
  uint64_t s;
  explicit rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 7) {}
  uint32_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<uint32_t>(s >> 16);
  }
  float uniform() { return static_cast<float>(next() & 0xFFFFFF) / 8388608.0f - 1.0f; }  // [-1, 1)
};

template <typename T>
struct dev {
  T * p = nullptr;
  size_t n = 0;
  explicit dev(size_t count) : n(count) {
    CK(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)));
    CK(cudaMemset(p, 0, std::max<size_t>(count, 1) * sizeof(T)));
  }
  explicit dev(const std::vector<T> & h) : dev(h.size()) { CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  ~dev() { cudaFree(p); }
  dev(const dev &) = delete;
  dev & operator=(const dev &) = delete;
  std::vector<T> get() const {
    std::vector<T> h(n);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

// Random FP16 values (bits) in [-amp, amp) and their exact float values.
void random_half(rng & r, size_t n, float amp, std::vector<uint16_t> & bits, std::vector<float> & vals) {
  bits.resize(n);
  vals.resize(n);
  for (size_t i = 0; i < n; ++i) {
    bits[i] = rt::ref::float_to_half(amp * r.uniform());
    vals[i] = rt::ref::half_to_float(bits[i]);
  }
}

std::vector<float> halves_to_floats(const std::vector<uint16_t> & h) {
  std::vector<float> f(h.size());
  for (size_t i = 0; i < h.size(); ++i) f[i] = rt::ref::half_to_float(h[i]);
  return f;
}

// Dense FP16 arguments over the tests' FP16 bits: n tokens of x (cols a row) through w [rows, cols] into y.
rt_cuda_f16_args dense_args(const uint16_t * x, const uint16_t * w, int rows, int cols, int n, float * y) {
  return rt_cuda_f16_dense(reinterpret_cast<const __half *>(w), rows, cols, reinterpret_cast<const __half *>(x), cols, n,
                           y, rows);
}

void expect_close(const std::string & name, const std::vector<float> & gpu, const std::vector<float> & ref, float tol) {
  float worst = 0.0f;
  size_t at = 0;
  bool bad_size = gpu.size() != ref.size();
  for (size_t i = 0; !bad_size && i < gpu.size(); ++i) {
    const float d = std::fabs(gpu[i] - ref[i]);
    if (!(d <= worst)) {  // also catches NaN
      worst = std::isnan(d) ? INFINITY : d;
      at = i;
    }
  }
  const bool ok = !bad_size && worst <= tol;
  std::printf("%-34s max_abs_err %.3g (tol %.3g) %s\n", name.c_str(), worst, tol, ok ? "ok" : "FAIL");
  if (!ok) {
    ++failures;
    if (!bad_size) std::fprintf(stderr, "  at %zu: gpu %g ref %g\n", at, gpu[at], ref[at]);
    else std::fprintf(stderr, "  size %zu vs %zu\n", gpu.size(), ref.size());
  }
}

void expect(bool cond, const std::string & what) {
  std::printf("%-34s %s\n", what.c_str(), cond ? "ok" : "FAIL");
  if (!cond) ++failures;
}

struct packed_matrix {
  std::vector<uint8_t> q;
  std::vector<uint16_t> s;
};

packed_matrix random_packed(rng & r, int rows, int cols, int group, float scale_amp) {
  packed_matrix m;
  m.q.resize(static_cast<size_t>(rows) * cols / 2);
  m.s.resize(static_cast<size_t>(rows) * (cols / group));
  for (auto & b : m.q) b = static_cast<uint8_t>(r.next() & 0xFF);
  for (auto & s : m.s) s = rt::ref::float_to_half(scale_amp * (0.5f + 0.5f * std::fabs(r.uniform())));
  return m;
}

const char * kernel_name(rt_w4a16_kernel k) {
  switch (k) {
    case rt_w4a16_kernel::gemv: return "gemv";
    case rt_w4a16_kernel::mma: return "mma";
    case rt_w4a16_kernel::smem_tiled: return "smem-tiled";
    case rt_w4a16_kernel::generic: return "generic";
    default: return "auto";
  }
}

// Each W4A16 kernel forced, then the automatic choice.
const rt_w4a16_kernel W4A16_KERNELS[] = {rt_w4a16_kernel::gemv, rt_w4a16_kernel::mma, rt_w4a16_kernel::smem_tiled,
                                         rt_w4a16_kernel::generic, rt_w4a16_kernel::automatic};

bool device_has_mma() {
  int dev = 0, major = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return major >= 8;
}

// The tensor-core kernel multiplies each level by its group's scale in FP16 (one rounding of the weight), so its
// reference is the FP16 matmul over those rounded weights; the others keep level x scale exact in FP32.
std::vector<uint16_t> fp16_weights(const packed_matrix & m, int rows, int cols, int group) {
  std::vector<uint16_t> w(static_cast<size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const uint8_t b = m.q[(static_cast<size_t>(r) * cols + c) / 2];
      const int code = c % 2 == 0 ? b & 0xF : b >> 4;
      const float s = rt::ref::half_to_float(m.s[static_cast<size_t>(r) * (cols / group) + c / group]);
      w[static_cast<size_t>(r) * cols + c] = rt::ref::float_to_half(static_cast<float>(rt::kHq4Codebook[code]) * s);
    }
  }
  return w;
}

// y = x W^T over the weights the chosen kernel uses (exact or rounded to FP16).
std::vector<float> w4a16_reference(rt_w4a16_kernel chosen, const float * x, int n, const packed_matrix & m, int rows,
                                   int cols, int group) {
  std::vector<float> y(static_cast<size_t>(n) * rows);
  if (chosen == rt_w4a16_kernel::mma) {
    const std::vector<uint16_t> w = fp16_weights(m, rows, cols, group);
    rt::ref::matmul_f16(x, n, w.data(), rows, cols, y.data());
  } else {
    rt::ref::matmul_w4a16(x, n, m.q.data(), m.s.data(), rows, cols, group, y.data());
  }
  return y;
}

// A forced kernel runs when the shape and device allow it; the tensor cores must be taken wherever they exist.
rt_w4a16_kernel checked_choice(const rt_cuda_w4a16_args & a, const std::string & name) {
  const rt_w4a16_kernel got = rt_cuda_w4a16_choice(a);
  if (a.kernel == rt_w4a16_kernel::mma && a.cols % 128 == 0 && a.group_size % 8 == 0) {
    expect((got == rt_w4a16_kernel::mma) == device_has_mma(), name + ": tensor cores iff sm_80+");
  }
  return got;
}

// Plain (single group) W4A16: GEMV at n = 1 and small batches; shapes cover one or several scales per lane step,
// row and token tails, and shapes only the generic kernel takes.
void test_w4a16_plain(int rows, int cols, int group, int n, const char * label, float tol,
                      rt_w4a16_kernel kernel = rt_w4a16_kernel::automatic) {
  rng r(static_cast<uint64_t>(rows * 131 + cols * 7 + group + n));
  const packed_matrix m = random_packed(r, rows, cols, group, 0.02f);
  std::vector<uint16_t> xb;
  std::vector<float> xf;
  random_half(r, static_cast<size_t>(n) * cols, 1.0f, xb, xf);
  dev<uint8_t> dq(m.q);
  dev<uint16_t> ds(m.s);
  dev<uint16_t> dx(xb);
  dev<float> dy(static_cast<size_t>(n) * rows);
  const uint8_t * qp = dq.p;
  const __half * sp = reinterpret_cast<const __half *>(ds.p);
  dev<const uint8_t *> tq(std::vector<const uint8_t *>{qp});
  dev<const __half *> ts(std::vector<const __half *>{sp});
  rt_cuda_w4a16_args a;
  a.x = reinterpret_cast<const __half *>(dx.p);
  a.ldx = cols;
  a.y = dy.p;
  a.ldy = rows;
  a.n_entries = n;
  a.qweight = tq.p;
  a.scales = ts.p;
  a.n_groups = 1;
  a.rows = rows;
  a.cols = cols;
  a.group_size = group;
  a.kernel = kernel;
  char name[128];
  std::snprintf(name, sizeof name, "%s %dx%d g%d n%d [%s", label, rows, cols, group, n, kernel_name(kernel));
  const rt_w4a16_kernel chosen = checked_choice(a, name);
  std::snprintf(name + std::strlen(name), sizeof name - std::strlen(name), " -> %s]", kernel_name(chosen));
  rt_cuda_matmul_w4a16(a, nullptr);
  const std::vector<float> got = dy.get();
  expect_close(name, got, w4a16_reference(chosen, xf.data(), n, m, rows, cols, group),
               chosen == rt_w4a16_kernel::mma ? std::max(tol, MAX_ABS_ERR_MMA) : tol);
  if (chosen == rt_w4a16_kernel::mma) {
    // Against the exact weights the only further error is that rounding: at most 2^-11 |w x| a column.
    std::vector<float> exact(static_cast<size_t>(n) * rows);
    rt::ref::matmul_w4a16(xf.data(), n, m.q.data(), m.s.data(), rows, cols, group, exact.data());
    const std::vector<uint16_t> w = fp16_weights(m, rows, cols, group);
    bool within = true;
    for (int t = 0; t < n; ++t) {
      for (int o = 0; o < rows; ++o) {
        double bound = 0.0;
        for (int c = 0; c < cols; ++c) {
          bound += std::fabs(rt::ref::half_to_float(w[static_cast<size_t>(o) * cols + c]) * xf[static_cast<size_t>(t) * cols + c]);
        }
        bound = bound * std::ldexp(1.0, -11) + MAX_ABS_ERR_MMA;
        const size_t i = static_cast<size_t>(t) * rows + o;
        within = within && std::fabs(got[i] - exact[i]) <= bound;
      }
    }
    expect(within, std::string(name) + " within the FP16 weight rounding of the exact product");
  }
}

// Grouped W4A16 as the MoE uses it: entries sorted by expert, x rows by token, y rows by assignment, one skipped
// group (null weights) whose outputs must stay untouched, and accumulate mode. 256 columns in groups of 32 fit every
// kernel, 48 in groups of 16 only the generic one.
void test_w4a16_grouped(bool with_active, int cols = 256, int group = 32, rt_w4a16_kernel kernel = rt_w4a16_kernel::automatic,
                        int tokens = 23) {
  const int rows = 200, experts = 6, k = 2;
  rng r(99);
  std::vector<packed_matrix> mats;
  for (int e = 0; e < experts; ++e) mats.push_back(random_packed(r, rows, cols, group, 0.02f));
  std::vector<uint16_t> xb;
  std::vector<float> xf;
  random_half(r, static_cast<size_t>(tokens) * cols, 1.0f, xb, xf);
  std::vector<int> ids(static_cast<size_t>(tokens) * k);
  for (int t = 0; t < tokens; ++t) {
    ids[static_cast<size_t>(t) * k] = static_cast<int>(r.next() % experts);
    ids[static_cast<size_t>(t) * k + 1] = (ids[static_cast<size_t>(t) * k] + 1 + static_cast<int>(r.next() % (experts - 1))) % experts;
  }
  std::vector<int> offsets(experts + 1, 0), sorted, sorted_tok;
  for (int e = 0; e < experts; ++e) {
    offsets[static_cast<size_t>(e)] = static_cast<int>(sorted.size());
    for (int a = 0; a < tokens * k; ++a) {
      if (ids[static_cast<size_t>(a)] == e) {
        sorted.push_back(a);
        sorted_tok.push_back(a / k);
      }
    }
  }
  offsets[experts] = static_cast<int>(sorted.size());
  const int skipped = 3;
  std::vector<std::unique_ptr<dev<uint8_t>>> dqs;
  std::vector<std::unique_ptr<dev<uint16_t>>> dss;
  std::vector<const uint8_t *> qp;
  std::vector<const __half *> sp;
  for (int e = 0; e < experts; ++e) {
    dqs.push_back(std::make_unique<dev<uint8_t>>(mats[static_cast<size_t>(e)].q));
    dss.push_back(std::make_unique<dev<uint16_t>>(mats[static_cast<size_t>(e)].s));
    qp.push_back(e == skipped ? nullptr : dqs.back()->p);
    sp.push_back(e == skipped ? nullptr : reinterpret_cast<const __half *>(dss.back()->p));
  }
  dev<const uint8_t *> tq(qp);
  dev<const __half *> ts(sp);
  dev<int> doff(offsets), dsorted(sorted), dtok(sorted_tok);
  dev<uint16_t> dx(xb);
  std::vector<float> init(static_cast<size_t>(tokens) * k * rows);
  for (auto & v : init) v = r.uniform();
  dev<float> dy(init);
  rt_cuda_w4a16_args a;
  a.x = reinterpret_cast<const __half *>(dx.p);
  a.ldx = cols;
  a.y = dy.p;
  a.ldy = rows;
  a.rows_in = dtok.p;
  a.rows_out = dsorted.p;
  a.offsets = doff.p;
  a.qweight = tq.p;
  a.scales = ts.p;
  a.n_groups = experts;
  a.rows = rows;
  a.cols = cols;
  a.group_size = group;
  a.accumulate = true;
  a.max_group_entries = tokens;
  a.n_entries = tokens * k;
  a.kernel = kernel;
  // The active list names groups per grid row (-1 = idle row); here it leaves out the skipped group.
  std::vector<int> active;
  for (int e = 0; e < experts; ++e) if (e != skipped) active.push_back(e);
  active.push_back(-1);
  dev<int> dactive(active);
  if (with_active) {
    a.active = dactive.p;
    a.n_launch = static_cast<int>(active.size());
  }
  char name[128];
  std::snprintf(name, sizeof name, "w4a16 grouped %dx%d g%d n%d (%s) [%s", rows, cols, group, tokens,
                with_active ? "active list" : "skip + accumulate", kernel_name(kernel));
  const rt_w4a16_kernel chosen = checked_choice(a, name);
  std::snprintf(name + std::strlen(name), sizeof name - std::strlen(name), " -> %s]", kernel_name(chosen));
  rt_cuda_matmul_w4a16(a, nullptr);
  std::vector<float> ref = init;
  for (int as = 0; as < tokens * k; ++as) {
    const int e = ids[static_cast<size_t>(as)];
    if (e == skipped) continue;
    const std::vector<float> one =
        w4a16_reference(chosen, xf.data() + static_cast<size_t>(as / k) * cols, 1, mats[static_cast<size_t>(e)], rows, cols, group);
    for (int i = 0; i < rows; ++i) ref[static_cast<size_t>(as) * rows + i] += one[static_cast<size_t>(i)];
  }
  expect_close(name, dy.get(), ref, chosen == rt_w4a16_kernel::mma ? MAX_ABS_ERR_MMA : MAX_ABS_ERR_W4A16_GEMM);
}

// Gate-up projection with the SwiGLU epilogue: h = fp16(silu(gate) * up) per entry, rows_out placing each entry's h.
// Kernels without the epilogue write y and run rt_cuda_swiglu over swiglu_rows rows.
void test_w4a16_swiglu(int inter, int cols, int group, int n, rt_w4a16_kernel kernel) {
  const int rows = 2 * inter;
  rng r(static_cast<uint64_t>(rows + cols + group + n + 17));
  const packed_matrix m = random_packed(r, rows, cols, group, 0.005f);
  std::vector<uint16_t> xb;
  std::vector<float> xf;
  random_half(r, static_cast<size_t>(n) * cols, 1.0f, xb, xf);
  std::vector<int> rows_out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) rows_out[static_cast<size_t>(i)] = n - 1 - i;
  dev<uint8_t> dq(m.q);
  dev<uint16_t> ds(m.s);
  dev<uint16_t> dx(xb);
  dev<int> dout(rows_out);
  dev<float> dy(static_cast<size_t>(n) * rows);
  dev<uint16_t> dh(static_cast<size_t>(n) * inter);
  dev<const uint8_t *> tq(std::vector<const uint8_t *>{dq.p});
  dev<const __half *> ts(std::vector<const __half *>{reinterpret_cast<const __half *>(ds.p)});
  rt_cuda_w4a16_args a;
  a.x = reinterpret_cast<const __half *>(dx.p);
  a.ldx = cols;
  a.y = dy.p;
  a.ldy = rows;
  a.rows_out = dout.p;
  a.n_entries = n;
  a.qweight = tq.p;
  a.scales = ts.p;
  a.rows = rows;
  a.cols = cols;
  a.group_size = group;
  a.y_swiglu = reinterpret_cast<__half *>(dh.p);
  a.ld_swiglu = inter;
  a.swiglu_rows = n;
  a.kernel = kernel;
  char name[128];
  std::snprintf(name, sizeof name, "w4a16 swiglu epilogue %dx%d g%d n%d [%s", rows, cols, group, n, kernel_name(kernel));
  const rt_w4a16_kernel chosen = checked_choice(a, name);
  std::snprintf(name + std::strlen(name), sizeof name - std::strlen(name), " -> %s]", kernel_name(chosen));
  rt_cuda_matmul_w4a16(a, nullptr);
  const std::vector<float> gu = w4a16_reference(chosen, xf.data(), n, m, rows, cols, group);
  std::vector<float> ref(static_cast<size_t>(n) * inter);
  for (int t = 0; t < n; ++t) {
    const float * row = gu.data() + static_cast<size_t>(t) * rows;
    float * h = ref.data() + static_cast<size_t>(rows_out[static_cast<size_t>(t)]) * inter;
    rt::ref::swiglu(row, row + inter, inter, h);
    for (int i = 0; i < inter; ++i) h[i] = rt::ref::half_to_float(rt::ref::float_to_half(h[i]));
  }
  // GPU expf vs std::exp (and FP32 sums in another order) can flip an FP16 rounding of h: one ulp at |h| < 8.
  expect_close(name, halves_to_floats(dh.get()), ref, MAX_ABS_ERR_SWIGLU);
}

void test_f16(int rows, int cols, int n, bool gather, const char * label, float tol = MAX_ABS_ERR_F16_GEMM,
              rt_f16_kernel kernel = rt_f16_kernel::automatic, int gemv_blocks_per_sm = 0,
              rt_f16_kernel want = rt_f16_kernel::automatic) {
  rng r(static_cast<uint64_t>(rows + cols * 3 + n));
  std::vector<uint16_t> wb, xb;
  std::vector<float> wf, xf;
  random_half(r, static_cast<size_t>(rows) * cols, 0.1f, wb, wf);
  const int x_rows = n + 3;
  random_half(r, static_cast<size_t>(x_rows) * cols, 1.0f, xb, xf);
  std::vector<int> rows_in(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) rows_in[static_cast<size_t>(i)] = gather ? (i * 2 + 1) % x_rows : i;
  dev<uint16_t> dw(wb), dx(xb);
  dev<int> drows(rows_in);
  dev<float> dy(static_cast<size_t>(n) * rows);
  rt_cuda_f16_args a = dense_args(dx.p, dw.p, rows, cols, n, dy.p);
  a.rows_in = gather ? drows.p : nullptr;
  a.kernel = kernel;
  a.gemv_blocks_per_sm = gemv_blocks_per_sm;
  const rt_f16_kernel chosen = rt_cuda_f16_choice(a);
  if (want != rt_f16_kernel::automatic) expect(chosen == want, std::string(label) + ": the expected decode GEMV");
  if (kernel == rt_f16_kernel::mma && cols % 128 == 0) {
    expect((chosen == rt_f16_kernel::mma) == device_has_mma(), std::string(label) + ": tensor cores iff sm_80+");
  }
  rt_cuda_matmul_f16(a, nullptr);
  std::vector<float> xg(static_cast<size_t>(n) * cols);
  for (int i = 0; i < n; ++i) {
    std::copy_n(xf.begin() + static_cast<std::ptrdiff_t>(rows_in[static_cast<size_t>(i)]) * cols, cols,
                xg.begin() + static_cast<std::ptrdiff_t>(i) * cols);
  }
  std::vector<float> ref(static_cast<size_t>(n) * rows);
  rt::ref::matmul_f16(xg.data(), n, wb.data(), rows, cols, ref.data());
  char name[96];
  static const char * const names[] = {"auto", "mma", "gemv", "gemv-split", "cuda-cores", "generic"};
  std::snprintf(name, sizeof name, "%s %dx%d n%d [%s -> %s]", label, rows, cols, n, names[static_cast<int>(kernel)],
                names[static_cast<int>(chosen)]);
  expect_close(name, dy.get(), ref, chosen == rt_f16_kernel::mma ? std::max(tol, MAX_ABS_ERR_MMA) : tol);
}

void test_rmsnorm() {
  const int n_rows = 5, n = 300, ld = 320;
  rng r(5);
  std::vector<float> x(static_cast<size_t>(n_rows) * ld);
  for (auto & v : x) v = 3.0f * r.uniform();
  std::vector<uint16_t> wb;
  std::vector<float> wf;
  random_half(r, n, 1.5f, wb, wf);
  dev<float> dx(x);
  dev<uint16_t> dw(wb);
  dev<uint16_t> dy16(static_cast<size_t>(n_rows) * n);
  rt_cuda_rmsnorm(dx.p, ld, reinterpret_cast<const __half *>(dw.p), 1e-5f, n_rows, n,
                  reinterpret_cast<__half *>(dy16.p), nullptr, n, nullptr);
  std::vector<float> ref(static_cast<size_t>(n_rows) * n);
  for (int i = 0; i < n_rows; ++i) {
    rt::ref::rmsnorm(x.data() + static_cast<size_t>(i) * ld, wf.data(), 1e-5f, n, ref.data() + static_cast<size_t>(i) * n);
  }
  expect_close("rmsnorm fp16 out", halves_to_floats(dy16.get()), ref, MAX_ABS_ERR_RMSNORM_F16);
  dev<float> dy32(static_cast<size_t>(n_rows) * n);
  rt_cuda_rmsnorm(dx.p, ld, reinterpret_cast<const __half *>(dw.p), 1e-5f, n_rows, n, nullptr, dy32.p, n, nullptr);
  expect_close("rmsnorm fp32 out, packed rows from strided ones", dy32.get(), ref, MAX_ABS_ERR_RMSNORM_F32);
  // In place on FP32 strided rows (the q/k norm case); the padding columns must not change.
  rt_cuda_rmsnorm(dx.p, ld, reinterpret_cast<const __half *>(dw.p), 1e-5f, n_rows, n, nullptr, dx.p, ld, nullptr);
  std::vector<float> got = dx.get();
  std::vector<float> ref_full = x;
  for (int i = 0; i < n_rows; ++i) std::copy_n(ref.begin() + static_cast<std::ptrdiff_t>(i) * n, n, ref_full.begin() + static_cast<std::ptrdiff_t>(i) * ld);
  expect_close("rmsnorm fp32 in place", got, ref_full, MAX_ABS_ERR_RMSNORM_F32);
}

void test_rope() {
  const int n_tokens = 4, heads = 3, hd = 64, ld = heads * hd + 10;
  rng r(6);
  std::vector<float> x(static_cast<size_t>(n_tokens) * ld);
  for (auto & v : x) v = r.uniform();
  const std::vector<int> pos = {0, 1, 17, 1000};
  dev<float> dx(x);
  dev<int> dpos(pos);
  rt_cuda_rope(dx.p, ld, n_tokens, heads, hd, dpos.p, 10000.0f, nullptr);
  std::vector<float> ref = x;
  for (int t = 0; t < n_tokens; ++t) rt::ref::rope(ref.data() + static_cast<size_t>(t) * ld, heads, hd, pos[static_cast<size_t>(t)], 10000.0f);
  expect_close("rope rotate-half", dx.get(), ref, MAX_ABS_ERR_ROPE);
}

// Two sequences: sequence 0 prefilled with 6 tokens in one call, then a mixed call with one decode token of
// sequence 0 (position 6) and a 3-token prefill of sequence 1; GQA with 4 query heads over 2 KV heads. A head_dim
// that is not a multiple of 8 takes the kernel's __half2 reads of K instead of 16-byte ones.
void test_attention(int hd, int max_ctx = 16) {
  const int nh = 4, nkv = 2, ld = (nh + 2 * nkv) * hd;
  const int kv_dim = nkv * hd;
  rng r(7);
  dev<uint16_t> kc0(static_cast<size_t>(max_ctx) * kv_dim), vc0(static_cast<size_t>(max_ctx) * kv_dim);
  dev<uint16_t> kc1(static_cast<size_t>(max_ctx) * kv_dim), vc1(static_cast<size_t>(max_ctx) * kv_dim);
  dev<__half *> kt(std::vector<__half *>{reinterpret_cast<__half *>(kc0.p), reinterpret_cast<__half *>(kc1.p)});
  dev<__half *> vt(std::vector<__half *>{reinterpret_cast<__half *>(vc0.p), reinterpret_cast<__half *>(vc1.p)});
  // Host mirror of the caches (FP16-rounded, as the kernel stores them).
  std::vector<std::vector<float>> kh(2, std::vector<float>(static_cast<size_t>(max_ctx) * kv_dim));
  std::vector<std::vector<float>> vh = kh;
  std::vector<float> ws(rt_cuda_attention_workspace_floats(nh, hd, max_ctx, 4));
  dev<float> dws(ws);
  auto run = [&](const std::vector<int> & slot, const std::vector<int> & pos, bool split, const char * label,
                 int split_len = 4, int want_splits = 0, int blocks_per_sm = 0, float * workspace = nullptr) {
    const int n = static_cast<int>(slot.size());
    std::vector<float> qkv(static_cast<size_t>(n) * ld);
    for (auto & v : qkv) v = 2.0f * r.uniform();
    dev<float> dqkv(qkv);
    dev<int> dslot(slot), dpos(pos);
    dev<uint16_t> dout(static_cast<size_t>(n) * nh * hd);
    rt_cuda_attention_args a;
    a.q = dqkv.p;
    a.k = dqkv.p + nh * hd;
    a.v = dqkv.p + nh * hd + kv_dim;
    a.ld = ld;
    a.k_seq = kt.p;
    a.v_seq = vt.p;
    a.tok_slot = dslot.p;
    a.tok_pos = dpos.p;
    a.n_tokens = n;
    a.n_heads = nh;
    a.n_kv_heads = nkv;
    a.head_dim = hd;
    a.max_context = max_ctx;
    a.out = reinterpret_cast<__half *>(dout.p);
    a.workspace = split ? (workspace != nullptr ? workspace : dws.p) : nullptr;
    a.split_len = split_len;
    a.blocks_per_sm = blocks_per_sm;
    if (want_splits > 0) {
      expect(rt_cuda_attention_splits(a) == want_splits,
             std::string(label) + ": " + std::to_string(want_splits) + " block(s) a head");
    }
    rt_cuda_attention(a, nullptr);
    if (split) {
      // The same step with the combine as the split launch's tail: the same operations, so the same bits, and the
      // arrival counters back at zero for the next step.
      dev<unsigned> arrivals(static_cast<size_t>(RT_ATTENTION_SPLIT_MAX_TOKENS) * nh);
      dev<uint16_t> fused(static_cast<size_t>(n) * nh * hd);
      a.arrivals = arrivals.p;
      a.out = reinterpret_cast<__half *>(fused.p);
      rt_cuda_attention(a, nullptr);
      const std::vector<unsigned> left = arrivals.get();
      expect(halves_to_floats(fused.get()) == halves_to_floats(dout.get()) &&
                 std::all_of(left.begin(), left.end(), [](unsigned c) { return c == 0; }),
             std::string(label) + " hd" + std::to_string(hd) + ", fused combine");
    }
    for (int t = 0; t < n; ++t) {
      for (int i = 0; i < kv_dim; ++i) {
        const size_t c = static_cast<size_t>(pos[static_cast<size_t>(t)]) * kv_dim + i;
        kh[static_cast<size_t>(slot[static_cast<size_t>(t)])][c] =
            rt::ref::half_to_float(rt::ref::float_to_half(qkv[static_cast<size_t>(t) * ld + nh * hd + i]));
        vh[static_cast<size_t>(slot[static_cast<size_t>(t)])][c] =
            rt::ref::half_to_float(rt::ref::float_to_half(qkv[static_cast<size_t>(t) * ld + nh * hd + kv_dim + i]));
      }
    }
    std::vector<float> ref(static_cast<size_t>(n) * nh * hd);
    for (int t = 0; t < n; ++t) {
      for (int h = 0; h < nh; ++h) {
        const int g = h / (nh / nkv);
        const auto & K = kh[static_cast<size_t>(slot[static_cast<size_t>(t)])];
        const auto & V = vh[static_cast<size_t>(slot[static_cast<size_t>(t)])];
        rt::ref::attention_head(qkv.data() + static_cast<size_t>(t) * ld + h * hd, K.data() + g * hd, V.data() + g * hd,
                                pos[static_cast<size_t>(t)] + 1, kv_dim, hd,
                                ref.data() + (static_cast<size_t>(t) * nh + h) * hd);
      }
    }
    char name[96];
    std::snprintf(name, sizeof name, "%s hd%d", label, hd);
    expect_close(name, halves_to_floats(dout.get()), ref, MAX_ABS_ERR_ATTENTION);
  };
  if (max_ctx > 16) {
    // Positions a block chosen on the device (split_len 0): on the simulator's 4 SMs a one-token step of 4 heads
    // spreads each head over 2 blocks, 151 positions rounded up to 160 at position 300, at position 40 the minimum
    // of 32; two tokens make 8 (token, head) pairs, enough blocks without a split.
    std::vector<int> slots, positions;
    for (int p = 0; p < 300; ++p) {
      slots.push_back(0);
      positions.push_back(p);
    }
    run(slots, positions, false, "attention long prefill");
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int one = sms == 4 ? 2 : 0, two = sms == 4 ? 1 : 0;  // on a GPU: correct for its own split
    run({0}, {300}, true, "attention decode, split by SM count", 0, one);
    run({0}, {40}, true, "attention decode, shortest split by SM count", 0, one);
    run({1, 1, 1}, {0, 1, 2}, false, "attention second sequence");
    run({0, 1}, {301, 3}, true, "attention decode of two, by SM count", 0, two);
    // Another aim than the built-in 2 blocks an SM (the GPU benchmark tunes it): 8 an SM over the 4 SMs' 4 heads, in
    // a workspace of exactly the size asked for it (AddressSanitizer sees a block that writes past it).
    dev<float> ws8(rt_cuda_attention_workspace_floats(nh, hd, max_ctx, 0, 8));
    run({0}, {302}, true, "attention decode, 8 blocks an SM", 0, sms == 4 ? 8 : 0, 8, ws8.p);
    run({1}, {40}, true, "attention decode, 1 block an SM", 0, sms == 4 ? 1 : 0, 1);
    return;
  }
  run({0, 0, 0, 0, 0, 0}, {0, 1, 2, 3, 4, 5}, false, "attention prefill (causal)");
  run({0, 1, 1, 1}, {6, 0, 1, 2}, true, "attention mixed, split positions");
  run({0, 1}, {7, 3}, false, "attention decode, one block");
  run({1, 0}, {4, 8}, true, "attention decode, split positions");
  // The last position of the last cache: a read past a head's head_dim would leave the allocation.
  run({1}, {max_ctx - 1}, true, "attention decode at the last position");
  // A split as long as the context: one block per head, no combine.
  run({0, 1}, {9, 5}, true, "attention decode, split_len = max_context", max_ctx);
  // More tokens than a split step takes (the workspace holds RT_ATTENTION_SPLIT_MAX_TOKENS): no split.
  std::vector<int> slots9, pos9;
  for (int i = 0; i <= RT_ATTENTION_SPLIT_MAX_TOKENS; ++i) {
    slots9.push_back(1);
    pos9.push_back(i);
  }
  run(slots9, pos9, true, "attention prefill past the split batch");
  std::vector<float> k0 = halves_to_floats(kc0.get());
  expect_close(hd == 64 ? "attention kv cache store" : "attention kv cache store hd" + std::to_string(hd), k0, kh[0], 0.0f);
}

// The fused prologue equals rmsnorm(q), rmsnorm(k), rope(q), rope(k) and the K/V store, per token (GQA shapes).
void test_qk_norm_rope() {
  const int nh = 4, nkv = 2, hd = 32, n = 3, max_ctx = 8, ld = (nh + 2 * nkv) * hd + 6;
  const int qn = nh * hd, kn = nkv * hd;
  rng r(12);
  std::vector<float> qkv(static_cast<size_t>(n) * ld);
  for (auto & v : qkv) v = 2.0f * r.uniform();
  std::vector<uint16_t> wqb, wkb;
  std::vector<float> wqf, wkf;
  random_half(r, qn, 1.5f, wqb, wqf);
  random_half(r, kn, 1.5f, wkb, wkf);
  const std::vector<int> pos = {0, 5, 3}, slot = {0, 0, 1};
  dev<float> dqkv(qkv);
  dev<uint16_t> dwq(wqb), dwk(wkb);
  dev<int> dpos(pos), dslot(slot);
  dev<uint16_t> kc0(static_cast<size_t>(max_ctx) * kn), vc0(static_cast<size_t>(max_ctx) * kn);
  dev<uint16_t> kc1(static_cast<size_t>(max_ctx) * kn), vc1(static_cast<size_t>(max_ctx) * kn);
  dev<__half *> kt(std::vector<__half *>{reinterpret_cast<__half *>(kc0.p), reinterpret_cast<__half *>(kc1.p)});
  dev<__half *> vt(std::vector<__half *>{reinterpret_cast<__half *>(vc0.p), reinterpret_cast<__half *>(vc1.p)});
  rt_cuda_qk_norm_rope_args a;
  a.qkv = dqkv.p;
  a.ld = ld;
  a.n_tokens = n;
  a.n_heads = nh;
  a.n_kv_heads = nkv;
  a.head_dim = hd;
  a.q_norm = reinterpret_cast<const __half *>(dwq.p);
  a.k_norm = reinterpret_cast<const __half *>(dwk.p);
  a.eps = 1e-5f;
  a.theta = 10000.0f;
  a.positions = dpos.p;
  a.tok_slot = dslot.p;
  a.k_seq = kt.p;
  a.v_seq = vt.p;
  rt_cuda_qk_norm_rope(a, nullptr);
  std::vector<float> ref_qkv = qkv;
  std::vector<std::vector<float>> kref(2, std::vector<float>(static_cast<size_t>(max_ctx) * kn, 0.0f));
  std::vector<std::vector<float>> vref = kref;
  for (int t = 0; t < n; ++t) {
    float * row = ref_qkv.data() + static_cast<size_t>(t) * ld;
    rt::ref::rmsnorm(row, wqf.data(), 1e-5f, qn, row);
    rt::ref::rope(row, nh, hd, pos[static_cast<size_t>(t)], 10000.0f);
    std::vector<float> kk(row + qn, row + qn + kn);
    rt::ref::rmsnorm(kk.data(), wkf.data(), 1e-5f, kn, kk.data());
    rt::ref::rope(kk.data(), nkv, hd, pos[static_cast<size_t>(t)], 10000.0f);
    for (int i = 0; i < kn; ++i) {
      const size_t c = static_cast<size_t>(pos[static_cast<size_t>(t)]) * kn + i;
      kref[static_cast<size_t>(slot[static_cast<size_t>(t)])][c] = rt::ref::half_to_float(rt::ref::float_to_half(kk[static_cast<size_t>(i)]));
      vref[static_cast<size_t>(slot[static_cast<size_t>(t)])][c] = rt::ref::half_to_float(rt::ref::float_to_half(row[qn + kn + i]));
    }
  }
  // Only q changes in the qkv rows; k and v stay as they were.
  std::vector<float> got = dqkv.get();
  for (int t = 0; t < n; ++t) {
    for (int i = qn; i < ld; ++i) ref_qkv[static_cast<size_t>(t) * ld + i] = qkv[static_cast<size_t>(t) * ld + i];
  }
  expect_close("qk norm+rope: q in place", got, ref_qkv, MAX_ABS_ERR_QK_NORM_ROPE);
  std::vector<float> k_all = halves_to_floats(kc0.get()), k1 = halves_to_floats(kc1.get());
  k_all.insert(k_all.end(), k1.begin(), k1.end());
  std::vector<float> k_ref = kref[0];
  k_ref.insert(k_ref.end(), kref[1].begin(), kref[1].end());
  // One FP16 ulp (2^-9 for |k| in [2, 4)) when the two FP32 values straddle a rounding boundary.
  expect_close("qk norm+rope: k cache", k_all, k_ref, MAX_ABS_ERR_QK_NORM_ROPE + 4e-3f);
  std::vector<float> v_all = halves_to_floats(vc0.get()), v1 = halves_to_floats(vc1.get());
  v_all.insert(v_all.end(), v1.begin(), v1.end());
  std::vector<float> v_ref = vref[0];
  v_ref.insert(v_ref.end(), vref[1].begin(), vref[1].end());
  expect_close("qk norm+rope: v cache", v_all, v_ref, 0.0f);
}

void test_router(bool norm) {
  const int tokens = 9, experts = 64, k = 8;
  rng r(norm ? 8 : 9);
  std::vector<float> logits(static_cast<size_t>(tokens) * experts);
  for (auto & v : logits) v = 4.0f * r.uniform();
  logits[3] = logits[5];  // a tie inside the top-k goes to the lower index
  // A confident router: every probability but one underflows to 0, and the top-k still names k experts (the lowest
  // indices among the zeros, as the reference picks them).
  logits[static_cast<size_t>(1) * experts + experts - 1] = 200.0f;
  dev<float> dl(logits);
  dev<int> dids(static_cast<size_t>(tokens) * k);
  dev<float> dw(static_cast<size_t>(tokens) * k);
  rt_cuda_router_topk(dl.p, tokens, experts, k, norm, dids.p, dw.p, nullptr);
  std::vector<int> ids_ref(static_cast<size_t>(tokens) * k);
  std::vector<float> w_ref(static_cast<size_t>(tokens) * k);
  for (int t = 0; t < tokens; ++t) {
    rt::ref::router_topk(logits.data() + static_cast<size_t>(t) * experts, experts, k, norm,
                         ids_ref.data() + static_cast<size_t>(t) * k, w_ref.data() + static_cast<size_t>(t) * k);
  }
  expect(dids.get() == ids_ref, norm ? "router top-k ids (norm)" : "router top-k ids");
  expect_close(norm ? "router top-k weights (norm)" : "router top-k weights", dw.get(), w_ref, MAX_ABS_ERR_ROUTER);
}

// A token whose router logits are all NaN (a broken model) must not disturb the block's other tokens or write
// outside its own shared-memory row; it is the last warp of its block, so a stray write lands past the block's
// shared memory (AddressSanitizer) or in the next token's row.
void test_router_nan_row() {
  const int tokens = 2 * RT_ROUTER_WARPS, experts = 64, k = 8, nan_token = RT_ROUTER_WARPS - 1;
  rng r(10);
  std::vector<float> logits(static_cast<size_t>(tokens) * experts);
  for (auto & v : logits) v = 4.0f * r.uniform();
  for (int e = 0; e < experts; ++e) logits[static_cast<size_t>(nan_token) * experts + e] = NAN;
  dev<float> dl(logits);
  dev<int> dids(static_cast<size_t>(tokens) * k);
  dev<float> dw(static_cast<size_t>(tokens) * k);
  rt_cuda_router_topk(dl.p, tokens, experts, k, false, dids.p, dw.p, nullptr);
  const std::vector<int> ids = dids.get();
  bool others_ok = true;
  for (int t = 0; t < tokens; ++t) {
    if (t == nan_token) continue;
    std::vector<int> ref(static_cast<size_t>(k));
    std::vector<float> w(static_cast<size_t>(k));
    rt::ref::router_topk(logits.data() + static_cast<size_t>(t) * experts, experts, k, false, ref.data(), w.data());
    others_ok = others_ok && std::equal(ref.begin(), ref.end(), ids.begin() + static_cast<std::ptrdiff_t>(t) * k);
  }
  expect(others_ok, "router top-k: a NaN row leaves the other tokens' ids as the reference's");
}

void test_moe_group() {
  const int tokens = 300, k = 8, experts = 64;
  rng r(10);
  std::vector<int> ids(static_cast<size_t>(tokens) * k);
  for (auto & v : ids) v = static_cast<int>(r.next() % 20) * 3;  // some experts never routed
  dev<int> dids(ids);
  dev<int> doff(experts + 1), dsorted(ids.size()), dtok(ids.size()), dactive(experts);
  rt_cuda_moe_group(dids.p, static_cast<int>(ids.size()), k, experts, doff.p, dsorted.p, dtok.p, dactive.p, nullptr);
  const std::vector<int> off = doff.get(), sorted = dsorted.get(), tok = dtok.get(), active = dactive.get();
  std::vector<int> active_ref(static_cast<size_t>(experts), -1);
  for (int e = 0, n = 0; e < experts; ++e) {
    if (std::count(ids.begin(), ids.end(), e) > 0) active_ref[static_cast<size_t>(n++)] = e;
  }
  expect(active == active_ref, "moe group: active expert list");
  bool ok = off[0] == 0 && off[static_cast<size_t>(experts)] == static_cast<int>(ids.size());
  std::vector<int> seen(ids.size(), 0);
  for (int e = 0; e < experts && ok; ++e) {
    for (int p = off[static_cast<size_t>(e)]; p < off[static_cast<size_t>(e) + 1]; ++p) {
      const int a = sorted[static_cast<size_t>(p)];
      ok = ok && a >= 0 && a < static_cast<int>(ids.size()) && ids[static_cast<size_t>(a)] == e &&
           tok[static_cast<size_t>(p)] == a / k;
      if (ok) ++seen[static_cast<size_t>(a)];
    }
  }
  ok = ok && std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; });
  expect(ok, "moe group: each assignment once, by expert");
}

// Routing and grouping fused in one launch equal the two separate launches: ids and weights bit for bit, the same
// offsets and active list, each group holding the same assignments (their order inside a group is unspecified).
// Token counts from one to the limit (several tokens per warp), a NaN row, and shapes the fused kernel refuses.
void test_route_and_group(int tokens, int experts, int k, bool norm) {
  char name[96];
  std::snprintf(name, sizeof name, "route and group %d tokens, %d experts, top-%d%s", tokens, experts, k, norm ? " norm" : "");
  rng r(static_cast<uint64_t>(tokens * 131 + experts + k));
  std::vector<float> logits(static_cast<size_t>(tokens) * experts);
  for (auto & v : logits) v = 4.0f * r.uniform();
  if (tokens > 2) {
    for (int e = 0; e < experts; ++e) logits[static_cast<size_t>(tokens / 2) * experts + e] = NAN;
  }
  const size_t A = static_cast<size_t>(tokens) * k;
  dev<float> dl(logits);
  dev<int> ids_a(A), ids_b(A), off_a(experts + 1), off_b(experts + 1), sorted_a(A), sorted_b(A), tok_a(A), tok_b(A),
      act_a(experts), act_b(experts);
  dev<float> w_a(A), w_b(A);
  expect(rt_cuda_route_and_group_fits(tokens, experts, k), std::string(name) + ": fits");
  rt_cuda_route_and_group(dl.p, tokens, experts, k, norm, ids_a.p, w_a.p, off_a.p, sorted_a.p, tok_a.p, act_a.p, nullptr);
  rt_cuda_router_topk(dl.p, tokens, experts, k, norm, ids_b.p, w_b.p, nullptr);
  rt_cuda_moe_group(ids_b.p, static_cast<int>(A), k, experts, off_b.p, sorted_b.p, tok_b.p, act_b.p, nullptr);
  const std::vector<int> off = off_a.get();
  expect(ids_a.get() == ids_b.get() && w_a.get() == w_b.get(), std::string(name) + ": ids and weights as the router's");
  expect(off == off_b.get() && act_a.get() == act_b.get(), std::string(name) + ": offsets and active experts as the grouping's");
  const std::vector<int> sa = sorted_a.get(), sb = sorted_b.get(), ta = tok_a.get();
  bool same_groups = true;
  for (int e = 0; e < experts; ++e) {
    const auto lo = static_cast<std::ptrdiff_t>(off[static_cast<size_t>(e)]), hi = static_cast<std::ptrdiff_t>(off[static_cast<size_t>(e) + 1]);
    std::vector<int> ga(sa.begin() + lo, sa.begin() + hi), gb(sb.begin() + lo, sb.begin() + hi);
    std::sort(ga.begin(), ga.end());
    std::sort(gb.begin(), gb.end());
    same_groups = same_groups && ga == gb;
    for (auto p = lo; p < hi; ++p) same_groups = same_groups && ta[static_cast<size_t>(p)] == sa[static_cast<size_t>(p)] / k;
  }
  expect(same_groups, std::string(name) + ": the same assignments in each group");
}

void test_swiglu_reduce_embed_argmax() {
  rng r(11);
  const int rows = 7, inter = 50;
  std::vector<float> gu(static_cast<size_t>(rows) * 2 * inter);
  for (auto & v : gu) v = 4.0f * r.uniform();
  dev<float> dgu(gu);
  dev<uint16_t> dh(static_cast<size_t>(rows) * inter);
  rt_cuda_swiglu(dgu.p, rows, inter, reinterpret_cast<__half *>(dh.p), nullptr);
  std::vector<float> ref(static_cast<size_t>(rows) * inter);
  for (int i = 0; i < rows; ++i) {
    rt::ref::swiglu(gu.data() + static_cast<size_t>(i) * 2 * inter, gu.data() + static_cast<size_t>(i) * 2 * inter + inter,
                    inter, ref.data() + static_cast<size_t>(i) * inter);
  }
  expect_close("swiglu", halves_to_floats(dh.get()), ref, MAX_ABS_ERR_SWIGLU);

  const int tokens = 5, k = 3, hidden = 700;  // several columns per thread of the fused norm
  std::vector<float> z(static_cast<size_t>(tokens) * k * hidden), w(static_cast<size_t>(tokens) * k), x(static_cast<size_t>(tokens) * hidden);
  for (auto & v : z) v = r.uniform();
  for (auto & v : w) v = 0.5f * (1.0f + r.uniform());
  for (auto & v : x) v = r.uniform();
  dev<float> dz(z), dw(w), dx(x);
  rt_cuda_moe_reduce(dz.p, dw.p, tokens, k, hidden, dx.p, nullptr, 0.0f, nullptr, nullptr);
  std::vector<float> xr = x;
  for (int t = 0; t < tokens; ++t) {
    for (int c = 0; c < hidden; ++c) {
      float s = 0.0f;
      for (int j = 0; j < k; ++j) s += w[static_cast<size_t>(t) * k + j] * z[(static_cast<size_t>(t) * k + j) * hidden + c];
      xr[static_cast<size_t>(t) * hidden + c] += s;
    }
  }
  expect_close("moe reduce", dx.get(), xr, MAX_ABS_ERR_MOE_REDUCE);

  // With the next layer's RMSNorm fused: the same residual, and the normalised FP16 rows equal to a separate
  // rt_cuda_rmsnorm of it bit for bit (and to the CPU reference within the norm's tolerance).
  std::vector<uint16_t> nb;
  std::vector<float> nf;
  random_half(r, hidden, 1.5f, nb, nf);
  dev<uint16_t> dnorm(nb);
  const auto * norm_w = reinterpret_cast<const __half *>(dnorm.p);
  dev<float> dx2(x);
  dev<uint16_t> dy_fused(static_cast<size_t>(tokens) * hidden), dy_sep(static_cast<size_t>(tokens) * hidden);
  rt_cuda_moe_reduce(dz.p, dw.p, tokens, k, hidden, dx2.p, norm_w, 1e-5f, reinterpret_cast<__half *>(dy_fused.p), nullptr);
  rt_cuda_rmsnorm(dx2.p, hidden, norm_w, 1e-5f, tokens, hidden, reinterpret_cast<__half *>(dy_sep.p), nullptr, hidden, nullptr);
  const std::vector<float> x_fused = dx2.get();
  expect(x_fused == dx.get(), "moe reduce + norm: the residual as without the norm");
  expect(dy_fused.get() == dy_sep.get(), "moe reduce + norm: FP16 rows equal to a separate rmsnorm, bit for bit");
  std::vector<float> yref(static_cast<size_t>(tokens) * hidden);
  for (int t = 0; t < tokens; ++t) {
    rt::ref::rmsnorm(xr.data() + static_cast<size_t>(t) * hidden, nf.data(), 1e-5f, hidden, yref.data() + static_cast<size_t>(t) * hidden);
  }
  expect_close("moe reduce + norm", halves_to_floats(dy_fused.get()), yref, MAX_ABS_ERR_RMSNORM_F16);

  const int vocab = 40, dim = 24;
  std::vector<uint16_t> tb;
  std::vector<float> tf;
  random_half(r, static_cast<size_t>(vocab) * dim, 1.0f, tb, tf);
  const std::vector<int> ids = {3, 0, 39, 3, 40};
  dev<uint16_t> dt(tb);
  dev<int> dids(ids);
  dev<float> de(ids.size() * dim);
  rt_cuda_embedding(dids.p, static_cast<int>(ids.size()), reinterpret_cast<const __half *>(dt.p), vocab, dim, de.p, nullptr,
                    0.0f, nullptr, nullptr);
  std::vector<float> eref(ids.size() * dim, 0.0f);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < vocab) std::copy_n(tf.begin() + static_cast<std::ptrdiff_t>(ids[i]) * dim, dim, eref.begin() + static_cast<std::ptrdiff_t>(i) * dim);
  }
  expect_close("embedding gather", de.get(), eref, 0.0f);
  {
    // With the first layer's norm in the same launch: the same x, and rt_cuda_rmsnorm's bits for xn.
    std::vector<uint16_t> nb;
    std::vector<float> nf2;
    random_half(r, dim, 1.5f, nb, nf2);
    dev<uint16_t> dnw(nb), fused_xn(ids.size() * dim), separate_xn(ids.size() * dim);
    dev<float> fused_x(ids.size() * dim);
    const int n_ids = static_cast<int>(ids.size());
    rt_cuda_embedding(dids.p, n_ids, reinterpret_cast<const __half *>(dt.p), vocab, dim, fused_x.p,
                           reinterpret_cast<const __half *>(dnw.p), 1e-5f, reinterpret_cast<__half *>(fused_xn.p), nullptr);
    rt_cuda_rmsnorm(de.p, dim, reinterpret_cast<const __half *>(dnw.p), 1e-5f, n_ids, dim,
                    reinterpret_cast<__half *>(separate_xn.p), nullptr, dim, nullptr);
    expect(fused_x.get() == de.get() && fused_xn.get() == separate_xn.get(), "embedding + first norm in one launch");
  }

  const int arows = 5, cols = 50304;
  std::vector<float> lg(static_cast<size_t>(arows) * cols);
  for (auto & v : lg) v = r.uniform();
  lg[static_cast<size_t>(0) * cols + 777] = 5.0f;
  lg[static_cast<size_t>(0) * cols + 50000] = 5.0f;  // tie: lower index wins
  lg[static_cast<size_t>(1) * cols + 50303] = 9.0f;
  lg[static_cast<size_t>(2) * cols + 10] = NAN;
  const int last_warp_col = (cols / RT_ARGMAX_THREADS - 1) * RT_ARGMAX_THREADS + RT_ARGMAX_THREADS - 1;  // the last warp's
  lg[static_cast<size_t>(3) * cols + last_warp_col] = NAN;
  lg[static_cast<size_t>(4) * cols + last_warp_col] = 7.0f;
  dev<float> dlg(lg);
  dev<int> dam(arows);
  rt_cuda_argmax(dlg.p, arows, cols, cols, dam.p, nullptr);
  std::vector<int> aref(arows);
  for (int i = 0; i < arows; ++i) aref[static_cast<size_t>(i)] = rt::ref::argmax(lg.data() + static_cast<size_t>(i) * cols, cols);
  expect(dam.get() == aref && aref[0] == 777 && aref[1] == 50303 && aref[2] == -1 && aref[3] == -1 &&
             aref[4] == last_warp_col,
         "argmax (ties low; a row with a NaN gives -1; the block's last warp counts)");
}

// A matmul tail run in the decode GEMV's last block (one launch) against the tail's own launch after the matmul:
// the same bits in every output, the arrival counter back at zero, and the in-launch form taken only for steps of at
// most RT_MATMUL_TAIL_MAX_TOKENS tokens. Enough rows for several blocks, so that which block runs the tail varies
// (and the reverse-order run makes it block 0). The tails' own kernels are checked against the CPU references above;
// the rmsnorm tail is also checked against its reference here. Both divisions of the FP16 GEMV end in the tail.
void test_matmul_tails(int n, rt_f16_kernel dense_kernel) {
  rng r(40 + static_cast<uint64_t>(n));
  dev<unsigned> arrivals(1);
  const std::string at = " n" + std::to_string(n) + (dense_kernel == rt_f16_kernel::gemv_split ? " (column split)" : "");
  const bool fusable = n <= RT_MATMUL_TAIL_MAX_TOKENS;
  // Runs `go` once with the tail in the launch and once on its own; `outputs` reads back everything the step wrote.
  const auto compare = [&](const std::string & what, const std::function<void(unsigned *)> & go,
                           const std::function<std::vector<float>()> & outputs, const std::function<void()> & reset) {
    reset();
    go(nullptr);
    const std::vector<float> separate = outputs();
    reset();
    go(arrivals.p);
    const std::vector<float> fused = outputs();
    bool same = separate.size() == fused.size();
    for (size_t i = 0; same && i < fused.size(); ++i) same = std::memcmp(&fused[i], &separate[i], sizeof(float)) == 0;
    expect(same && arrivals.get()[0] == 0, what + at + ": in-launch tail equals its own launch");
  };
  // The step under test: the matmul with its tail, given the arrival counter (nullptr: the tail's own launch).
  const auto step_of = [](auto & args) {
    return [&args](unsigned * c) {
      args.tail.arrivals = c;
      if constexpr (std::is_same_v<std::decay_t<decltype(args)>, rt_cuda_f16_args>) {
        rt_cuda_matmul_f16(args, nullptr);
      } else {
        rt_cuda_matmul_w4a16(args, nullptr);
      }
    };
  };
  const auto in_launch_as_expected = [&](const rt_cuda_matmul_tail & t, int rows, int ldy, const std::string & what) {
    rt_cuda_matmul_tail with = t;
    with.arrivals = arrivals.p;
    expect(rt_cuda_matmul_tail_in_launch(with, rows, ldy) == fusable && !rt_cuda_matmul_tail_in_launch(t, rows, ldy),
           what + at + (fusable ? ": taken in the launch" : ": a launch of its own"));
  };

  // The post-attention norm after the accumulating output projection; a row a tail thread holds in registers, and
  // one wider than that (4,100 values), which it adds one virtual thread after another.
  for (const int rows : {264, 4100}) {
    const int cols = 512;
    std::vector<uint16_t> wb, xb, nb;
    std::vector<float> wf, xf, nf;
    random_half(r, static_cast<size_t>(rows) * cols, 0.1f, wb, wf);
    random_half(r, static_cast<size_t>(n) * cols, 1.0f, xb, xf);
    random_half(r, rows, 1.5f, nb, nf);
    std::vector<float> y0(static_cast<size_t>(n) * rows);
    for (auto & v : y0) v = r.uniform();
    dev<uint16_t> dw(wb), dx(xb), dn(nb), out(static_cast<size_t>(n) * rows);
    dev<float> dy(y0);
    rt_cuda_f16_args a = dense_args(dx.p, dw.p, rows, cols, n, dy.p);
    a.accumulate = true;
    a.kernel = dense_kernel;
    a.tail.kind = rt_matmul_tail_kind::rmsnorm;
    a.tail.n_tokens = n;
    a.tail.norm_w = reinterpret_cast<const __half *>(dn.p);
    a.tail.eps = 1e-5f;
    a.tail.out16 = reinterpret_cast<__half *>(out.p);
    const std::string wide = rows > 4096 ? " (wide)" : "";
    in_launch_as_expected(a.tail, rows, rows, "rmsnorm tail" + wide);
    const auto outputs = [&] {
      std::vector<float> v = dy.get();
      const std::vector<float> o = halves_to_floats(out.get());
      v.insert(v.end(), o.begin(), o.end());
      return v;
    };
    const auto reset = [&] { CK(cudaMemcpy(dy.p, y0.data(), y0.size() * sizeof(float), cudaMemcpyHostToDevice)); };
    compare("rmsnorm tail" + wide, step_of(a), outputs, reset);
    const std::vector<float> y = dy.get();
    std::vector<float> ref(static_cast<size_t>(n) * rows);
    for (int t = 0; t < n; ++t) {
      rt::ref::rmsnorm(y.data() + static_cast<size_t>(t) * rows, nf.data(), 1e-5f, rows, ref.data() + static_cast<size_t>(t) * rows);
    }
    for (auto & v : ref) v = rt::ref::half_to_float(rt::ref::float_to_half(v));
    expect_close("rmsnorm tail vs reference" + wide + at, halves_to_floats(out.get()), ref, MAX_ABS_ERR_RMSNORM_F16);
  }

  // Routing, with and without the grouping, after the router projection.
  for (bool grouped : {true, false}) {
    const int experts = 64, k = 8, cols = 256;
    std::vector<uint16_t> wb, xb;
    std::vector<float> wf, xf;
    random_half(r, static_cast<size_t>(experts) * cols, 0.2f, wb, wf);
    random_half(r, static_cast<size_t>(n) * cols, 1.0f, xb, xf);
    dev<uint16_t> dw(wb), dx(xb);
    dev<float> logits(static_cast<size_t>(n) * experts), weights(static_cast<size_t>(n) * k);
    dev<int> ids(static_cast<size_t>(n) * k), offsets(experts + 1), sorted(static_cast<size_t>(n) * k),
        sorted_tok(static_cast<size_t>(n) * k), active(experts);
    rt_cuda_f16_args a = dense_args(dx.p, dw.p, experts, cols, n, logits.p);
    a.kernel = dense_kernel;
    a.tail.kind = rt_matmul_tail_kind::route;
    a.tail.n_tokens = n;
    a.tail.k = k;
    a.tail.norm_topk_prob = grouped;
    a.tail.ids = ids.p;
    a.tail.weights = weights.p;
    if (grouped) {
      a.tail.offsets = offsets.p;
      a.tail.sorted = sorted.p;
      a.tail.sorted_token = sorted_tok.p;
      a.tail.active = active.p;
    }
    const std::string what = grouped ? "route+group tail" : "route tail";
    in_launch_as_expected(a.tail, experts, experts, what);
    // The order inside an expert's group is unspecified: each group's entries are compared sorted.
    const auto outputs = [&] {
      std::vector<float> v = logits.get();
      const std::vector<float> w = weights.get();
      v.insert(v.end(), w.begin(), w.end());
      std::vector<int> all = ids.get();
      if (grouped) {
        const std::vector<int> off = offsets.get();
        std::vector<int> srt = sorted.get(), stok = sorted_tok.get();
        for (int e = 0; e < experts; ++e) {
          std::sort(srt.begin() + off[static_cast<size_t>(e)], srt.begin() + off[static_cast<size_t>(e) + 1]);
          std::sort(stok.begin() + off[static_cast<size_t>(e)], stok.begin() + off[static_cast<size_t>(e) + 1]);
        }
        const std::vector<int> act = active.get();
        for (const std::vector<int> & part : {off, srt, stok, act}) all.insert(all.end(), part.begin(), part.end());
      }
      for (int i : all) v.push_back(static_cast<float>(i));
      return v;
    };
    const auto reset = [&] {
      CK(cudaMemset(ids.p, 0xFF, ids.n * sizeof(int)));
      CK(cudaMemset(offsets.p, 0xFF, offsets.n * sizeof(int)));
    };
    compare(what, step_of(a), outputs, reset);
  }

  // The attention prologue after the QKV projection (GQA: 4 query heads over 2 KV heads).
  {
    const int nh = 4, nkv = 2, hd = 32, cols = 128, max_ctx = 8;
    const int rows = (nh + 2 * nkv) * hd, kn = nkv * hd;
    std::vector<uint16_t> wb, xb, qb, kb;
    std::vector<float> wf, xf, qf, kf;
    random_half(r, static_cast<size_t>(rows) * cols, 0.2f, wb, wf);
    random_half(r, static_cast<size_t>(n) * cols, 1.0f, xb, xf);
    random_half(r, nh * hd, 1.5f, qb, qf);
    random_half(r, kn, 1.5f, kb, kf);
    std::vector<int> pos, slot;
    for (int t = 0; t < n; ++t) {
      pos.push_back(1 + 3 * t);
      slot.push_back(t % 2);
    }
    dev<uint16_t> dw(wb), dx(xb), dq(qb), dk(kb);
    dev<int> dpos(pos), dslot(slot);
    dev<float> qkv(static_cast<size_t>(n) * rows);
    dev<uint16_t> kc0(static_cast<size_t>(max_ctx) * kn), vc0(static_cast<size_t>(max_ctx) * kn);
    dev<uint16_t> kc1(static_cast<size_t>(max_ctx) * kn), vc1(static_cast<size_t>(max_ctx) * kn);
    dev<__half *> kt(std::vector<__half *>{reinterpret_cast<__half *>(kc0.p), reinterpret_cast<__half *>(kc1.p)});
    dev<__half *> vt(std::vector<__half *>{reinterpret_cast<__half *>(vc0.p), reinterpret_cast<__half *>(vc1.p)});
    rt_cuda_f16_args a = dense_args(dx.p, dw.p, rows, cols, n, qkv.p);
    a.kernel = dense_kernel;
    a.tail.kind = rt_matmul_tail_kind::qk_norm_rope;
    a.tail.n_tokens = n;
    a.tail.qk.n_heads = nh;
    a.tail.qk.n_kv_heads = nkv;
    a.tail.qk.head_dim = hd;
    a.tail.qk.q_norm = reinterpret_cast<const __half *>(dq.p);
    a.tail.qk.k_norm = reinterpret_cast<const __half *>(dk.p);
    a.tail.qk.eps = 1e-5f;
    a.tail.qk.theta = 10000.0f;
    a.tail.qk.positions = dpos.p;
    a.tail.qk.tok_slot = dslot.p;
    a.tail.qk.k_seq = kt.p;
    a.tail.qk.v_seq = vt.p;
    in_launch_as_expected(a.tail, rows, rows, "qk norm+rope tail");
    const auto outputs = [&] {
      std::vector<float> v = qkv.get();
      for (const auto * c : {&kc0, &vc0, &kc1, &vc1}) {
        const std::vector<float> f = halves_to_floats(c->get());
        v.insert(v.end(), f.begin(), f.end());
      }
      return v;
    };
    const auto reset = [&] {
      for (const auto * c : {&kc0, &vc0, &kc1, &vc1}) CK(cudaMemset(c->p, 0, c->n * sizeof(uint16_t)));
    };
    compare("qk norm+rope tail", step_of(a), outputs, reset);
  }

  // The greedy pick after the LM head, with a NaN row when there are two tokens (its answer is -1): a vocabulary a few
  // blocks cover and one over 4,096 (OLMoE's is 50,304) whose largest logit appears twice, in different blocks, so
  // the last block's pick among the blocks' bests must keep the lower index. Each block leaves its best in the
  // partials; without them the argmax is a launch of its own.
  for (const int vocab : {1000, 5000}) {
    const int cols = 128;
    std::vector<uint16_t> wb, xb;
    std::vector<float> wf, xf;
    random_half(r, static_cast<size_t>(vocab) * cols, 0.2f, wb, wf);
    random_half(r, static_cast<size_t>(n) * cols, 1.0f, xb, xf);
    if (vocab > 4096) {
      // Rows 4321 and 77 the same, and far above the rest: a tie for the largest logit, in different blocks.
      for (int c = 0; c < cols; ++c) {
        wb[static_cast<size_t>(4321) * cols + c] = wb[static_cast<size_t>(77) * cols + c] = xb[static_cast<size_t>(c)];
      }
    }
    if (n >= 2) xb[static_cast<size_t>(cols) + 5] = 0x7E00;  // NaN activation: the second token's logits are NaN
    dev<uint16_t> dw(wb), dx(xb);
    dev<float> logits(static_cast<size_t>(n) * vocab);
    dev<int> picks(static_cast<size_t>(n));
    dev<int> partials(static_cast<size_t>(2 * RT_MATMUL_TAIL_MAX_TOKENS) * vocab);  // int2 a (token, row)
    rt_cuda_f16_args a = dense_args(dx.p, dw.p, vocab, cols, n, logits.p);
    a.kernel = dense_kernel;
    a.tail.kind = rt_matmul_tail_kind::argmax;
    a.tail.n_tokens = n;
    a.tail.argmax_out = picks.p;
    a.tail.argmax_partials = reinterpret_cast<int2 *>(partials.p);
    a.tail.argmax_partials_per_token = vocab;
    const std::string what = "argmax tail (" + std::to_string(vocab) + " rows)";
    in_launch_as_expected(a.tail, vocab, vocab, what);
    {
      rt_cuda_matmul_tail bare = a.tail;
      bare.arrivals = arrivals.p;
      bare.argmax_partials = nullptr;
      rt_cuda_matmul_tail short_partials = bare;
      short_partials.argmax_partials = a.tail.argmax_partials;
      short_partials.argmax_partials_per_token = vocab - 1;
      expect(!rt_cuda_matmul_tail_in_launch(bare, vocab, vocab) &&
                 !rt_cuda_matmul_tail_in_launch(short_partials, vocab, vocab),
             what + at + ": without room for every block's best, a launch of its own");
    }
    const auto outputs = [&] {
      std::vector<float> v;
      for (int p : picks.get()) v.push_back(static_cast<float>(p));
      return v;
    };
    const auto reset = [&] { CK(cudaMemset(picks.p, 0x7F, picks.n * sizeof(int))); };
    compare(what, step_of(a), outputs, reset);
    const std::vector<float> lg = logits.get();
    std::vector<int> want;
    for (int t = 0; t < n; ++t) want.push_back(rt::ref::argmax(lg.data() + static_cast<size_t>(t) * vocab, vocab));
    expect(picks.get() == want && (n < 2 || want[1] == -1) && (vocab <= 4096 || want[0] == 77),
           what + " vs reference" + at);
  }

  // The MoE reduce with the next norm after the down projection (W4A16 decode GEMV; entry t * k + j is token t's
  // j-th expert row), held in registers and not.
  for (const int hidden : {256, 4100}) {
    const int cols = 128, group = 32, k = 4;
    const packed_matrix m = random_packed(r, hidden, cols, group, 0.02f);
    std::vector<uint16_t> xb, nb;
    std::vector<float> xf, nf;
    random_half(r, static_cast<size_t>(n) * k * cols, 1.0f, xb, xf);
    random_half(r, hidden, 1.5f, nb, nf);
    std::vector<float> resid0(static_cast<size_t>(n) * hidden), w(static_cast<size_t>(n) * k);
    for (auto & v : resid0) v = 2.0f * r.uniform();
    for (auto & v : w) v = 0.5f + 0.5f * r.uniform();
    dev<uint8_t> dq(m.q);
    dev<uint16_t> ds(m.s), dx(xb), dn(nb), out(static_cast<size_t>(n) * hidden);
    const uint8_t * qp = dq.p;
    const __half * sp = reinterpret_cast<const __half *>(ds.p);
    dev<const uint8_t *> tq(std::vector<const uint8_t *>{qp});
    dev<const __half *> ts(std::vector<const __half *>{sp});
    dev<float> z(static_cast<size_t>(n) * k * hidden), resid(resid0), dwts(w);
    rt_cuda_w4a16_args a;
    a.x = reinterpret_cast<const __half *>(dx.p);
    a.ldx = cols;
    a.y = z.p;
    a.ldy = hidden;
    a.n_entries = n * k;
    a.qweight = tq.p;
    a.scales = ts.p;
    a.n_groups = 1;
    a.rows = hidden;
    a.cols = cols;
    a.group_size = group;
    a.kernel = rt_w4a16_kernel::gemv;
    a.tail.kind = rt_matmul_tail_kind::moe_reduce;
    a.tail.n_tokens = n;
    a.tail.k = k;
    a.tail.weights = dwts.p;
    a.tail.x = resid.p;
    a.tail.norm_w = reinterpret_cast<const __half *>(dn.p);
    a.tail.eps = 1e-5f;
    a.tail.out16 = reinterpret_cast<__half *>(out.p);
    const std::string wide = hidden > 4096 ? " (wide)" : "";
    in_launch_as_expected(a.tail, hidden, hidden, "moe reduce tail" + wide);
    const auto outputs = [&] {
      std::vector<float> v = z.get();
      const std::vector<float> x = resid.get(), o = halves_to_floats(out.get());
      v.insert(v.end(), x.begin(), x.end());
      v.insert(v.end(), o.begin(), o.end());
      return v;
    };
    const auto reset = [&] { CK(cudaMemcpy(resid.p, resid0.data(), resid0.size() * sizeof(float), cudaMemcpyHostToDevice)); };
    compare("moe reduce tail" + wide, step_of(a), outputs, reset);
  }
}

}  // namespace

// The LM head's INT8 screen (lm-screen.cuh) against the decode GEMV whose argmax it stands in for: every row's hi at
// or above the GEMV's logit, the floor at or below the largest, the same token (ties to the lowest row, -1 on NaN),
// and the workspace left as it found it. Returns the FP16 rows the screen computed.
uint64_t check_lm_screen(const std::string & label, const std::vector<uint16_t> & wb, int rows, int cols,
                         const std::vector<uint16_t> & xb, int n) {
  const rt_lm_screen_copy copy = rt_lm_screen_build(wb.data(), rows, cols);
  expect(copy.ok, label + ": the head is screened");
  dev<int8_t> dq(copy.q);
  dev<float4> dmeta(copy.meta);
  dev<uint16_t> dw(wb), dx(xb);
  dev<float> y(static_cast<size_t>(n) * rows), hi(static_cast<size_t>(n) * rows);
  dev<unsigned> floor(RT_LM_SCREEN_MAX_TOKENS), arrivals(1);
  dev<int2> partials(static_cast<size_t>(n) * rt_cuda_lm_screen_pick_blocks(rows));
  dev<unsigned long long> stats(2);
  dev<int> out(static_cast<size_t>(n));
  rt_cuda_f16_args full = dense_args(dx.p, dw.p, rows, cols, n, y.p);
  full.kernel = rt_f16_kernel::gemv;
  rt_cuda_matmul_f16(full, nullptr);
  const std::vector<float> logits = y.get();

  rt_cuda_lm_screen_args a = rt_cuda_lm_screen_head(copy, dq.p, dmeta.p, reinterpret_cast<const __half *>(dw.p), rows, cols);
  a.x = reinterpret_cast<const __half *>(dx.p);
  a.ldx = cols;
  a.n = n;
  a.hi = hi.p;
  a.floor = floor.p;
  a.partials = partials.p;
  a.arrivals = arrivals.p;
  a.stats = stats.p;
  a.out = out.p;
  expect(rt_cuda_lm_screen_fits(cols, n), label + ": fits the screen");
  rt_cuda_lm_screen_bounds(a, nullptr);
  const std::vector<float> h = hi.get();
  const std::vector<unsigned> fl = floor.get();
  bool contains = true, floor_ok = true;
  for (int t = 0; t < n; ++t) {
    float largest = -INFINITY;
    for (int r = 0; r < rows; ++r) {
      const size_t i = static_cast<size_t>(t) * rows + r;
      if (!std::isnan(logits[i])) contains = contains && h[i] >= logits[i];
      largest = std::max(largest, logits[i]);
    }
    floor_ok = floor_ok && rt_lm_screen_floor_value(fl[static_cast<size_t>(t)]) <= largest;
  }
  expect(contains, label + ": every row's hi holds the GEMV's logit");
  expect(floor_ok, label + ": the floor is at most the largest logit");
  rt_cuda_lm_screen_pick(a, nullptr);
  const std::vector<int> got = out.get();
  bool same = true;
  for (int t = 0; t < n; ++t) {
    const int want = rt::ref::argmax(logits.data() + static_cast<size_t>(t) * rows, rows);
    if (got[static_cast<size_t>(t)] != want) {
      same = false;
      std::fprintf(stderr, "  %s, token %d: screen %d, GEMV %d\n", label.c_str(), t, got[static_cast<size_t>(t)], want);
    }
  }
  expect(same, label + ": the screen's tokens are the GEMV's");
  bool reset = arrivals.get()[0] == 0;
  for (unsigned f : floor.get()) reset = reset && f == 0;
  expect(reset, label + ": floor and arrival counter back to zero");
  const std::vector<unsigned long long> st = stats.get();
  expect(st[0] == static_cast<unsigned long long>(n), label + ": every token counted");
  std::printf("%-34s %llu of %d rows computed in FP16\n", label.c_str(), st[1], n * rows);
  return st[1];
}

// Row `row`'s logit as the screen's INT8 arithmetic sees it (before its bound): the codes of `copy` against the
// activations' (the scale max |x| / 127, codes rounded to nearest even, as the kernel takes them).
double int8_logit(const rt_lm_screen_copy & copy, int cols, const std::vector<float> & x, int row) {
  float m = 0;
  for (float v : x) m = std::max(m, std::fabs(v));
  const float sx = m / 127.0f;
  double dot = 0;
  for (int i = 0; i < cols; ++i) {
    dot += static_cast<double>(copy.q[static_cast<size_t>(row) * cols + i]) * std::nearbyint(x[static_cast<size_t>(i)] / sx);
  }
  return static_cast<double>(copy.meta[static_cast<size_t>(row)].x) * sx * dot;
}

std::vector<uint16_t> halves_of(const std::vector<float> & v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = rt::ref::float_to_half(v[i]);
  return h;
}

void test_lm_screen() {
  rng r(77);
  // Random heads: the same tokens, few rows computed.
  for (const int n : {1, 3, RT_LM_SCREEN_MAX_TOKENS}) {
    const int rows = 3000, cols = 256;
    std::vector<uint16_t> wb, xb;
    std::vector<float> wf, xf;
    random_half(r, static_cast<size_t>(rows) * cols, 0.05f, wb, wf);
    random_half(r, static_cast<size_t>(n) * cols, 1.0f, xb, xf);
    const std::string label = "lm screen random n" + std::to_string(n);
    const uint64_t computed = check_lm_screen(label, wb, rows, cols, xb, n);
    const double share = static_cast<double>(computed) / (static_cast<double>(n) * rows);
    expect(computed >= static_cast<uint64_t>(n) && share <= MAX_LM_SCREEN_ROW_SHARE,
           label + ": computes a few rows (" + std::to_string(share) + " of them)");
  }
  // Rows that hold the same values in other columns: against activations all alike their exact logits are equal,
  // and the GEMV's float sums tell them apart by rounding alone. The screen computes them in the GEMV's order, so
  // the one the GEMV's rounding puts first must win.
  {
    const int rows = 2000, cols = 512;
    std::vector<float> w(static_cast<size_t>(rows) * cols), base(static_cast<size_t>(cols));
    for (float & v : w) v = 0.02f * r.uniform();
    for (float & v : base) v = 0.25f + 0.2f * r.uniform();
    std::vector<int> perm(static_cast<size_t>(cols));
    for (int i = 0; i < cols; ++i) perm[static_cast<size_t>(i)] = i;
    for (int k = 0; k < 40; ++k) {
      const int row = (k * 37 + 11) % rows;
      for (int i = cols - 1; i > 0; --i) std::swap(perm[static_cast<size_t>(i)], perm[r.next() % static_cast<uint32_t>(i + 1)]);
      for (int i = 0; i < cols; ++i) w[static_cast<size_t>(row) * cols + i] = base[static_cast<size_t>(perm[static_cast<size_t>(i)])];
    }
    const std::vector<uint16_t> wb = halves_of(w), xb(static_cast<size_t>(cols), rt::ref::float_to_half(0.7f));
    // Precondition: the GEMV does tell some of them apart.
    dev<uint16_t> dw(wb), dx(xb);
    dev<float> y(static_cast<size_t>(rows));
    rt_cuda_f16_args full = dense_args(dx.p, dw.p, rows, cols, 1, y.p);
    full.kernel = rt_f16_kernel::gemv;
    rt_cuda_matmul_f16(full, nullptr);
    const std::vector<float> logits = y.get();
    std::vector<float> values;
    for (int k = 0; k < 40; ++k) values.push_back(logits[static_cast<size_t>((k * 37 + 11) % rows)]);
    std::sort(values.begin(), values.end());
    expect(std::unique(values.begin(), values.end()) - values.begin() >= 2,
           "lm screen permuted rows: the GEMV's rounding sets them apart");
    check_lm_screen("lm screen permuted rows", wb, rows, cols, xb, 1);
  }
  // Identical rows that win: the lowest wins.
  {
    const int rows = 1000, cols = 128;
    std::vector<uint16_t> wb, xb;
    std::vector<float> wf, xf;
    random_half(r, static_cast<size_t>(rows) * cols, 0.05f, wb, wf);
    random_half(r, cols, 1.0f, xb, xf);
    for (int i = 0; i < cols; ++i) {
      const uint16_t v = rt::ref::float_to_half(xf[static_cast<size_t>(i)] > 0 ? 0.25f : -0.25f);
      wb[static_cast<size_t>(700) * cols + i] = v;
      wb[static_cast<size_t>(300) * cols + i] = v;
    }
    check_lm_screen("lm screen tie", wb, rows, cols, xb, 1);
  }
  // The INT8 weights order rows 100 and 200 the wrong way (row 100 wins the exact product): only the weights'
  // rounding term keeps row 100. Then the INT8 activations do (x rounds down on row 100's columns and up on row
  // 200's): only the activations' term keeps it.
  {
    const int rows = 1000, cols = 64;
    std::vector<float> w(static_cast<size_t>(rows) * cols);
    for (float & v : w) v = 0.01f * r.uniform();
    for (int i = 0; i < cols; ++i) {
      w[static_cast<size_t>(100) * cols + i] = i == 0 ? 1.27f : 0.50341796875f;
      w[static_cast<size_t>(200) * cols + i] = i == 0 ? 1.29f : 0.5029296875f;
    }
    const std::vector<uint16_t> xb(static_cast<size_t>(cols), rt::ref::float_to_half(1.0f));
    const std::vector<float> ones(static_cast<size_t>(cols), 1.0f);
    const rt_lm_screen_copy weights_copy = rt_lm_screen_build(halves_of(w).data(), rows, cols);
    expect(int8_logit(weights_copy, cols, ones, 200) > int8_logit(weights_copy, cols, ones, 100),
           "lm screen misordering weights: the INT8 product prefers row 200");
    const uint64_t computed = check_lm_screen("lm screen misordering weights", halves_of(w), rows, cols, xb, 1);
    expect(computed >= 2, "lm screen misordering weights: both rows computed");
    std::vector<float> x(static_cast<size_t>(cols), 0.0f);
    x[0] = 1.0f;  // the largest: the INT8 step is 1/127
    for (int i = 1; i < cols; ++i) {
      const bool down = i < 32;
      x[static_cast<size_t>(i)] = down ? 0.499755859375f : 0.50048828125f;  // 63.47 and 63.56 steps
      w[static_cast<size_t>(100) * cols + i] = down ? 1.0f : 0.0f;
      w[static_cast<size_t>(200) * cols + i] = down || i == 63 ? 0.0f : 0.998046875f;
    }
    w[static_cast<size_t>(100) * cols] = 0.0f;
    w[static_cast<size_t>(200) * cols] = 0.0f;
    const rt_lm_screen_copy activations_copy = rt_lm_screen_build(halves_of(w).data(), rows, cols);
    expect(int8_logit(activations_copy, cols, x, 200) > int8_logit(activations_copy, cols, x, 100),
           "lm screen misordering activations: the INT8 product prefers row 200");
    check_lm_screen("lm screen misordering activations", halves_of(w), rows, cols, halves_of(x), 1);
  }
  // Tokens the screen hands to the full product (Inf, NaN) or screens trivially (zero), beside a random one.
  {
    const int rows = 600, cols = 64, n = 4;
    std::vector<uint16_t> wb, xb;
    std::vector<float> wf, xf;
    random_half(r, static_cast<size_t>(rows) * cols, 0.05f, wb, wf);
    random_half(r, static_cast<size_t>(n) * cols, 1.0f, xb, xf);
    for (int i = 0; i < cols; ++i) xb[static_cast<size_t>(i)] = 0;  // token 0: zero
    xb[static_cast<size_t>(cols) + 3] = 0x7C00;                     // token 1: +Inf
    xb[static_cast<size_t>(2 * cols) + 5] = 0x7E00;                 // token 2: NaN
    const uint64_t computed = check_lm_screen("lm screen special activations", wb, rows, cols, xb, n);
    // Tokens 1 and 2 every row, token 0 (all logits 0) every row as well: each row may be the largest.
    expect(computed >= static_cast<uint64_t>(3 * rows), "lm screen special activations: Inf, NaN and zero tokens computed in full");
  }
  expect(!rt_cuda_lm_screen_fits(2048, RT_LM_SCREEN_MAX_TOKENS + 1), "lm screen refuses more tokens than it holds");
  expect(!rt_cuda_lm_screen_fits(2056, 1), "lm screen refuses columns that are not a multiple of 16");
}

int main() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0");
    return kSkip;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  // Every kernel as a programmatic dependent launch where the device has them (9.0+), as a full-residency step
  // launches them: on the simulator each thread must then wait for the kernel before it (launch.cuh's rule).
  const rt_cuda::programmatic_scope pdl(prop.major >= 9);
  std::printf("programmatic dependent launches: %s\n", prop.major >= 9 ? "on" : "off (before compute capability 9.0)");
  for (rt_w4a16_kernel k : W4A16_KERNELS) {
    test_w4a16_plain(2048, 2048, 128, 1, "w4a16 gemv", MAX_ABS_ERR_W4A16_GEMV, k);
    test_w4a16_plain(2048, 1024, 32, 1, "w4a16 gemv", MAX_ABS_ERR_W4A16_GEMV, k);
    test_w4a16_plain(70, 512, 16, 1, "w4a16 gemv", MAX_ABS_ERR_W4A16_GEMV, k);
    test_w4a16_plain(130, 2048, 128, 13, "w4a16 gemm", MAX_ABS_ERR_W4A16_GEMM, k);
    test_w4a16_plain(300, 1024, 32, 40, "w4a16 gemm", MAX_ABS_ERR_W4A16_GEMM, k);
    test_w4a16_plain(64, 256, 16, 20, "w4a16 gemm", MAX_ABS_ERR_W4A16_GEMM, k);
    test_w4a16_plain(64, 96, 8, 9, "w4a16 gemm", MAX_ABS_ERR_W4A16_GEMM, k);
    test_w4a16_swiglu(200, 256, 32, 5, k);
    test_w4a16_swiglu(24, 384, 32, 37, k);
    test_w4a16_grouped(false, 256, 32, k);
    test_w4a16_grouped(true, 256, 32, k);
    test_w4a16_grouped(true, 256, 32, k, 80);
  }
  test_w4a16_plain(33, 48, 16, 3, "w4a16 generic", MAX_ABS_ERR_W4A16_GEMM);
  test_w4a16_plain(20, 20, 10, 2, "w4a16 generic", MAX_ABS_ERR_W4A16_GEMM);
  test_w4a16_swiglu(20, 48, 16, 2, rt_w4a16_kernel::automatic);
  test_w4a16_grouped(false, 48, 16);
  test_w4a16_grouped(true, 48, 16);
  for (rt_f16_kernel k : {rt_f16_kernel::mma, rt_f16_kernel::gemv, rt_f16_kernel::gemv_split, rt_f16_kernel::cuda_cores,
                          rt_f16_kernel::generic, rt_f16_kernel::automatic}) {
    test_f16(2048, 2048, 1, false, "f16 gemv", MAX_ABS_ERR_F16_GEMM, k);
    test_f16(1030, 264, 1, true, "f16 gemv gather", MAX_ABS_ERR_F16_GEMM, k);
    test_f16(75, 2056, 3, true, "f16 gemv gather", MAX_ABS_ERR_F16_GEMM, k);
    // Few rows: the column-split GEMV takes one or two rows a block (sm_count() blocks per SM or fewer).
    test_f16(12, 520, 1, false, "f16 gemv few rows", MAX_ABS_ERR_F16_GEMM, k);
    test_f16(21, 264, 2, true, "f16 gemv few rows", MAX_ABS_ERR_F16_GEMM, k);
    test_f16(1001, 512, 11, true, "f16 gemm gather", MAX_ABS_ERR_F16_GEMM, k);
    test_f16(264, 384, 70, true, "f16 gemm gather", MAX_ABS_ERR_F16_GEMM, k);
  }
  {
    // The decode GEMVs' aim (the GPU benchmark tunes it): on the simulator's 4 SMs, 256 rows make 8 blocks of whole
    // rows, enough for 1 an SM and too few for 4 or 16, which split the columns with 8 and 4 rows a block.
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const auto on_sim = [sms](rt_f16_kernel k) { return sms == 4 ? k : rt_f16_kernel::automatic; };
    test_f16(256, 264, 1, false, "f16 gemv, 1 block an SM", MAX_ABS_ERR_F16_GEMM, rt_f16_kernel::automatic, 1,
             on_sim(rt_f16_kernel::gemv));
    test_f16(256, 264, 1, false, "f16 gemv, 4 blocks an SM", MAX_ABS_ERR_F16_GEMM, rt_f16_kernel::automatic, 4,
             on_sim(rt_f16_kernel::gemv_split));
    test_f16(256, 264, 2, false, "f16 gemv, 16 blocks an SM", MAX_ABS_ERR_F16_GEMM, rt_f16_kernel::automatic, 16,
             on_sim(rt_f16_kernel::gemv_split));
  }
  test_f16(50, 12, 4, false, "f16 generic");
  test_f16(50, 12, 4, true, "f16 generic gather");
  // One padded activation row of these is 72 KiB, more than sm_75 gives a block (64 KiB): the generic kernel there.
  test_w4a16_plain(20, 16384, 128, 2, "w4a16 wide rows", MAX_ABS_ERR_WIDE_ROWS, rt_w4a16_kernel::smem_tiled);
  test_w4a16_plain(20, 16384, 128, 2, "w4a16 wide rows", MAX_ABS_ERR_WIDE_ROWS);
  test_f16(20, 16384, 2, false, "f16 wide rows", MAX_ABS_ERR_WIDE_ROWS);
  test_rmsnorm();
  test_rope();
  for (int hd : {32, 64, 128, 256}) test_attention(hd);
  test_attention(36);
  test_attention(64, 512);
  test_qk_norm_rope();
  test_router(false);
  test_router(true);
  test_router_nan_row();
  test_moe_group();
  test_route_and_group(1, 64, 8, false);
  test_route_and_group(9, 64, 8, true);
  test_route_and_group(RT_ROUTE_AND_GROUP_MAX_TOKENS, 64, 8, false);
  test_route_and_group(40, 300, 6, true);
  expect(!rt_cuda_route_and_group_fits(RT_ROUTE_AND_GROUP_MAX_TOKENS + 1, 64, 8), "route and group refuses a prefill-sized step");
  expect(!rt_cuda_route_and_group_fits(1, RT_ROUTER_MAX_EXPERTS, 8), "route and group refuses what needs over 48 KiB of shared memory");
  // 400 experts need 53 KiB: more than a launch may use without opting in.
  expect(!rt_cuda_route_and_group_fits(1, 400, 8), "route and group refuses 48-64 KiB of shared memory");
  expect(!rt_cuda_route_and_group_fits(0, 64, 8), "route and group refuses an empty step");
  test_swiglu_reduce_embed_argmax();
  test_lm_screen();
  for (int n = 1; n <= RT_MATMUL_TAIL_MAX_TOKENS + 1; ++n) {
    test_matmul_tails(n, rt_f16_kernel::gemv);
    test_matmul_tails(n, rt_f16_kernel::gemv_split);
  }
  if (count > 1) {
    // Function attributes (the opt-in to more than 48 KiB of shared memory) are per device: the launches above
    // raised them on device 0, and these need them raised on the last device too.
    CK(cudaSetDevice(count - 1));
    std::printf("once more on device %d:\n", count - 1);
    test_f16(256, 2048, 8, false, "f16 gemm (device > 0)");
    test_w4a16_plain(256, 2048, 128, 8, "w4a16 gemm (device > 0)", MAX_ABS_ERR_W4A16_GEMM);
  }
  if (failures != 0) {
    std::fprintf(stderr, "test-gpu-ops: %d failure(s)\n", failures);
    return 1;
  }
  std::printf("test-gpu-ops: all ops match the CPU references\n");
  return 0;
}

#else

int main() {
  std::printf("SKIP: no CUDA device (this build has no CUDA backend; configure with -DRT_CUDA=ON)\n");
  return kSkip;
}

#endif
