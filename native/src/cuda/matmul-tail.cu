#include "cuda/matmul-tail.cuh"

#include "cuda/argmax.cuh"
#include "cuda/common.cuh"
#include "cuda/moe-group-block.cuh"
#include "cuda/moe-group.cuh"
#include "cuda/moe-reduce.cuh"
#include "cuda/rmsnorm.cuh"
#include "cuda/router-topk.cuh"

bool rt_cuda_matmul_tail_in_launch(const rt_cuda_matmul_tail & t, int rows, int ldy) {
  if (t.kind == rt_matmul_tail_kind::none || t.arrivals == nullptr) return false;
  if (t.n_tokens <= 0 || t.n_tokens > RT_MATMUL_TAIL_MAX_TOKENS) return false;
  switch (t.kind) {
    case rt_matmul_tail_kind::route:
      return ldy == rows && rt_cuda::route_and_group_smem(t.n_tokens, rows, t.k, 32) <= 48 * 1024;
    case rt_matmul_tail_kind::moe_reduce:
      return ldy == rows;
    case rt_matmul_tail_kind::argmax:
      return t.argmax_partials != nullptr && t.argmax_partials_per_token >= rows;
    default:
      return true;
  }
}

size_t rt_cuda_matmul_tail_smem(const rt_cuda_matmul_tail & t, int rows, int warps) {
  return t.kind == rt_matmul_tail_kind::route ? rt_cuda::route_and_group_smem(t.n_tokens, rows, t.k, warps) : 0;
}

void rt_cuda_matmul_tail_launch(const rt_cuda_matmul_tail & t, float * y, int rows, int ldy, cudaStream_t stream) {
  switch (t.kind) {
    case rt_matmul_tail_kind::none:
      return;
    case rt_matmul_tail_kind::rmsnorm:
      rt_cuda_rmsnorm(y, ldy, t.norm_w, t.eps, t.n_tokens, rows, t.out16, nullptr, rows, stream);
      return;
    case rt_matmul_tail_kind::route:
      if (t.offsets == nullptr) {
        rt_cuda_router_topk(y, t.n_tokens, rows, t.k, t.norm_topk_prob, t.ids, t.weights, stream);
      } else if (rt_cuda_route_and_group_fits(t.n_tokens, rows, t.k)) {
        rt_cuda_route_and_group(y, t.n_tokens, rows, t.k, t.norm_topk_prob, t.ids, t.weights, t.offsets, t.sorted,
                                t.sorted_token, t.active, stream);
      } else {
        rt_cuda_router_topk(y, t.n_tokens, rows, t.k, t.norm_topk_prob, t.ids, t.weights, stream);
        rt_cuda_moe_group(t.ids, t.n_tokens * t.k, t.k, rows, t.offsets, t.sorted, t.sorted_token, t.active, stream);
      }
      return;
    case rt_matmul_tail_kind::qk_norm_rope: {
      rt_cuda_qk_norm_rope_args a = t.qk;
      a.qkv = y;
      a.ld = ldy;
      a.n_tokens = t.n_tokens;
      rt_cuda_qk_norm_rope(a, stream);
      return;
    }
    case rt_matmul_tail_kind::moe_reduce:
      rt_cuda_moe_reduce(y, t.weights, t.n_tokens, t.k, rows, t.x, t.norm_w, t.eps, t.out16, stream);
      return;
    case rt_matmul_tail_kind::argmax:
      rt_cuda_argmax(y, t.n_tokens, rows, ldy, t.argmax_out, stream);
      return;
  }
}
