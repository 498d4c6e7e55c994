// A 16x16 float transpose in AVX-512 registers, for the native kernels that turn 16 rows of 16 lanes into 16 columns
// (the stem kernel's pixel-by-channel tiles, the softmax kernel's bins-first rows).
#ifndef HETERO_SDK_NATIVE_AVX512_TRANSPOSE_H_
#define HETERO_SDK_NATIVE_AVX512_TRANSPOSE_H_

#include <immintrin.h>

namespace hetero_sdk_native {

// The 16 columns of r[0..16) as its 16 rows (r[k] lane j -> r[j] lane k): unpacks, then shuffles of pairs,
// then of 128-bit lanes twice (64 shuffles).
__attribute__((always_inline)) inline void Transpose16(__m512* r) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}

}  // namespace hetero_sdk_native

#endif  // HETERO_SDK_NATIVE_AVX512_TRANSPOSE_H_
