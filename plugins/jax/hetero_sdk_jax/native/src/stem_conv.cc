// A dense 2-D f32 convolution of an image with few channels, read as the model hands it (channels first), on
// XLA:CPU through XLA's FFI: a network's stem (an RGB image's first layer).
//
// Handler HeteroSdkStemConv (target hetero_sdk_stem_conv). Operands: x f32 [N, C, H, W], w f32 [KH, KW, C, O]
// (the dense lowering's filter layout: one tap's O weights contiguous), bias f32 [O].
// Attributes: stride_h, stride_w (>= 1), pad_top, pad_left (>= 0; the bottom and right pads follow from the
// result's shape: what lies past the input reads as zeros), activation (0 none, 1 relu, 2 silu: v * sigmoid(v),
// 3 hswish: v * min(max(v + 3, 0), 6) / 6, the division a product by 1/6).
// Result: y f32 [N, OH, OW, O], channels last (what the next layer's native kernel reads),
// y[n, i, j, o] = act(bias[o] + sum_{c, a, b} x[n, c, i*sh - pt + a, j*sw - pl + b] * w[a, b, c, o]).
//
// Vectorised over 16 output pixels of a row, one zmm accumulator per output channel (up to 24 at once, the
// channels in groups), each tap one load of 16 input pixels and one FMA per output channel with the tap's
// weight broadcast from memory. Each input row the output rows read is first copied once, with its left and
// right zeros, into a per-thread ring de-interleaved by the width stride (phase p holds columns p, p + sw, ...):
// a tap's 16 pixels are then one unaligned load at any stride. Rows above and below the image are skipped
// (never multiplied by zeros). The 16 pixels x up to 24 channels are transposed in registers (16x16 blocks)
// and stored channels-last after the bias and activation. Output rows are split on XLA's intra-op pool.
#if !defined(__AVX512F__)
#error "this kernel needs AVX-512: the XLA device falls back to its pure-XLA lowering"
#endif

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "avx512_math.h"
#include "avx512_transpose.h"
#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using hetero_sdk_native::HardSwish;
using hetero_sdk_native::ParallelFor;
using hetero_sdk_native::Silu;
using hetero_sdk_native::Transpose16;

namespace {

constexpr int64_t kLanes = 16;

enum Activation : int64_t { kNone = 0, kRelu = 1, kSilu = 2, kHardSwish = 3 };

struct Problem {
  const float* x;
  const float* w;     // [KH, KW, C, cp]: the filter with its output channels padded to cp (zeros)
  const float* bias;  // [cp], zeros past O
  float* y;
  int64_t n, c, h, w_in, kh, kw, cout, cp, oh, ow, sh, sw, pt, pl, activation;
  int64_t blocks;  // 16-pixel blocks per output row
  int64_t phase;   // floats per de-interleaved phase of a prepared row (a multiple of 16)
};

// Taps [first, last) along the height whose input row (origin + tap) lies in [0, size).
inline void TapRange(int64_t origin, int64_t taps, int64_t size, int64_t* first, int64_t* last) {
  *first = std::min(taps, std::max<int64_t>(0, -origin));
  *last = std::max(*first, std::min(taps, size - origin));
}

// The lanes j of a 16-float load from column `first` whose column first + j lies in [0, width).
inline __mmask16 Inside(int64_t first, int64_t width) {
  const int64_t lo = std::min<int64_t>(kLanes, std::max<int64_t>(0, -first));
  const int64_t hi = std::max(lo, std::min<int64_t>(kLanes, width - first));
  return __mmask16(((1u << hi) - 1) & ~((1u << lo) - 1));
}

// Input row `src` (W floats) as the taps read it: dst[q * phase + m] = x[sw * m + q - pl] (zero outside the
// row) for the sw phases q. Strides 1 and 2: 16 values of each phase at a time, masked loads (the columns
// outside the row read as zeros, never touched) de-interleaved in registers; larger strides one by one.
void PrepareRow(const Problem& p, const float* src, float* dst) {
  const int64_t sw = p.sw, pl = p.pl, width = p.w_in;
  if (sw > 2) {
    for (int64_t q = 0; q < sw; ++q)
      for (int64_t m = 0; m < p.phase; ++m) {
        const int64_t col = sw * m + q - pl;
        dst[q * p.phase + m] = col >= 0 && col < width ? src[col] : 0.0f;
      }
    return;
  }
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int64_t m = 0; m < p.phase; m += kLanes) {
    const int64_t first = sw * m - pl;  // the column of phase 0's value m
    // (a pointer before the row is formed for the masked lanes only: no lane outside the row is read)
    const __m512 a = _mm512_maskz_loadu_ps(Inside(first, width), src + first);
    if (sw == 1) {
      _mm512_storeu_ps(dst + m, a);
      continue;
    }
    const __m512 b = _mm512_maskz_loadu_ps(Inside(first + kLanes, width), src + first + kLanes);
    _mm512_storeu_ps(dst + m, _mm512_permutex2var_ps(a, even, b));
    _mm512_storeu_ps(dst + p.phase + m, _mm512_permutex2var_ps(a, odd, b));
  }
}

