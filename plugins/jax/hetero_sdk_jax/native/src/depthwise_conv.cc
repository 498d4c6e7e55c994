// Depthwise 2-D convolution (one input channel per group, multiplier 1) of channels-last f32 data on
// XLA:CPU through XLA's FFI.
//
// Two handlers: HeteroSdkDepthwiseConv (target hetero_sdk_depthwise_conv), operands x f32 [N, H, W, C]
// and w f32 [KH, KW, 1, C]; HeteroSdkDepthwiseConvBias (hetero_sdk_depthwise_conv_bias), also bias f32 [C].
// Result: y f32 [N, OH, OW, C] (its shape is the caller's: OH and OW follow from the padding at the bottom and right, which the kernel never needs).
// Attributes: stride_h, stride_w (>= 1), pad_top, pad_left (any sign: negative crops), dilation_h,
// dilation_w (>= 1); the second handler also activation (0 none, 1 relu, 2 hardswish
// x * min(max(x / 6 + 1/2, 0), 1), the definition's x * min(max(x + 3, 0), 6) / 6 with the division a
// multiply by 1/6, as the XLA lowering of HSwish computes it), applied after the bias.
// y[n, i, j, c] = act(sum over taps (a, b) inside x of x[n, i*sh - pt + a*dh, j*sw - pl + b*dw, c] * w[a, b, 0, c]
//                     + bias[c]), applied to each output vector before it is stored.
//
// Padding is never materialised: per output row the taps whose input row lies inside x are found once, and
// taps over the padding are skipped (never multiplied by a zero). 16 channels at a time (the last ones
// masked), one block of channels after the other: for filters 3, 5 or 7 wide at width stride 1 or 2 and
// width dilation 1, a sliding window computes 16 output columns at once (Tile: each input vector is
// loaded once per filter row and multiplied into every accumulator that reads it), one strip of columns
// from the top output row to the bottom, the strips at the borders checking which input columns exist;
// other filters run a generic loop (interior columns in blocks of kBlock, each tap's weight vector loaded
// once per block; the border columns tap by tap). Work over the output rows is split on XLA's intra-op
// thread pool when there is enough of it.
// Without AVX-512 a portable loop (vectorised by the compiler over the channels) computes the same.
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>

#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using hetero_sdk_native::ParallelFor;

