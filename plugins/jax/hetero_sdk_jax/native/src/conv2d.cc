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
// Indirect GEMM (XNNPACK's igemm): a tile of up to 12 consecutive output pixels (of the N * OH * OW, a tile
// may span rows) by 32 (or 16) output channels is held in zmm accumulators. The kw input pixels an output
// pixel reads at kernel row i are adjacent in channels-last data, one run of kw * Cin floats, and so is
// the filter's [i][*][*] in a block: the tile keeps one pointer per pixel and kernel row (its indirection)
// and, along the run, broadcasts each pixel's value from memory and multiplies it with the filter's
// 16-wide vectors. The input is read in place (no transposition, no padded copy): a kernel row outside the
// input points at zeros, and only a run crossing the left or right pad is copied with its zeros into a
// per-thread scratch. The filter is read in blocks of 32 output channels, each block's runs in order: a
// blocked operand in place, a 4-D one copied into blocks on each call. Cout is blocked by 16 with a masked
// tail; the last 33-48 channels go in tiles of 8 pixels by three vectors. A tile in one output row clear of
// the pads finds its runs one step apart, and its last 16 or fewer channels (3-wide kernels, 16 or 32 input
// channels) broadcast each input value once for the up to three pixels that read it. Tiles are split on
// XLA's intra-op thread pool.
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

namespace {

constexpr int64_t kLanes = 16;
constexpr int kTile = 12;  // output pixels a tile (12 measured 1-4 % faster than 10 or 8 at 32-128 channels)
// How far ahead of its reads the filter is prefetched into L1, in floats (32 steps, 4 KB): a block's filter
// (kh * kw * Cin * 32 floats, 74-147 KB at 64-128 channels) streams from L2 on each tile, and the hardware
// prefetcher alone left 5-12 % of a 64-128-channel layer waiting on it (512 or 256 floats: within 2 %).
constexpr int64_t kFilterAhead = 1024;

enum Activation : int64_t { kNone = 0, kRelu = 1, kSilu = 2 };

struct Problem {
  const float* x;
  const float* w;
  const float* blocked;  // the filter as [Cout / 32][kh][kw][Cin][32], zeros past Cout (see Compute)
  const float* bias;  // [Cout], or null: nothing added
  int64_t activation;  // Activation
  float* y;
  int64_t n, h, w_in, cin, kh, kw, cout, oh, ow, sh, sw, pt, pl;
};

inline __mmask16 LaneMask(int64_t remaining) {
  if (remaining <= 0) return 0;
  return remaining >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1);
}

// The activation of a biased sum (SiLU: avx512_math.h's, v / (1 + e^-v) within a few ulps).
inline __m512 Activate(int64_t activation, __m512 v) {
  if (activation == kRelu) return _mm512_max_ps(v, _mm512_setzero_ps());
  if (activation == kSilu) return hetero_sdk_native::Silu(v);
  return v;
}

// The tile's sums acc[3 * k + v] (pixel k, vector v < V) plus the bias, activated, stored to out (pixel
// m0's outputs) for count pixels, channels [co, co + V * 16) masked past Cout.
template <int V>
inline void Finish(const Problem& p, __m512* acc, float* out, int64_t count, int64_t co) {
  const __mmask16 m0 = LaneMask(p.cout - co), m1 = LaneMask(p.cout - co - kLanes),
                  m2 = LaneMask(p.cout - co - 2 * kLanes);
  out += co;
  if (p.bias != nullptr) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, p.bias + co), b1 = _mm512_maskz_loadu_ps(m1, p.bias + co + kLanes),
                 b2 = _mm512_maskz_loadu_ps(m2, p.bias + co + 2 * kLanes);
    for (int64_t k = 0; k < count; ++k) {
      acc[3 * k] = Activate(p.activation, _mm512_add_ps(acc[3 * k], b0));
      if constexpr (V >= 2) acc[3 * k + 1] = Activate(p.activation, _mm512_add_ps(acc[3 * k + 1], b1));
      if constexpr (V == 3) acc[3 * k + 2] = Activate(p.activation, _mm512_add_ps(acc[3 * k + 2], b2));
    }
  }
  for (int64_t k = 0; k < count; ++k) {
    _mm512_mask_storeu_ps(out + k * p.cout, m0, acc[3 * k]);
    if constexpr (V >= 2) _mm512_mask_storeu_ps(out + k * p.cout + kLanes, m1, acc[3 * k + 1]);
    if constexpr (V == 3) _mm512_mask_storeu_ps(out + k * p.cout + 2 * kLanes, m2, acc[3 * k + 2]);
  }
}