inline __m512 Activate(__m512 v, int64_t activation) {
  if (activation == kRelu) return _mm512_max_ps(_mm512_setzero_ps(), v);  // vmaxps keeps a NaN second operand
  if (activation == kSilu) return Silu(v);
  if (activation == kHardSwish) return HardSwish(v);
  return v;
}

// Calls f(std::integral_constant<int, 0>) ... f(std::integral_constant<int, N - 1>) in order, unrolled (the
// accumulators then stay in registers: a loop over them kept them on the stack).
template <typename F, int... I>
__attribute__((always_inline)) inline void UnrolledImpl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, typename F>
__attribute__((always_inline)) inline void Unrolled(F&& f) {
  UnrolledImpl(f, std::make_integer_sequence<int, N>{});
}

// Output pixels [j0, j0 + 16) of the row whose prepared input rows are `rows` ([C][KH], each sw phases) and
// whose taps along the height are [a0, a1), channels [g0, g0 + G) of the padded filter: G accumulators, each tap
// one load of 16 pixels and G FMAs with the weights broadcast from memory. Pixels [j0, j0 + valid) are stored
// to `out` (the row's first pixel), channels past O not. SW: the width stride (0: any, read from p).
template <int G, int SW>
void Block(const Problem& p, const float* const* rows, int64_t a0, int64_t a1, int64_t g0, int64_t j0, int64_t valid,
           float* out) {
  const int64_t sw = SW ? SW : p.sw;
  __m512 acc[G];
  Unrolled<G>([&](auto k) { acc[k] = _mm512_set1_ps(p.bias[g0 + k]); });
  const int64_t tap_stride = p.c * p.cp;  // floats from one tap's weights to the next along the width
  for (int64_t c = 0; c < p.c; ++c)
    for (int64_t a = a0; a < a1; ++a) {
      const float* base = rows[c * p.kh + a] + j0;
      const float* wt = p.w + (a * p.kw * p.c + c) * p.cp + g0;
      for (int64_t b = 0; b < p.kw; ++b, wt += tap_stride) {
        const __m512 v = _mm512_loadu_ps(base + (b % sw) * p.phase + b / sw);
        Unrolled<G>([&](auto k) { acc[k] = _mm512_fmadd_ps(v, _mm512_set1_ps(wt[k]), acc[k]); });
      }
    }
  const int64_t pixels = std::min<int64_t>(kLanes, valid);
  Unrolled<(G + 15) / 16>([&](auto half) {  // indices known when compiled: acc stays in registers
    constexpr int h = 16 * half;
    const int64_t channels = std::min<int64_t>(std::min(16, G - h), p.cout - g0 - h);
    if (channels <= 0) return;
    __m512 r[16];
    Unrolled<16>([&](auto k) {
      if constexpr (h + k < G) r[k] = Activate(acc[h + k], p.activation);
      else r[k] = _mm512_setzero_ps();
    });
    Transpose16(r);
    const __mmask16 mask = __mmask16((1u << channels) - 1);
    float* o = out + j0 * p.cout + g0 + h;
    for (int64_t px = 0; px < pixels; ++px) _mm512_mask_storeu_ps(o + px * p.cout, mask, r[px]);
  });
}

using BlockFunction = void (*)(const Problem&, const float* const*, int64_t, int64_t, int64_t, int64_t, int64_t,
                               float*);

template <int G>
BlockFunction ChooseStride(const Problem& p) {
  return p.sw == 1 ? Block<G, 1> : p.sw == 2 ? Block<G, 2> : Block<G, 0>;
}

// The channels from g0 summed at once (24, 16 or 8 of the padded cp: 32 as 16 + 16) and their Block.
int64_t GroupAt(const Problem& p, int64_t g0, BlockFunction* block) {
  const int64_t left = p.cp - g0;
  if (left >= 24 && left != 32) return *block = ChooseStride<24>(p), 24;
  if (left >= 16) return *block = ChooseStride<16>(p), 16;
  return *block = ChooseStride<8>(p), 8;
}

// Output rows [first, last) (row r is row r % OH of image r / OH). `scratch` holds C * KH prepared input rows
// (sw * phase floats each), a ring: input row y of channel c in slot (c, y % KH), prepared once while the output
// rows that read it go by in order; `held` (C * KH) says which row each slot holds.
void Rows(const Problem& p, float* scratch, int64_t* held, int64_t first, int64_t last) {
  const int64_t row_floats = p.sw * p.phase;
  std::vector<const float*> rows(p.c * p.kh);
  std::fill(held, held + p.c * p.kh, -1);
  for (int64_t r = first; r < last; ++r) {
    const int64_t n = r / p.oh, i = r % p.oh, origin = i * p.sh - p.pt;
    int64_t a0, a1;
    TapRange(origin, p.kh, p.h, &a0, &a1);
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t a = a0; a < a1; ++a) {
        const int64_t y = origin + a, slot = c * p.kh + y % p.kh, key = n * p.h + y;
        if (held[slot] != key) {
          PrepareRow(p, p.x + ((n * p.c + c) * p.h + y) * p.w_in, scratch + slot * row_floats);
          held[slot] = key;
        }
        rows[c * p.kh + a] = scratch + slot * row_floats;
      }
    float* out = p.y + (n * p.oh + i) * p.ow * p.cout;
    for (int64_t g0 = 0, size; g0 < p.cp; g0 += size) {
      BlockFunction block;
      size = GroupAt(p, g0, &block);
      for (int64_t j0 = 0; j0 < p.ow; j0 += kLanes) block(p, rows.data(), a0, a1, g0, j0, p.ow - j0, out);
    }
  }
}

