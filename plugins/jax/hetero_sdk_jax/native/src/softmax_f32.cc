// hetero-sdk native kernel: f32 Softmax over the last axis, for the XLA device (XLA FFI, CPU, AVX-512F).
//
// Operand: x f32 [R, C]. Result: y f32 [R, C], y[r, c] = exp(x[r, c] - max_r) / sum_c exp(x[r, c] - max_r).
// Each row in three passes of 16 lanes: its max; exp(x - max) stored and summed; the stored values times the
// sum's reciprocal, with avx512_math.h's Exp (about 1 ulp; it clamps its argument, so a NaN of x - max, from
// a NaN or +inf in the row or a row of -inf, is found apart and makes the row NaN, as the formula does).
// Rows are split on XLA's intra-op pool.
//
// HeteroSdkSoftmaxExpectationF32: the expectation of weights under a Softmax over a middle axis, the Softmax's
// output never stored. Operands: x f32 [O, C, I], w f32 [C]. Result: y f32 [O, I],
// y[o, i] = sum_c exp(x[o, c, i] - m) * w[c] / sum_c exp(x[o, c, i] - m), m = max_c x[o, c, i]: Softmax over C
// followed by a dot with w (YOLOv8's DFL head: 16 bins, w = 0..15). Each 16 values of I in two passes over C
// (its max; the exps with their sum and weighted sum), a NaN of x - m made NaN as above. With x f32 [R, C] and
// y [R] the bins are last (C <= 64): 16 rows at a time, gathered, the same two passes.

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "avx512_math.h"
#include "avx512_transpose.h"
#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using hetero_sdk_native::Exp;
using hetero_sdk_native::ParallelFor;

namespace {

inline __mmask16 TailMask(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }

void Row(const float* x, float* y, int64_t c) {
  __m512 m = _mm512_set1_ps(-__builtin_inff());
  for (int64_t j = 0; j < c; j += 16) {
    const __mmask16 k = TailMask(c - j);
    const __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(-__builtin_inff()), k, x + j);
    m = _mm512_max_ps(m, v);
  }
  const __m512 shift = _mm512_set1_ps(_mm512_reduce_max_ps(m));
  __m512 sum = _mm512_setzero_ps();
  __mmask16 nan = 0;
  for (int64_t j = 0; j < c; j += 16) {
    const __mmask16 k = TailMask(c - j);
    const __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), shift);
    nan |= _mm512_mask_cmp_ps_mask(k, t, t, _CMP_UNORD_Q);
    const __m512 e = Exp(t);
    _mm512_mask_storeu_ps(y + j, k, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(k, e));
  }
  const float total = nan ? std::numeric_limits<float>::quiet_NaN() : _mm512_reduce_add_ps(sum);
  const __m512 scale = _mm512_set1_ps(1.0f / total);
  for (int64_t j = 0; j < c; j += 16) {
    const __mmask16 k = TailMask(c - j);
    _mm512_mask_storeu_ps(y + j, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + j), scale));
  }
}

ffi::Error SoftmaxImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  const auto xd = x.dimensions(), yd = y->dimensions();
  if (xd.size() != 2 || yd.size() != 2 || xd[0] != yd[0] || xd[1] != yd[1])
    return ffi::Error::InvalidArgument("softmax kernel: x and y must be 2-D of one shape");
  const int64_t rows = xd[0], c = xd[1];
  if (rows == 0 || c == 0) return ffi::Error::Success();
  const float* src = x.typed_data();
  float* dst = y->typed_data();
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / c);  // about 64K elements a piece
  ParallelFor(pool, rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) Row(src + r * c, dst + r * c, c);
  });
  return ffi::Error::Success();
}

// y[0 .. 16 * V) of one [C, I] slab x from its column 0, the last vector's lanes those of k (the others full).
template <int V>
void ExpectationBlock(const float* x, const float* w, float* y, int64_t c, int64_t inner, __mmask16 k) {
  __mmask16 lanes[V];
  for (int v = 0; v < V; ++v) lanes[v] = v == V - 1 ? k : __mmask16(0xFFFF);
  __m512 m[V], sum[V], dot[V];
  __mmask16 nan[V];
  for (int v = 0; v < V; ++v) m[v] = _mm512_set1_ps(-__builtin_inff());
  for (int64_t j = 0; j < c; ++j)
    for (int v = 0; v < V; ++v) m[v] = _mm512_max_ps(m[v], _mm512_maskz_loadu_ps(lanes[v], x + j * inner + 16 * v));
  for (int v = 0; v < V; ++v) sum[v] = dot[v] = _mm512_setzero_ps(), nan[v] = 0;
  for (int64_t j = 0; j < c; ++j) {
    const __m512 wj = _mm512_set1_ps(w[j]);
    for (int v = 0; v < V; ++v) {
      const __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes[v], x + j * inner + 16 * v), m[v]);
      nan[v] |= _mm512_mask_cmp_ps_mask(lanes[v], t, t, _CMP_UNORD_Q);
      const __m512 e = Exp(t);
      sum[v] = _mm512_add_ps(sum[v], e);
      dot[v] = _mm512_fmadd_ps(e, wj, dot[v]);
    }
  }
  for (int v = 0; v < V; ++v) {
    const __m512 r = _mm512_mask_mov_ps(_mm512_div_ps(dot[v], sum[v]), nan[v], _mm512_set1_ps(__builtin_nanf("")));
    _mm512_mask_storeu_ps(y + 16 * v, lanes[v], r);
  }
}