// Output pixels [m0, m0 + count) (count <= Tile) by channels [co, co + V * 16) (masked past Cout): acc
// (Tile x V vectors) += run_k[r] * wt[r * 32 + v * 16 ...] over each kernel row's run r < kw * Cin, where
// run_k = ind[i * Tile + k] (Indirection) and wt walks the block's filter; then bias and activation, and the
// stores to out (pixel m0's outputs). The accumulators and pointers are named variables: held in arrays,
// GCC 12 stored the accumulators to the stack on each step.
#define HETERO_SDK_REPEAT12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
// The vectors' filters are read at wt, wt + 16 and wt + o2 (V == 3: the block's two halves and the first
// 16 channels of the next block, o2 = one block on).
template <int Tile, int V>
inline void TileOf(const Problem& p, const float* const* ind, int64_t stride, const float* wt, float* out,
                   int64_t count, int64_t co, int64_t o2 = 0) {
  static_assert(Tile <= 12, "at most 12 pixels a tile");
  static_assert(V >= 1 && V <= 3, "one to three vectors of output channels");
  static_assert(V < 3 || Tile <= 8, "at most 8 pixels a tile of three vectors (24 accumulators)");
  const __m512 zero = _mm512_setzero_ps();
  const float* w2p = wt + o2;
#define HETERO_SDK_ZERO(k) __m512 a0_##k = zero, a1_##k = zero, a2_##k = zero;
  HETERO_SDK_REPEAT12(HETERO_SDK_ZERO)
#undef HETERO_SDK_ZERO
  const int64_t run = p.kw * p.cin;
  for (int64_t i = 0; i < p.kh; ++i, ind += stride) {
#define HETERO_SDK_POINTER(k) const float* x_##k = Tile > k ? ind[k] : nullptr;
    HETERO_SDK_REPEAT12(HETERO_SDK_POINTER)
#undef HETERO_SDK_POINTER
    // the second vector's filter at a constant offset from the first's (a pointer of its own, with the 12
    // pixels', left too few registers: GCC reloaded two pixels' pointers from the stack on each step)
    for (int64_t r = 0; r < run; ++r, wt += 2 * kLanes) {
      _mm_prefetch(reinterpret_cast<const char*>(wt + kFilterAhead), _MM_HINT_T0);
      if constexpr (V >= 2) _mm_prefetch(reinterpret_cast<const char*>(wt + kLanes + kFilterAhead), _MM_HINT_T0);
      if constexpr (V == 3) _mm_prefetch(reinterpret_cast<const char*>(w2p + kFilterAhead), _MM_HINT_T0);
      const __m512 w0 = _mm512_loadu_ps(wt);
      const __m512 w1 = V >= 2 ? _mm512_loadu_ps(wt + kLanes) : zero;
      const __m512 w2 = V == 3 ? _mm512_loadu_ps(w2p) : zero;
      if constexpr (V == 3) w2p += 2 * kLanes;
#define HETERO_SDK_STEP(k)                                              \
      if constexpr (Tile > k) {                                         \
        const __m512 xv = _mm512_set1_ps(x_##k[r]);                     \
        a0_##k = _mm512_fmadd_ps(xv, w0, a0_##k);                       \
        if constexpr (V >= 2) a1_##k = _mm512_fmadd_ps(xv, w1, a1_##k); \
        if constexpr (V == 3) a2_##k = _mm512_fmadd_ps(xv, w2, a2_##k); \
      }
      HETERO_SDK_REPEAT12(HETERO_SDK_STEP)
#undef HETERO_SDK_STEP
    }
  }
  alignas(64) __m512 acc[Tile * 3];
#define HETERO_SDK_STORE(k)  \
  if constexpr (Tile > k) {  \
    acc[3 * k] = a0_##k;     \
    acc[3 * k + 1] = a1_##k; \
    acc[3 * k + 2] = a2_##k; \
  }
  HETERO_SDK_REPEAT12(HETERO_SDK_STORE)
#undef HETERO_SDK_STORE
  Finish<V>(p, acc, out, count, co);
}

// One output channel vector (V == 1: at most 16 channels left) for 12 pixels in one output row clear of the
// pads, the kernel 3 wide: each input value broadcast once for the up to 3 of the tile's pixels that read it
// (at stride 1: 14 broadcasts and 3 filter loads for 36 products a channel; TileOf's one-vector tile, one
// broadcast a product, ran at 0.65-0.75 of the two-vector tile's rate). ind: the tile's indirection
// (ind[i * kTile], the row's first pixel's run; the others are Stride * Cin floats on).
template <int64_t Cin, int Stride>
inline void RowTileOf(const Problem& p, const float* const* ind, const float* wt, float* out, int64_t co) {
  const __m512 zero = _mm512_setzero_ps();
#define HETERO_SDK_ZERO(k) __m512 a0_##k = zero;
  HETERO_SDK_REPEAT12(HETERO_SDK_ZERO)
#undef HETERO_SDK_ZERO
  for (int64_t i = 0; i < p.kh; ++i, wt += 3 * Cin * 2 * kLanes) {
    const float* xr = ind[i * kTile];
    for (int64_t c = 0; c < Cin; ++c) {
      const float* xc = xr + c;
      const float* wc = wt + c * 2 * kLanes;
      const __m512 w0 = _mm512_loadu_ps(wc), w1 = _mm512_loadu_ps(wc + Cin * 2 * kLanes),
                   w2 = _mm512_loadu_ps(wc + 2 * Cin * 2 * kLanes);
      // pixel k reads columns k * Stride + j; the same column's loads are one broadcast (GCC merges them)
#define HETERO_SDK_STEP(k)                                                                \
      a0_##k = _mm512_fmadd_ps(_mm512_set1_ps(xc[(k * Stride) * Cin]), w0, a0_##k);     \
      a0_##k = _mm512_fmadd_ps(_mm512_set1_ps(xc[(k * Stride + 1) * Cin]), w1, a0_##k); \
      a0_##k = _mm512_fmadd_ps(_mm512_set1_ps(xc[(k * Stride + 2) * Cin]), w2, a0_##k);
      HETERO_SDK_REPEAT12(HETERO_SDK_STEP)
#undef HETERO_SDK_STEP
    }
  }
  alignas(64) __m512 acc[kTile * 3];
#define HETERO_SDK_STORE(k) acc[3 * k] = a0_##k;
  HETERO_SDK_REPEAT12(HETERO_SDK_STORE)
#undef HETERO_SDK_STORE
  Finish<1>(p, acc, out, kTile, co);
}
#undef HETERO_SDK_REPEAT12

// The tile's indirection: ind[i * Tile + k], the kw * Cin floats pixel m0 + k reads at kernel row i (its kw
// input pixels are adjacent: one run), in place; a row outside the input reads zeros, and a run that
// crosses the left or right pad is copied with its zeros into scratch ([Tile][kh][kw * Cin]). Pixels past
// count read zeros. True when the tile lies in one output row clear of the left and right pads (its runs
// Stride * Cin floats apart, a row outside the input all zeros).
template <int Tile>
bool Indirection(const Problem& p, const float* zeros, float* scratch, int64_t m0, int64_t count, const float** ind) {
  const int64_t run = p.kw * p.cin;
  int64_t ow = m0 % p.ow, oh = m0 / p.ow % p.oh, b = m0 / p.ow / p.oh;  // pixel m0 + k's, k = 0 first
  const int64_t first = ow * p.sw - p.pl, last = (ow + Tile - 1) * p.sw - p.pl;
  if (count == Tile && ow + Tile <= p.ow && first >= 0 && last + p.kw <= p.w_in) {
    // a whole tile in one output row, clear of the left and right pads: its runs one step apart (the
    // branches and the prefetches per pixel below were 10-20 % of a 16-24-channel layer)
    const int64_t step = p.sw * p.cin;
    for (int64_t i = 0; i < p.kh; ++i) {
      const int64_t ih = oh * p.sh + i - p.pt;
      if (ih < 0 || ih >= p.h) {
        for (int64_t k = 0; k < Tile; ++k) ind[i * Tile + k] = zeros;
        continue;
      }
      const float* start = p.x + ((b * p.h + ih) * p.w_in + first) * p.cin;
      for (int64_t k = 0; k < Tile; ++k) ind[i * Tile + k] = start + k * step;
      // the runs of the pixels Tile columns on (as below): one span, the runs overlapping or adjacent
      const char* ahead = reinterpret_cast<const char*>(start + Tile * step);
      const int64_t bytes = ((Tile - 1) * step + run) * int64_t{sizeof(float)};
      for (int64_t f = 0; f < bytes + 64; f += 64) _mm_prefetch(ahead + f, _MM_HINT_T0);
    }
    return true;
  }
  for (int64_t k = 0; k < Tile; ++k) {
    if (k >= count) {
      for (int64_t i = 0; i < p.kh; ++i) ind[i * Tile + k] = zeros;
      continue;
    }
    if (k > 0 && ++ow == p.ow) {
      ow = 0;
      if (++oh == p.oh) oh = 0, ++b;
    }
    const int64_t iw0 = ow * p.sw - p.pl;
    const bool inside = iw0 >= 0 && iw0 + p.kw <= p.w_in;
    for (int64_t i = 0; i < p.kh; ++i) {
      const int64_t ih = oh * p.sh + i - p.pt;
      if (ih < 0 || ih >= p.h) {
        ind[i * Tile + k] = zeros;
        continue;
      }
      const float* row = p.x + (b * p.h + ih) * p.w_in * p.cin;
      if (inside) {
        ind[i * Tile + k] = row + iw0 * p.cin;
        // the run of the pixel Tile columns on, most often the next tile's: the input past L2 is read
        // sooner than the broadcasts find it (5-10 % at stride 2; a prefetch past the data does not
        // fault). Past the tile's first pixel only the part its left neighbour's run left out (3-4 %).
        const uintptr_t ahead = reinterpret_cast<uintptr_t>(row) + (iw0 + Tile * p.sw) * p.cin * sizeof(float);
        const int64_t bytes = run * int64_t{sizeof(float)}, step = p.sw * p.cin * int64_t{sizeof(float)};
        for (int64_t f = k == 0 ? 0 : std::max<int64_t>(0, bytes - step - 64); f < bytes + 64; f += 64)
          _mm_prefetch(reinterpret_cast<const char*>(ahead + f), _MM_HINT_T0);
        continue;
      }
      float* copy = scratch + (k * p.kh + i) * run;
      for (int64_t j = 0; j < p.kw; ++j) {
        const int64_t iw = iw0 + j;
        if (iw >= 0 && iw < p.w_in) std::copy_n(row + iw * p.cin, p.cin, copy + j * p.cin);
        else std::fill_n(copy + j * p.cin, p.cin, 0.0f);
      }
      ind[i * Tile + k] = copy;
    }
  }
  return false;
}

// One block of output channels for a tile of count pixels: a short last tile with fewer pixels' work. V == 3:
// the block and the first half of the next (o2 floats on), the tile's pixels 8 and 4 at a time.
template <int V>
inline void Block(const Problem& p, const float* const* ind, const float* wt, float* out, int64_t count, int64_t co,
                  int64_t o2 = 0) {
  if constexpr (V == 3) {
    const int64_t first = std::min<int64_t>(count, 8);
    if (first > 4) TileOf<8, 3>(p, ind, kTile, wt, out, first, co, o2);
    else TileOf<4, 3>(p, ind, kTile, wt, out, first, co, o2);
    if (count > 8) TileOf<4, 3>(p, ind + 8, kTile, wt, out + 8 * p.cout, count - 8, co, o2);
  } else {
    if (count > 8) TileOf<kTile, V>(p, ind, kTile, wt, out, count, co);
    else if (count > 4) TileOf<8, V>(p, ind, kTile, wt, out, count, co);
    else TileOf<4, V>(p, ind, kTile, wt, out, count, co);
  }
}

// The last 16 or fewer output channels of a tile in one row clear of the pads (Indirection true) as a
// RowTileOf where it has a form for the kernel's width, stride and input channels; false otherwise.
inline bool RowBlock(const Problem& p, const float* const* ind, const float* wt, float* out, int64_t co) {
  if (p.kw != 3) return false;
  if (p.sw == 1 && p.cin == 16) RowTileOf<16, 1>(p, ind, wt, out, co);
  else if (p.sw == 2 && p.cin == 16) RowTileOf<16, 2>(p, ind, wt, out, co);
  else if (p.sw == 1 && p.cin == 32) RowTileOf<32, 1>(p, ind, wt, out, co);
  else if (p.sw == 2 && p.cin == 32) RowTileOf<32, 2>(p, ind, wt, out, co);
  else return false;
  return true;
}

// Tiles [t0, t1) of kTile pixels, the output channels in groups whose filter blocks fit in L2 together: for
// each group every tile (its indirection made again per group). zeros: (kw + (kTile - 1) * stride_w) * Cin
// zeros (a RowTileOf reads a whole row there); scratch, ind: as Indirection's.
void Tiles(const Problem& p, const float* zeros, float* scratch, const float** ind, int64_t t0, int64_t t1) {
  constexpr int64_t kFilterBytes = int64_t{1} << 20;
  const int64_t per_block = p.kh * p.kw * p.cin * 2 * kLanes;
  const int64_t block_bytes = per_block * int64_t{sizeof(float)};
  const int64_t group = std::max<int64_t>(1, kFilterBytes / std::max<int64_t>(block_bytes, 1)) * 2 * kLanes;
  const int64_t pixels = p.n * p.oh * p.ow;
  for (int64_t c0 = 0; c0 < p.cout; c0 += group) {
    const int64_t c1 = std::min(p.cout, c0 + group);
    for (int64_t tile = t0; tile < t1; ++tile) {
      const int64_t m0 = tile * kTile, count = std::min<int64_t>(kTile, pixels - m0);
      const bool in_row = Indirection<kTile>(p, zeros, scratch, m0, count, ind);
      float* out = p.y + m0 * p.cout;
      for (int64_t co = c0; co < c1; co += 2 * kLanes) {
        const float* wt = p.blocked + co / (2 * kLanes) * per_block;
        // the last 33-48 channels: 8 pixels by 48 channels (this block and the next's first 16) where 12 by
        // 16 did the last 16 (48 channels at a time throughout, at 96 or 192 outputs, measured 0-5 % slower)
        if (c1 - co > 2 * kLanes && c1 - co <= 3 * kLanes) {
          Block<3>(p, ind, wt, out, count, co, per_block);
          break;
        }
        if (c1 - co > kLanes) Block<2>(p, ind, wt, out, count, co);
        else if (!in_row || !RowBlock(p, ind, wt, out, co)) Block<1>(p, ind, wt, out, count, co);  // 16 or fewer left
      }
    }
  }
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
  if (!agree || yd[0] != p.n || sh < 1 || sw < 1)
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
  if (p.n == 0 || p.oh == 0 || p.ow == 0 || p.cout == 0) return ffi::Error::Success();
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
  std::vector<float> zeros((p.kw + (kTile - 1) * p.sw) * p.cin, 0.0f);
  std::atomic<bool> out_of_memory{false};
  auto body = [&](int64_t t0, int64_t t1) {
    std::vector<const float*> ind;
    std::vector<float> scratch;
    try {  // in a pool thread: an exception must not leave it
      ind.resize(p.kh * kTile);
      scratch.resize(kTile * p.kh * p.kw * p.cin);
    } catch (const std::bad_alloc&) {
      out_of_memory.store(true);
      return;
    }
    Tiles(p, zeros.data(), scratch.data(), ind.data(), t0, t1);
  };
  const int64_t tiles = (p.n * p.oh * p.ow + kTile - 1) / kTile;
  const int64_t tile_work = kTile * p.cout * p.kh * p.kw * p.cin;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(tile_work, 1));
  ParallelFor(pool, tiles, grain, body);
  if (out_of_memory.load()) return ffi::Error::Internal("conv2d kernel: out of memory for its scratch runs");
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
