// A dense 2-D f32 convolution of channels-last data on XLA:CPU through XLA's FFI (one group, dilation 1).
//
// Operands: x f32 [N, H, W, Cin], w f32 [kh, kw, Cin, Cout], or w already blocked as the kernel reads it,
// [ceil(Cout / 32)][kh][kw][Cin][32] with zeros past Cout (prepared once when the model compiles; Cout is
// then the result's).
// Attributes: stride_h, stride_w, pad_top, pad_left (the bottom and right pads follow from the result's
// shape: rows and columns read past the input are zeros).
// Result: y f32 [N, OH, OW, Cout], y[n, oh, ow, o] = sum_{i, j, c} x[n, oh*sh + i - pt, ow*sw + j - pl, c] * w[i, j, c, o].
// The second handler (HeteroSdkConv2dBias) takes a third operand, bias f32 [Cout], and the attribute
// activation (0 none, 1 relu, 2 silu: v * sigmoid(v)): y = activation(sum + bias[o]), applied to each
// tile's registers before they are stored (no second pass over the result).
//
// Direct convolution with register tiling: a tile of up to 14 output pixels of one row by 32 (or 16)
// output channels is held in zmm accumulators; for each tap (i, j) and input channel c, the tile's input
// values are broadcast one by one and multiplied with the filter's 16-wide vectors of w[i, j, c, :]. The
// image is never copied whole: each input row is transposed into a per-thread scratch [Cin][columns] with
// its pads as zeros (PackRow), and a tap row outside the input is skipped. The filter is read in blocks of
// 32 output channels, in order by the tiles: a blocked operand in place, a 4-D one copied into blocks on
// each call. Cout is blocked by 16 with a
// masked tail. Output rows are split on XLA's intra-op thread pool.
#if !defined(__AVX512F__)
#error "this kernel needs AVX-512: the XLA device falls back to its pure-XLA lowering"
#endif

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "avx512_math.h"
#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using hetero_sdk_native::ParallelFor;
using hetero_sdk_native::Sigmoid;

namespace {

constexpr int64_t kLanes = 16;

enum Activation : int64_t { kNone = 0, kRelu = 1, kSilu = 2 };

struct Problem {
  const float* x;
  const float* w;
  const float* blocked;  // the filter as [Cout / 32][kh][kw][Cin][32], zeros past Cout (see Compute)
  const float* bias;  // [Cout], or null: nothing added
  int64_t activation;  // Activation
  float* y;
  int64_t n, h, w_in, cin, kh, kw, cout, oh, ow, sh, sw, pt, pl;
  int64_t pitch;  // floats per channel of a packed row (see PackRow)
};

inline __mmask16 LaneMask(int64_t remaining) {
  if (remaining <= 0) return 0;
  return remaining >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1);
}

// Input row (b, ih) transposed to [Cin][pitch] with its pads: packed[c * pitch + u] = x[b, ih, u - pl, c],
// zero where u - pl lies outside the row. Output pixel ow at tap column j then reads packed[c * pitch +
// ow * sw + j]: one pointer per channel, the tile's pixels at fixed offsets from it.
void PackRow(const Problem& p, int64_t b, int64_t ih, float* packed) {
  const float* row = p.x + (b * p.h + ih) * p.w_in * p.cin;
  const int64_t first = std::min(p.pl, p.pitch), last = std::min(p.pl + p.w_in, p.pitch);
  for (int64_t c = 0; c < p.cin; ++c) {
    float* out = packed + c * p.pitch;
    for (int64_t u = 0; u < first; ++u) out[u] = 0.0f;
    for (int64_t u = last; u < p.pitch; ++u) out[u] = 0.0f;
  }
  // 16 pixels of one channel at a time, gathered (the scalar transposition measured slower)
  const __m512i index = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32(static_cast<int32_t>(p.cin)));
  for (int64_t c = 0; c < p.cin; ++c) {
    float* out = packed + c * p.pitch;
    for (int64_t u = first; u < last; u += kLanes) {
      const __mmask16 mask = LaneMask(last - u);
      const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, index, row + (u - p.pl) * p.cin + c, 4);
      _mm512_mask_storeu_ps(out + u, mask, v);
    }
  }
}

