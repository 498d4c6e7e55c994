// Vectorised e^x, the logistic sigmoid and HardSwish on AVX-512 for the native kernels (LSTM gates, SiLU and
// HardSwish epilogues).
#ifndef HETERO_SDK_NATIVE_AVX512_MATH_H_
#define HETERO_SDK_NATIVE_AVX512_MATH_H_

#include <immintrin.h>

namespace hetero_sdk_native {

// e^x, Cephes' expf polynomial after x = n ln2 + r (|r| <= ln2 / 2), scaled by 2^n with vscalefps:
// about 1 ulp; saturates to 0 and +inf beyond the float range.
inline __m512 Exp(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(89.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(y, n);
}

// 1 / (1 + e^-x)
inline __m512 Sigmoid(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, Exp(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// 1 / x by vrcp14ps and one Newton step (within about 2 ulp; a division's throughput is a tenth of an FMA's,
// which made a SiLU epilogue cost as much as a 24-deep product).
inline __m512 Reciprocal(__m512 x) {
  const __m512 r = _mm512_rcp14_ps(x);
  return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(x, r, _mm512_set1_ps(1.0f)), r);
}

// x * sigmoid(x) as x / (1 + e^-x), the division by Reciprocal: SiLU within a few ulp. Exp's steps written out
// for e^-x on x itself: one clamp of x to [-88, 104] instead of Exp's two, Silu's own and a negation; r = -x - n ln2
// is carried as s = -r, the odd coefficients' signs flipped, which rounds to Exp(-x)'s very bits. e^-x stays finite
// (the Newton step of an infinite denominator is NaN): below x = -88 the result is -0 or a denormal; a NaN x
// clamps to a finite value and the product by x keeps it NaN.
inline __m512 Silu(__m512 x) {
  const __m512 c = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-88.0f)), _mm512_set1_ps(104.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(c, _mm512_set1_ps(-1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 s = _mm512_fmadd_ps(n, _mm512_set1_ps(0.693359375f), c);
  s = _mm512_fmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), s);
  __m512 q = _mm512_set1_ps(-1.9875691500e-4f);
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(1.3981999507e-3f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(-8.3334519073e-3f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(4.1665795894e-2f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(-1.6666665459e-1f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_add_ps(_mm512_fmsub_ps(_mm512_mul_ps(q, s), s, s), _mm512_set1_ps(1.0f));
  return _mm512_mul_ps(x, Reciprocal(_mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_scalef_ps(y, n))));
}

// HardSwish, x * min(max(x + 3, 0), 6) / 6 (OpenVINO's HSwish), the division a product by 1/6 (within 1 ulp).
inline __m512 HardSwish(__m512 x) {
  const __m512 gate = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(x, _mm512_set1_ps(3.0f)), _mm512_setzero_ps()),
                                    _mm512_set1_ps(6.0f));
  return _mm512_mul_ps(_mm512_mul_ps(x, gate), _mm512_set1_ps(1.0f / 6.0f));
}

}  // namespace hetero_sdk_native

#endif  // HETERO_SDK_NATIVE_AVX512_MATH_H_
