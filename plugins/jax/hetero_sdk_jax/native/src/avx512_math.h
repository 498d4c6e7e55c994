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

// x * sigmoid(x) as c / (1 + e^-c), c = max(x, -88), the division by Reciprocal; 18 vector ops (Exp's steps
// written out took 20, vrndscaleps two uops of them). e^-e for e = min(c, 88), which stays finite (the
// Newton step of an infinite denominator is NaN): n = round(-e log2e) by the float's 1.5 * 2^23 trick (one FMA at
// round-to-nearest and one subtraction, |n| <= 127), s = e + n ln2 in two exact steps (Cody-Waite; one step with
// f32(ln 2) alone leaves n * 1.9e-9 in s, 4e-7 relative near x = -70), e^-e = 2^n e^-s with e^-s a degree-6
// polynomial fitted on |s| <= ln2 / 2 (bench/silu_coefficients.py: 3e-9 relative; degree 5 gave 9e-8 and the
// SiLU 2.6e-7) and 2^n by vscalefps. Within 2.1e-7 relative (3.5 ulps) of x / (1 + e^-x) wherever
// |SiLU(x)| > 1e-30 (x > -72), within 1.1e-36 below (plugins/jax/tests/test_native_silu.py); a zero keeps its
// sign, +inf stays +inf, NaN stays NaN (max keeps its second operand's NaN) and x <= -88 (-inf too) gives
// SiLU(-88), -5.3e-37, or -0 where denormals flush (XLA's threads: from x below -87.3).
inline __m512 Silu(__m512 x) {
  const __m512 c = _mm512_max_ps(_mm512_set1_ps(-88.0f), x);
  const __m512 e = _mm512_min_ps(c, _mm512_set1_ps(88.0f));
  const __m512 shift = _mm512_set1_ps(12582912.0f);
  const __m512 n = _mm512_sub_ps(
      _mm512_fmadd_round_ps(e, _mm512_set1_ps(-1.44269504088896341f), shift,
                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
      shift);
  __m512 s = _mm512_fmadd_ps(n, _mm512_set1_ps(0.693359375f), e);
  s = _mm512_fmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), s);
  __m512 q = _mm512_set1_ps(1.3821024e-3f);
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(-8.368669e-3f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(4.1668262e-2f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(-1.6666521e-1f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(4.9999994e-1f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(-1.0f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(1.0f));
  return _mm512_mul_ps(c, Reciprocal(_mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_scalef_ps(q, n))));
}

// HardSwish, x * min(max(x + 3, 0), 6) / 6 (OpenVINO's HSwish), the division a product by 1/6 (within 1 ulp).
inline __m512 HardSwish(__m512 x) {
  const __m512 gate = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(x, _mm512_set1_ps(3.0f)), _mm512_setzero_ps()),
                                    _mm512_set1_ps(6.0f));
  return _mm512_mul_ps(_mm512_mul_ps(x, gate), _mm512_set1_ps(1.0f / 6.0f));
}

}  // namespace hetero_sdk_native

#endif  // HETERO_SDK_NATIVE_AVX512_MATH_H_