// The register tile's inner loop over the input channels of one tap: acc (Tile x V vectors, pixel-major)
// += in[c * pitch + t * S] * wt[c * cout + v * 16 ...]. The accumulators are named variables (at most 14
// pixels): held in an array, GCC 12 stored every one of them to the stack on each step.
#define HETERO_SDK_REPEAT14(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
template <int Tile, int V, int S>
inline void Taps(const float* in, const float* wt, int64_t cin, int64_t pitch, int64_t cout, __mmask16 m0,
                 __mmask16 m1, __m512* acc) {
  static_assert(Tile <= 14, "at most 14 pixels a tile");
  const __m512 zero = _mm512_setzero_ps();
#define HETERO_SDK_LOAD(k)                                                \
  __m512 a0_##k = Tile > k ? acc[k * V] : zero;                           \
  __m512 a1_##k = (V == 2 && Tile > k) ? acc[k * V + V - 1] : zero;
  HETERO_SDK_REPEAT14(HETERO_SDK_LOAD)
#undef HETERO_SDK_LOAD
  for (int64_t c = 0; c < cin; ++c, in += pitch, wt += cout) {
    const __m512 w0 = _mm512_maskz_loadu_ps(m0, wt);
    const __m512 w1 = V == 2 ? _mm512_maskz_loadu_ps(m1, wt + kLanes) : zero;
#define HETERO_SDK_STEP(k)                                  \
    if constexpr (Tile > k) {                               \
      const __m512 xv = _mm512_set1_ps(in[k * S]);          \
      a0_##k = _mm512_fmadd_ps(xv, w0, a0_##k);             \
      if constexpr (V == 2) a1_##k = _mm512_fmadd_ps(xv, w1, a1_##k); \
    }
    HETERO_SDK_REPEAT14(HETERO_SDK_STEP)
#undef HETERO_SDK_STEP
  }
#define HETERO_SDK_STORE(k)                                 \
  if constexpr (Tile > k) {                                 \
    acc[k * V] = a0_##k;                                    \
    if constexpr (V == 2) acc[k * V + V - 1] = a1_##k;      \
  }
  HETERO_SDK_REPEAT14(HETERO_SDK_STORE)
#undef HETERO_SDK_STORE
}
#undef HETERO_SDK_REPEAT14

// The activation of a biased sum, in the reference's order (silu: v * (1 / (1 + e^-v))).
inline __m512 Activate(int64_t activation, __m512 v) {
  if (activation == kRelu) return _mm512_max_ps(v, _mm512_setzero_ps());
  if (activation == kSilu) return _mm512_mul_ps(v, Sigmoid(v));
  return v;
}

// Output pixels [ow0, ow0 + count) of one row, channels [co, co + V * 16) (masked past Cout); rows[i]: tap
// row i packed (PackRow), null where it lies outside the input.
template <int Tile, int V, int S>
inline void TileOf(const Problem& p, const float* const* rows, float* out, int64_t ow0, int64_t count, int64_t co) {
  static_assert(V == 1 || V == 2, "one or two vectors of output channels");
  alignas(64) __m512 acc[Tile * V];
  for (int k = 0; k < Tile * V; ++k) acc[k] = _mm512_setzero_ps();
  const __mmask16 m0 = LaneMask(p.cout - co), m1 = LaneMask(p.cout - co - kLanes);
  for (int64_t i = 0; i < p.kh; ++i) {
    if (rows[i] == nullptr) continue;
    for (int64_t j = 0; j < p.kw; ++j)
      Taps<Tile, V, S>(rows[i] + ow0 * S + j, p.blocked + (co * p.kh * p.kw + (i * p.kw + j) * 2 * kLanes) * p.cin,
                       p.cin, p.pitch, 2 * kLanes, m0, m1, acc);
  }
  out += ow0 * p.cout + co;
  if (p.bias != nullptr) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, p.bias + co);
    const __m512 b1 = V == 2 ? _mm512_maskz_loadu_ps(m1, p.bias + co + kLanes) : b0;
    for (int64_t t = 0; t < count; ++t) {
      acc[t * V] = Activate(p.activation, _mm512_add_ps(acc[t * V], b0));
      if constexpr (V == 2) acc[t * V + 1] = Activate(p.activation, _mm512_add_ps(acc[t * V + 1], b1));
    }
  }
  for (int64_t t = 0; t < count; ++t) {
    _mm512_mask_storeu_ps(out + t * p.cout, m0, acc[t * V]);
    if constexpr (V == 2) _mm512_mask_storeu_ps(out + t * p.cout + kLanes, m1, acc[t * V + 1]);
  }
}

