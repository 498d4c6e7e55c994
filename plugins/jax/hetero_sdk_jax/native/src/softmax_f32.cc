// hetero-sdk native kernel: f32 Softmax over the last axis, for the XLA device (XLA FFI, CPU, AVX-512F).
//
// Operand: x f32 [R, C]. Result: y f32 [R, C], y[r, c] = exp(x[r, c] - max_r) / sum_c exp(x[r, c] - max_r).
// Each row in three passes of 16 lanes: its max; exp(x - max) stored and summed; the stored values times the
// sum's reciprocal, with avx512_math.h's Exp (about 1 ulp; it clamps its argument, so a NaN of x - max, from
// a NaN or +inf in the row or a row of -inf, is found apart and makes the row NaN, as the formula does).
// Rows are split on XLA's intra-op pool.

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "avx512_math.h"
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

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkSoftmaxF32, SoftmaxImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