namespace {

enum Activation : int64_t { kNone = 0, kRelu = 1, kHardSwish = 2 };

struct Problem {
  const float* x;
  const float* w;
  float* y;
  int64_t n, h, w_in, c, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw;
  const float* bias;  // nullptr: none
  int64_t activation;
};

// The activation of one value, as the reference computes it.
inline float Activate(float v, int64_t activation) {
  switch (activation) {
    case kRelu: return std::max(v, 0.0f);
    case kHardSwish: return v * std::min(std::max(v * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);
    default: return v;
  }
}

// Taps [first, last) of the filter along one axis whose input index (origin + tap * dilation) is in [0, size).
inline void TapRange(int64_t origin, int64_t dilation, int64_t taps, int64_t size, int64_t* first, int64_t* last) {
  int64_t a = 0;
  while (a < taps && origin + a * dilation < 0) ++a;
  int64_t b = taps;
  while (b > a && origin + (b - 1) * dilation >= size) --b;
  *first = a;
  *last = b;
}

// Output columns [lo, hi) whose every tap along the width lies inside x.
inline void Interior(const Problem& p, int64_t* lo, int64_t* hi) {
  const int64_t span = (p.kw - 1) * p.dw;
  // j*sw - pl >= 0  and  j*sw - pl + span <= W - 1
  int64_t first = p.pl > 0 ? (p.pl + p.sw - 1) / p.sw : 0;
  const int64_t room = p.w_in - 1 - span + p.pl;
  int64_t last = room < 0 ? 0 : room / p.sw + 1;
  first = std::min(first, p.ow);
  last = std::max(first, std::min(last, p.ow));
  *lo = first;
  *hi = last;
}

#if defined(__AVX512F__)

constexpr int64_t kLanes = 16;
constexpr int kBlock = 8;  // interior output columns computed together by the generic path
constexpr int kTile = 16;  // output columns computed together by the sliding-window path

// The 16 channels from c (the last ones masked) and their bias.
struct Lanes {
  int64_t c;
  __mmask16 mask;
  __m512 bias;
};

// The bias and activation of one output vector (Activate, 16 lanes at a time: no division per vector).
inline __m512 Finish(const Problem& p, Lanes lanes, __m512 v) {
  if (p.bias != nullptr) v = _mm512_add_ps(v, lanes.bias);
  const __m512 zero = _mm512_setzero_ps();
  switch (p.activation) {
    case kRelu: return _mm512_max_ps(zero, v);  // vmaxps returns its second operand for a NaN: NaN stays
    case kHardSwish: {
      const __m512 gate = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
      return _mm512_mul_ps(v, _mm512_min_ps(_mm512_max_ps(gate, zero), _mm512_set1_ps(1.0f)));
    }
    default: return v;
  }
}

// Calls f(std::integral_constant<int, 0>) ... f(std::integral_constant<int, N - 1>) in order, unrolled.
template <typename F, int... I>
__attribute__((always_inline)) inline void UnrolledImpl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, typename F>
__attribute__((always_inline)) inline void Unrolled(F&& f) {
  UnrolledImpl(f, std::make_integer_sequence<int, N>{});
}

// kCols output columns from j of row i of image n, 16 channels, for a filter KW wide at width stride SW and
// width dilation 1 (taps along the height: [a0, a1)). A sliding window: per filter row its KW weight
// vectors are loaded once, then each of the row's (kCols - 1) * SW + KW input vectors is loaded once and
// multiplied into every accumulator that reads it (output column k reads input column k * SW + b for
// tap b); kCols accumulators keep both FMA ports busy. kChecked: some input columns lie outside x, and
// their taps are skipped (as the border columns of the generic path skip them).
template <int KW, int SW, int kCols, bool kChecked>
void Tile(const Problem& p, Lanes lanes, int64_t n, int64_t i, int64_t a0, int64_t a1, int64_t j) {
  constexpr int kInputs = (kCols - 1) * SW + KW;
  const int64_t row0 = i * p.sh - p.pt, col0 = j * SW - p.pl;
  const int64_t pitch = p.w_in * p.c, c = p.c;
  const __mmask16 mask = lanes.mask;
  const float* image = p.x + n * p.h * pitch + lanes.c;
  __m512 acc[kCols];
  Unrolled<kCols>([&](auto k) { acc[k] = _mm512_setzero_ps(); });
  for (int64_t a = a0; a < a1; ++a) {
    const float* row = image + (row0 + a * p.dh) * pitch + col0 * c;
    const float* wrow = p.w + a * KW * c + lanes.c;
    __m512 wv[KW];
    Unrolled<KW>([&](auto b) { wv[b] = _mm512_maskz_loadu_ps(mask, wrow + b * c); });
    Unrolled<kInputs>([&](auto t) {
      if (kChecked && (col0 + t < 0 || col0 + t >= p.w_in)) return;
      const __m512 in = _mm512_maskz_loadu_ps(mask, row + t * c);
      Unrolled<KW>([&](auto b) {
        constexpr int kOffset = t - b;
        if constexpr (kOffset >= 0 && kOffset % SW == 0 && kOffset / SW < kCols)
          acc[kOffset / SW] = _mm512_fmadd_ps(in, wv[b], acc[kOffset / SW]);
      });
    });
  }
  float* out = p.y + ((n * p.oh + i) * p.ow + j) * c + lanes.c;
  Unrolled<kCols>([&](auto k) { _mm512_mask_storeu_ps(out + k * c, mask, Finish(p, lanes, acc[k])); });
}

// Output rows [first, last) by Tile, one strip of columns at a time (kTile wide, then 8, 4, 2 and 1) from
// the top row to the bottom one: a strip's few input columns stay in L1 from one output row to the next
// (row by row, a block's KH input rows across the whole width did not, and ran 1.3x slower on 3x3 layers of
// 64-128 channels). The tiles that reach outside the interior [lo, hi) are checked.
template <int KW, int SW>
void TiledStrips(const Problem& p, Lanes lanes, int64_t first, int64_t last, int64_t lo, int64_t hi) {
  int64_t j = 0;
  auto strip = [&](auto cols) {
    constexpr int kCols = decltype(cols)::value;
    for (; j + kCols <= p.ow; j += kCols) {
      const bool inside = j >= lo && j + kCols <= hi;
      for (int64_t r = first; r < last; ++r) {
        const int64_t n = r / p.oh, i = r % p.oh;
        int64_t a0, a1;
        TapRange(i * p.sh - p.pt, p.dh, p.kh, p.h, &a0, &a1);
        if (inside) Tile<KW, SW, kCols, false>(p, lanes, n, i, a0, a1, j);
        else Tile<KW, SW, kCols, true>(p, lanes, n, i, a0, a1, j);
      }
    }
  };
  strip(std::integral_constant<int, kTile>{});
  strip(std::integral_constant<int, 8>{});
  strip(std::integral_constant<int, 4>{});
  strip(std::integral_constant<int, 2>{});
  strip(std::integral_constant<int, 1>{});
}

// Rows [first, last) by TiledStrips: strip by strip, except for 16 channels or fewer, where a block's input
// rows are contiguous and row by row reads them as streams (PP-OCR det's 16 channels at 160x160: 0.91x the
// strips).
template <int KW, int SW>
void TiledRows(const Problem& p, Lanes lanes, int64_t first, int64_t last, int64_t lo, int64_t hi) {
  if (p.c <= kLanes)
    for (int64_t r = first; r < last; ++r) TiledStrips<KW, SW>(p, lanes, r, r + 1, lo, hi);
  else TiledStrips<KW, SW>(p, lanes, first, last, lo, hi);
}

// kCols interior columns from j of output row i of image n, channels `lanes` (taps along the height: [a0, a1)):
// any filter width, stride and dilation.
template <int kCols>
inline void InteriorColumns(const Problem& p, Lanes lanes, int64_t n, int64_t i, int64_t a0, int64_t a1, int64_t j) {
  const int64_t row0 = i * p.sh - p.pt, col0 = j * p.sw - p.pl;
  const int64_t pitch = p.w_in * p.c, step = p.sw * p.c;
  const __mmask16 mask = lanes.mask;
  const float* image = p.x + n * p.h * pitch + lanes.c;
  float* out = p.y + ((n * p.oh + i) * p.ow + j) * p.c + lanes.c;
  __m512 acc[kCols];
  for (int k = 0; k < kCols; ++k) acc[k] = _mm512_setzero_ps();
  for (int64_t a = a0; a < a1; ++a) {
    const float* row = image + (row0 + a * p.dh) * pitch + col0 * p.c;
    const float* wrow = p.w + a * p.kw * p.c + lanes.c;
    for (int64_t b = 0; b < p.kw; ++b) {
      const __m512 wv = _mm512_maskz_loadu_ps(mask, wrow + b * p.c);
      const float* tap = row + b * p.dw * p.c;
      for (int k = 0; k < kCols; ++k) acc[k] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, tap + k * step), wv, acc[k]);
    }
  }
  for (int k = 0; k < kCols; ++k) _mm512_mask_storeu_ps(out + k * p.c, mask, Finish(p, lanes, acc[k]));
}