// TileOf for a tile of `count` pixels, count <= Tile: the tile's exact size, so no pixel is computed in vain.
template <int Tile, int V, int S>
inline void TileOfSize(const Problem& p, const float* const* rows, float* out, int64_t ow0, int64_t count, int64_t co) {
  if constexpr (Tile > 1) {
    if (count < Tile) return TileOfSize<Tile - 1, V, S>(p, rows, out, ow0, count, co);
  }
  TileOf<Tile, V, S>(p, rows, out, ow0, count, co);
}

// Output rows [r0, r1) of the N * OH rows, output channels [c0, c1) (a multiple of 32 apart, but for the
// last range); scratch: kh packed rows, input row ih in slot ih % kh (a row packed for one output row serves
// the next ones that read it).
template <int Tile, int S>
void Rows(const Problem& p, float* scratch, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  std::vector<const float*> rows(p.kh);
  std::vector<int64_t> held(p.kh, -1);  // the input row (b * H + ih) each slot holds
  const int64_t tiles = (p.ow + Tile - 1) / Tile, size = (p.ow + tiles - 1) / tiles;  // tiles of even size
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / p.oh, oh = r % p.oh;
    for (int64_t i = 0; i < p.kh; ++i) {
      const int64_t ih = oh * p.sh + i - p.pt;
      if (ih < 0 || ih >= p.h) {
        rows[i] = nullptr;
        continue;
      }
      const int64_t slot = ih % p.kh;
      float* packed = scratch + slot * p.cin * p.pitch;
      if (held[slot] != b * p.h + ih) {
        PackRow(p, b, ih, packed);
        held[slot] = b * p.h + ih;
      }
      rows[i] = packed;
    }
    float* out = p.y + r * p.ow * p.cout;
    for (int64_t ow0 = 0; ow0 < p.ow; ow0 += size) {
      const int64_t count = std::min<int64_t>(size, p.ow - ow0);
      for (int64_t co = c0; co < c1; co += 2 * kLanes) {
        if (c1 - co > kLanes) TileOfSize<Tile, 2, S>(p, rows.data(), out, ow0, count, co);
        else TileOfSize<Tile, 1, S>(p, rows.data(), out, ow0, count, co);  // 16 channels or fewer left
      }
    }
  }
}

// Output rows [r0, r1), the output channels in groups whose filter columns fit in L2 together: for each
// group every row (its packed input rows made again per group).
template <int S>
void RowsOf(const Problem& p, float* scratch, int64_t r0, int64_t r1) {
  constexpr int64_t kFilterBytes = int64_t{1} << 20;
  const int64_t block_bytes = p.kh * p.kw * p.cin * 2 * kLanes * int64_t{sizeof(float)};
  const int64_t group = std::max<int64_t>(1, kFilterBytes / std::max<int64_t>(block_bytes, 1)) * 2 * kLanes;
  for (int64_t c0 = 0; c0 < p.cout; c0 += group) Rows<14, S>(p, scratch, r0, r1, c0, std::min(p.cout, c0 + group));
}