ffi::Error Compute(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w, ffi::Buffer<ffi::F32> bias,
                   ffi::ResultBuffer<ffi::F32> y, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t activation) {
  const auto xd = x.dimensions(), wd = w.dimensions(), yd = y->dimensions(), bd = bias.dimensions();
  if (xd.size() != 4 || wd.size() != 4 || yd.size() != 4 || bd.size() != 1)
    return ffi::Error::InvalidArgument("stem convolution kernel: x, w and y must be 4-D and bias 1-D");
  if (wd[2] != xd[1] || yd[0] != xd[0] || yd[3] != wd[3] || bd[0] != wd[3])
    return ffi::Error::InvalidArgument(
        "stem convolution kernel: x must be [N, C, H, W], w [KH, KW, C, O], bias [O] and y [N, OH, OW, O]");
  if (sh < 1 || sw < 1 || pt < 0 || pl < 0)
    return ffi::Error::InvalidArgument("stem convolution kernel: strides must be >= 1 and pads >= 0");
  if (activation < kNone || activation > kHardSwish)
    return ffi::Error::InvalidArgument("stem convolution kernel: activation must be 0, 1, 2 or 3");
  Problem p{};
  p.x = x.typed_data();
  p.y = y->typed_data();
  p.n = xd[0], p.c = xd[1], p.h = xd[2], p.w_in = xd[3];
  p.kh = wd[0], p.kw = wd[1], p.cout = wd[3], p.oh = yd[1], p.ow = yd[2];
  p.sh = sh, p.sw = sw, p.pt = pt, p.pl = pl, p.activation = activation;
  if (p.n * p.oh * p.ow * p.cout == 0) return ffi::Error::Success();
  p.cp = (p.cout + 7) / 8 * 8;
  p.blocks = (p.ow + kLanes - 1) / kLanes;
  p.phase = p.blocks * kLanes + ((p.kw - 1) / p.sw + kLanes) / kLanes * kLanes;
  // The filter and bias with the output channels padded to cp (zeros): each group's loads stay inside.
  std::vector<float> filter(p.kh * p.kw * p.c * p.cp, 0.0f), shift(p.cp, 0.0f);
  const float* wsrc = w.typed_data();
  for (int64_t t = 0; t < p.kh * p.kw * p.c; ++t)
    std::memcpy(&filter[t * p.cp], wsrc + t * p.cout, p.cout * sizeof(float));
  std::memcpy(shift.data(), bias.typed_data(), p.cout * sizeof(float));
  p.w = filter.data();
  p.bias = shift.data();
  std::atomic<bool> out_of_memory{false};
  auto body = [&](int64_t first, int64_t last) {
    std::vector<float> scratch;
    std::vector<int64_t> held;
    try {  // in a pool thread: an exception must not leave it
      scratch.resize(p.c * p.kh * p.sw * p.phase);
      held.resize(p.c * p.kh);
      Rows(p, scratch.data(), held.data(), first, last);
    } catch (const std::bad_alloc&) {
      out_of_memory.store(true);
    }
  };
  const int64_t rows = p.n * p.oh;
  const int64_t per_row = p.ow * p.cp * p.c * p.kh * p.kw;
  // pieces of at least 8 output rows: each piece prepares the input rows it reads once (its ring starts empty)
  const int64_t grain = std::max<int64_t>(8, (int64_t{1} << 20) / std::max<int64_t>(per_row, 1));
  ParallelFor(pool, rows, grain, body);
  if (out_of_memory.load()) return ffi::Error::Internal("stem convolution kernel: out of memory for its scratch rows");
  return ffi::Error::Success();
}

ffi::Error StemConvImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w,
                        ffi::Buffer<ffi::F32> bias, ffi::ResultBuffer<ffi::F32> y, int64_t sh, int64_t sw, int64_t pt,
                        int64_t pl, int64_t activation) {
  try {
    return Compute(pool, x, w, bias, y, sh, sw, pt, pl, activation);
  } catch (const std::bad_alloc&) {
    return ffi::Error::Internal("stem convolution kernel: out of memory");
  }
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkStemConv, StemConvImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("stride_h")
                                  .Attr<int64_t>("stride_w")
                                  .Attr<int64_t>("pad_top")
                                  .Attr<int64_t>("pad_left")
                                  .Attr<int64_t>("activation"));