// One output column j of row i with every tap checked against the borders.
inline void BorderColumn(const Problem& p, Lanes lanes, int64_t n, int64_t i, int64_t a0, int64_t a1, int64_t j) {
  const int64_t row0 = i * p.sh - p.pt, col0 = j * p.sw - p.pl;
  int64_t b0, b1;
  TapRange(col0, p.dw, p.kw, p.w_in, &b0, &b1);
  const __mmask16 mask = lanes.mask;
  const float* image = p.x + n * p.h * p.w_in * p.c + lanes.c;
  __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};  // two chains of FMAs, not one
  for (int64_t a = a0; a < a1; ++a)
    for (int64_t b = b0; b < b1; ++b)
      acc[b & 1] = _mm512_fmadd_ps(
          _mm512_maskz_loadu_ps(mask, image + ((row0 + a * p.dh) * p.w_in + col0 + b * p.dw) * p.c),
          _mm512_maskz_loadu_ps(mask, p.w + (a * p.kw + b) * p.c + lanes.c), acc[b & 1]);
  _mm512_mask_storeu_ps(p.y + ((n * p.oh + i) * p.ow + j) * p.c + lanes.c, mask,
                        Finish(p, lanes, _mm512_add_ps(acc[0], acc[1])));
}

// Row i by the generic path: border columns one by one, the interior kBlock columns at a time.
inline void GenericRow(const Problem& p, Lanes lanes, int64_t n, int64_t i, int64_t a0, int64_t a1, int64_t lo,
                       int64_t hi) {
  int64_t j = 0;
  for (; j < lo; ++j) BorderColumn(p, lanes, n, i, a0, a1, j);
  for (; j + kBlock <= hi; j += kBlock) InteriorColumns<kBlock>(p, lanes, n, i, a0, a1, j);
  for (; j + 4 <= hi; j += 4) InteriorColumns<4>(p, lanes, n, i, a0, a1, j);
  for (; j < hi; ++j) InteriorColumns<1>(p, lanes, n, i, a0, a1, j);
  for (j = std::max(j, hi); j < p.ow; ++j) BorderColumn(p, lanes, n, i, a0, a1, j);
}