ffi::Error Compute(ffi::ThreadPool& pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w, const float* bias,
                   int64_t bias_size, int64_t activation, ffi::ResultBuffer<ffi::F32> y, int64_t sh, int64_t sw,
                   int64_t pt, int64_t pl) {
  const auto xd = x.dimensions(), wd = w.dimensions(), yd = y->dimensions();
  const bool ready = wd.size() == 5;  // blocked once at compile time
  if (xd.size() != 4 || (wd.size() != 4 && !ready) || yd.size() != 4)
    return ffi::Error::InvalidArgument("conv2d kernel: x and y must be 4-D, w 4-D or 5-D (blocked)");
  Problem p;
  p.n = xd[0], p.h = xd[1], p.w_in = xd[2], p.cin = xd[3];
  p.kh = wd[ready ? 1 : 0], p.kw = wd[ready ? 2 : 1], p.cout = yd[3];
  p.oh = yd[1], p.ow = yd[2];
  p.sh = sh, p.sw = sw, p.pt = pt, p.pl = pl;
  const bool agree = ready ? wd[3] == p.cin && wd[4] == 2 * kLanes && wd[0] == (p.cout + 2 * kLanes - 1) / (2 * kLanes)
                           : wd[2] == p.cin && wd[3] == p.cout;
  if (!agree || yd[0] != p.n || sh < 1 || sw < 1 || sw > 2)
    return ffi::Error::InvalidArgument("conv2d kernel: operand shapes do not agree");
  if (bias != nullptr && bias_size != p.cout)
    return ffi::Error::InvalidArgument("conv2d kernel: the bias must hold one value per output channel");
  if (activation < kNone || activation > kSilu)
    return ffi::Error::InvalidArgument("conv2d kernel: activation must be 0 (none), 1 (relu) or 2 (silu)");
  p.bias = bias;
  p.activation = activation;
  p.x = x.typed_data();
  p.w = w.typed_data();
  p.y = y->typed_data();
  const int64_t rows = p.n * p.oh;
  if (rows == 0 || p.ow == 0 || p.cout == 0) return ffi::Error::Success();
  // The filter once in blocks of 32 output channels, each block's taps and channels one contiguous run:
  // the tiles stream it in order (read in place, a step of Cout floats per channel, the model's filters,
  // not in cache, made the kernel no faster than XLA's convolution within whole models).
  // A blocked operand is read in place (the copy cost 3-5 % of a layer).
  std::vector<float> blocked;
  if (ready) {
    p.blocked = p.w;
  } else {
    const int64_t per_block = p.kh * p.kw * p.cin * 2 * kLanes, blocks = (p.cout + 2 * kLanes - 1) / (2 * kLanes);
    blocked.assign(blocks * per_block, 0.0f);
    for (int64_t r = 0; r < p.kh * p.kw * p.cin; ++r)
      for (int64_t k = 0; k < blocks; ++k)
        std::copy_n(p.w + r * p.cout + k * 2 * kLanes, std::min<int64_t>(2 * kLanes, p.cout - k * 2 * kLanes),
                    blocked.data() + k * per_block + r * 2 * kLanes);
    p.blocked = blocked.data();
  }
  p.pitch = (p.ow - 1) * p.sw + p.kw;  // the columns the outputs read (tiles hold no spare pixels)
  std::atomic<bool> out_of_memory{false};
  auto body = [&](int64_t r0, int64_t r1) {
    std::vector<float> scratch;
    try {  // in a pool thread: an exception must not leave it
      scratch.resize(p.kh * p.cin * p.pitch);
    } catch (const std::bad_alloc&) {
      out_of_memory.store(true);
      return;
    }
    if (p.sw == 1) RowsOf<1>(p, scratch.data(), r0, r1);
    else RowsOf<2>(p, scratch.data(), r0, r1);
  };
  const int64_t row_work = p.ow * p.cout * p.kh * p.kw * p.cin;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(row_work, 1));
  ParallelFor(pool, rows, grain, body);
  if (out_of_memory.load()) return ffi::Error::Internal("conv2d kernel: out of memory for its scratch rows");
  return ffi::Error::Success();
}

ffi::Error Conv2dImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w,
                      ffi::ResultBuffer<ffi::F32> y, int64_t sh, int64_t sw, int64_t pt, int64_t pl) {
  try {
    return Compute(pool, x, w, nullptr, 0, kNone, y, sh, sw, pt, pl);
  } catch (const std::bad_alloc&) {
    return ffi::Error::Internal("conv2d kernel: out of memory");
  }
}

ffi::Error Conv2dBiasImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w,
                          ffi::Buffer<ffi::F32> bias, ffi::ResultBuffer<ffi::F32> y, int64_t sh, int64_t sw,
                          int64_t pt, int64_t pl, int64_t activation) {
  try {
    return Compute(pool, x, w, bias.typed_data(), static_cast<int64_t>(bias.element_count()), activation, y, sh, sw,
                   pt, pl);
  } catch (const std::bad_alloc&) {
    return ffi::Error::Internal("conv2d kernel: out of memory");
  }
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkConv2d, Conv2dImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("stride_h")
                                  .Attr<int64_t>("stride_w")
                                  .Attr<int64_t>("pad_top")
                                  .Attr<int64_t>("pad_left"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkConv2dBias, Conv2dBiasImpl,
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
