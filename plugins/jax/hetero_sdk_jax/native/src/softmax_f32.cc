// hetero-sdk native kernel: f32 Softmax over the last axis, for the XLA device (XLA FFI, CPU, AVX-512F).
//
// Operand: x f32 [R, C]. Result: y f32 [R, C], y[r, c] = exp(x[r, c] - max_r) / sum_c exp(x[r, c] - max_r).
// Each row in three passes of 16 lanes: its max; exp(x - max) stored and summed; the stored values times the
// sum's reciprocal. exp of t <= 0: t = n ln2 + s (n = round(t / ln2), |s| <= ln2 / 2, ln2 in two parts), a
// degree-6 polynomial of s (within 2 ulp on that range), times 2^n (scalef); t below -87.34 (under the
// smallest normal) gives 0, as does -inf; NaN propagates (a row holding NaN or +inf is NaN, as the formula).
// Rows are split on XLA's intra-op pool.

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using hetero_sdk_native::ParallelFor;

namespace {

inline __mmask16 TailMask(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }

// exp(t) for t <= 0 (NaN in, NaN out; below -87.34, 0).
inline __m512 ExpNonPositive(__m512 t) {
  const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
  const __m512 ln2_hi = _mm512_set1_ps(0.693359375f);
  const __m512 ln2_lo = _mm512_set1_ps(-2.12194440e-4f);
  const __mmask16 tiny = _mm512_cmp_ps_mask(t, _mm512_set1_ps(-87.3365447f), _CMP_LT_OQ);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 s = _mm512_fnmadd_ps(n, ln2_hi, t);
  s = _mm512_fnmadd_ps(n, ln2_lo, s);
  __m512 p = _mm512_set1_ps(1.3981999507e-3f);
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(s, s), _mm512_add_ps(s, _mm512_set1_ps(1.0f)));
  return _mm512_mask_mov_ps(_mm512_scalef_ps(p, n), tiny, _mm512_setzero_ps());
}

void Row(const float* x, float* y, int64_t c) {
  __m512 m = _mm512_set1_ps(-__builtin_inff());
  for (int64_t j = 0; j < c; j += 16) {
    const __mmask16 k = TailMask(c - j);
    const __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(-__builtin_inff()), k, x + j);
    m = _mm512_max_ps(m, v);
  }
  // A NaN makes its exp NaN, so the sum and the whole row NaN; +inf makes inf - inf NaN: the same.
  const __m512 shift = _mm512_set1_ps(_mm512_reduce_max_ps(m));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < c; j += 16) {
    const __mmask16 k = TailMask(c - j);
    const __m512 e = ExpNonPositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), shift));
    _mm512_mask_storeu_ps(y + j, k, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(k, e));
  }
  const __m512 scale = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
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