using RowsFunction = void (*)(const Problem&, Lanes, int64_t, int64_t, int64_t, int64_t);

// Rows [first, last) by the generic path, row by row.
void GenericRows(const Problem& p, Lanes lanes, int64_t first, int64_t last, int64_t lo, int64_t hi) {
  for (int64_t r = first; r < last; ++r) {
    const int64_t n = r / p.oh, i = r % p.oh;
    int64_t a0, a1;
    TapRange(i * p.sh - p.pt, p.dh, p.kh, p.h, &a0, &a1);
    GenericRow(p, lanes, n, i, a0, a1, lo, hi);
  }
}

// The sliding-window rows for this filter width and width stride (dilation 1), else the generic ones.
RowsFunction ChooseRows(const Problem& p) {
  if (p.dw != 1 || p.sw > 2) return GenericRows;
  const bool s1 = p.sw == 1;
  switch (p.kw) {
    case 3: return s1 ? TiledRows<3, 1> : TiledRows<3, 2>;
    case 5: return s1 ? TiledRows<5, 1> : TiledRows<5, 2>;
    case 7: return s1 ? TiledRows<7, 1> : TiledRows<7, 2>;
    default: return GenericRows;
  }
}

// Output rows [first, last) (of every image: row r is row r % OH of image r / OH), one block of 16 channels
// at a time over all the rows.
void Rows(const Problem& p, int64_t first, int64_t last) {
  int64_t lo, hi;
  Interior(p, &lo, &hi);
  const RowsFunction rows = ChooseRows(p);
  for (int64_t c = 0; c < p.c; c += kLanes) {
    const __mmask16 mask = p.c - c >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << (p.c - c)) - 1);
    const Lanes lanes{c, mask, p.bias != nullptr ? _mm512_maskz_loadu_ps(mask, p.bias + c) : _mm512_setzero_ps()};
    rows(p, lanes, first, last, lo, hi);
  }
}

#else  // portable: the compiler vectorises the loops over the channels