constexpr int64_t kMaxLastBins = 64;  // the most bins of the [R, C] form (its 16 rows' columns kept on the stack)

// Rows 0..15 of x [16, 16] (those of mask k; the others zero) as its 16 columns v[j] (a transpose of 64 shuffles
// instead of 16 gathers).
void TransposedRows(const float* x, __mmask16 k, __m512* v) {
  for (int i = 0; i < 16; ++i)
    v[i] = _mm512_maskz_loadu_ps(((k >> i) & 1) ? __mmask16(0xFFFF) : __mmask16(0), x + 16 * i);
  hetero_sdk_native::Transpose16(v);
}

// y[0 .. 16) of 16 rows of C values each (x [16, C] from row 0, the rows of mask k), the bins last: lane r holds
// row r (the columns transposed in registers at C = 16, gathered otherwise), then the same two passes over C.
// Fixed: C known when compiled (16, unrolled with its columns in registers), or 0 (C = bins).
template <int64_t Fixed>
void ExpectationLast(const float* x, const float* w, float* y, int64_t bins, __mmask16 k) {
  const int64_t c = Fixed ? Fixed : bins;
  const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                          _mm512_set1_epi32(static_cast<int32_t>(c)));
  __m512 v[kMaxLastBins];
  if constexpr (Fixed == 16) {
    TransposedRows(x, k, v);
  } else {
    for (int64_t j = 0; j < c; ++j) v[j] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, rows, x + j, 4);
  }
  __m512 m = _mm512_set1_ps(-__builtin_inff());
  for (int64_t j = 0; j < c; ++j) m = _mm512_max_ps(m, v[j]);
  __m512 sum = _mm512_setzero_ps(), dot = _mm512_setzero_ps();
  __mmask16 nan = 0;
  for (int64_t j = 0; j < c; ++j) {
    const __m512 t = _mm512_sub_ps(v[j], m);
    nan |= _mm512_mask_cmp_ps_mask(k, t, t, _CMP_UNORD_Q);
    const __m512 e = Exp(t);
    sum = _mm512_add_ps(sum, e);
    dot = _mm512_fmadd_ps(e, _mm512_set1_ps(w[j]), dot);
  }
  const __m512 r = _mm512_mask_mov_ps(_mm512_div_ps(dot, sum), nan, _mm512_set1_ps(__builtin_nanf("")));
  _mm512_mask_storeu_ps(y, k, r);
}

// The bins last: x [R, C] (C <= kMaxLastBins), w [C], y [R]; 16 rows at a time.
ffi::Error ExpectationOverLastAxis(ffi::ThreadPool& pool, const float* src, const float* weights, float* dst,
                                   int64_t rows, int64_t c) {
  if (c > kMaxLastBins)
    return ffi::Error::InvalidArgument("softmax expectation kernel: at most 64 bins when x is [R, C]");
  if (rows == 0) return ffi::Error::Success();
  const int64_t blocks = (rows + 15) / 16;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 12) / std::max<int64_t>(c, 1));
  ParallelFor(pool, blocks, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      if (c == 16) ExpectationLast<16>(src + b * 16 * c, weights, dst + b * 16, c, TailMask(rows - b * 16));
      else ExpectationLast<0>(src + b * 16 * c, weights, dst + b * 16, c, TailMask(rows - b * 16));
    }
  });
  return ffi::Error::Success();
}

ffi::Error SoftmaxExpectationImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w,
                                  ffi::ResultBuffer<ffi::F32> y) {
  const auto xd = x.dimensions(), wd = w.dimensions(), yd = y->dimensions();
  if (xd.size() == 2 && wd.size() == 1 && yd.size() == 1 && wd[0] == xd[1] && yd[0] == xd[0])
    return ExpectationOverLastAxis(pool, x.typed_data(), w.typed_data(), y->typed_data(), xd[0], xd[1]);
  if (xd.size() != 3 || wd.size() != 1 || yd.size() != 2 || wd[0] != xd[1] || yd[0] != xd[0] || yd[1] != xd[2])
    return ffi::Error::InvalidArgument("softmax expectation kernel: x must be [O, C, I], w [C] and y [O, I]");
  const int64_t outer = xd[0], c = xd[1], inner = xd[2];
  if (outer == 0 || inner == 0) return ffi::Error::Success();
  const float* src = x.typed_data();
  const float* weights = w.typed_data();
  float* dst = y->typed_data();
  constexpr int64_t kWidth = 64;  // values of I a block: four vectors
  const int64_t blocks = (inner + kWidth - 1) / kWidth;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 12) / std::max<int64_t>(c, 1));  // ~256K values a piece
  ParallelFor(pool, outer * blocks, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t o = b / blocks, i0 = (b % blocks) * kWidth, left = inner - i0;
      const float* from = src + o * c * inner + i0;
      float* to = dst + o * inner + i0;
      if (left > 48) ExpectationBlock<4>(from, weights, to, c, inner, TailMask(left - 48));
      else if (left > 32) ExpectationBlock<3>(from, weights, to, c, inner, TailMask(left - 32));
      else if (left > 16) ExpectationBlock<2>(from, weights, to, c, inner, TailMask(left - 16));
      else ExpectationBlock<1>(from, weights, to, c, inner, TailMask(left));
    }
  });
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkSoftmaxF32, SoftmaxImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkSoftmaxExpectationF32, SoftmaxExpectationImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