void Rows(const Problem& p, int64_t first, int64_t last) {
  for (int64_t r = first; r < last; ++r) {
    const int64_t n = r / p.oh, i = r % p.oh;
    int64_t a0, a1;
    TapRange(i * p.sh - p.pt, p.dh, p.kh, p.h, &a0, &a1);
    for (int64_t j = 0; j < p.ow; ++j) {
      int64_t b0, b1;
      TapRange(j * p.sw - p.pl, p.dw, p.kw, p.w_in, &b0, &b1);
      float* out = p.y + ((n * p.oh + i) * p.ow + j) * p.c;
      std::memset(out, 0, p.c * sizeof(float));
      for (int64_t a = a0; a < a1; ++a)
        for (int64_t b = b0; b < b1; ++b) {
          const float* in = p.x + ((n * p.h + i * p.sh - p.pt + a * p.dh) * p.w_in + j * p.sw - p.pl + b * p.dw) * p.c;
          const float* wv = p.w + (a * p.kw + b) * p.c;
          for (int64_t c = 0; c < p.c; ++c) out[c] += in[c] * wv[c];
        }
      if (p.bias != nullptr)
        for (int64_t c = 0; c < p.c; ++c) out[c] += p.bias[c];
      if (p.activation != kNone)
        for (int64_t c = 0; c < p.c; ++c) out[c] = Activate(out[c], p.activation);
    }
  }
}

#endif

// Checks the operands and computes y (bias: nullptr or [C]).
ffi::Error Compute(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w, const float* bias,
                   ffi::ResultBuffer<ffi::F32> y, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                   int64_t pad_left, int64_t dilation_h, int64_t dilation_w, int64_t activation) {
  const auto xd = x.dimensions(), wd = w.dimensions(), yd = y->dimensions();
  if (xd.size() != 4 || wd.size() != 4 || yd.size() != 4)
    return ffi::Error::InvalidArgument("depthwise convolution kernel: x, w and y must be 4-D");
  if (wd[2] != 1 || wd[3] != xd[3] || yd[3] != xd[3] || yd[0] != xd[0])
    return ffi::Error::InvalidArgument("depthwise convolution kernel: w must be [KH, KW, 1, C] and y [N, OH, OW, C]");
  if (stride_h < 1 || stride_w < 1 || dilation_h < 1 || dilation_w < 1)
    return ffi::Error::InvalidArgument("depthwise convolution kernel: strides and dilations must be >= 1");
  if (activation < kNone || activation > kHardSwish)
    return ffi::Error::InvalidArgument("depthwise convolution kernel: activation must be 0, 1 or 2");
  Problem p{x.typed_data(), w.typed_data(), y->typed_data(), xd[0], xd[1], xd[2], xd[3], wd[0], wd[1],
            yd[1], yd[2], stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w, bias, activation};
  const int64_t rows = p.n * p.oh;
  if (rows == 0 || p.ow == 0 || p.c == 0) return ffi::Error::Success();
  const int64_t per_row = p.ow * p.c * p.kh * p.kw;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 17) / std::max<int64_t>(per_row, 1));
  auto body = [&](int64_t first, int64_t last) { Rows(p, first, last); };
  if (rows * per_row < (int64_t{1} << 19)) body(0, rows);
  else ParallelFor(pool, rows, grain, body);
  return ffi::Error::Success();
}

ffi::Error DepthwiseConvImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w,
                             ffi::ResultBuffer<ffi::F32> y, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                             int64_t pad_left, int64_t dilation_h, int64_t dilation_w) {
  return Compute(pool, x, w, nullptr, y, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w, kNone);
}

ffi::Error DepthwiseConvBiasImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w,
                                 ffi::Buffer<ffi::F32> bias, ffi::ResultBuffer<ffi::F32> y, int64_t stride_h,
                                 int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t dilation_h,
                                 int64_t dilation_w, int64_t activation) {
  const auto bd = bias.dimensions(), xd = x.dimensions();
  if (bd.size() != 1 || xd.size() != 4 || bd[0] != xd[3])
    return ffi::Error::InvalidArgument("depthwise convolution kernel: bias must be [C]");
  return Compute(pool, x, w, bias.typed_data(), y, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w,
                 activation);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkDepthwiseConv, DepthwiseConvImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("stride_h")
                                  .Attr<int64_t>("stride_w")
                                  .Attr<int64_t>("pad_top")
                                  .Attr<int64_t>("pad_left")
                                  .Attr<int64_t>("dilation_h")
                                  .Attr<int64_t>("dilation_w"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkDepthwiseConvBias, DepthwiseConvBiasImpl,
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
                                  .Attr<int64_t>("dilation_h")
                                  .Attr<int64_t>("dilation_w")
                                  .Attr<int64_t>("activation"));
