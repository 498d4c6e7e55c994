// An f32 matrix product by a constant matrix packed once at compile time, on XLA:CPU through XLA's FFI.
//
// Operands: a f32 [M, K]; b f32 [ceil(N / 32)][K][32], B [K, N] cut in panels of 32 columns, each panel's
// rows one contiguous run, zeros past N (prepared once when the model compiles); bias f32 [N] (the
// HeteroSdkGemmF32Bias handler only).
// Result: y f32 [M, N], y[m, n] = bias[n] + sum_k a[m, k] * B[k, n].
//
// Register tiling: a tile of up to 12 rows by one panel (two 16-lane vectors) is held in zmm accumulators;
// for each k the panel's two vectors of row k are loaded and each row's a[m, k] is broadcast into them.
// Panel by panel, K is cut in blocks of kDepth (a panel's block, 16 KiB, stays in L1 while every row tile
// of the block reads it: B, usually the larger operand, comes from memory once, in order); A is packed once
// per call into [row tile][K][rows], so a tile reads one stream. The bias starts the first block's
// accumulators, later blocks add to the rows stored. Outputs larger than L2 go by blocks of panels instead
// (PanelsByBlock). Panels are split on XLA's intra-op thread pool.
//
// A third handler, HeteroSdkGemmF32Fused (operands a, b, bias; attribute activation), reads A in place for any
// number of rows and applies an activation after the bias: the in-place path below. A fourth,
// HeteroSdkGemmF32FusedConcat (operands b, bias, then 1 to 8 operands of A; attributes activation, starts, widths),
// is the same path with A the concatenation of its operands' column ranges, each read where it lies (a channel
// Concat feeding a 1x1 convolution, never materialised).
#if !defined(__AVX512F__)
#error "this kernel needs AVX-512: the XLA device falls back to its pure-XLA lowering"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

#include "avx512_math.h"
#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using hetero_sdk_native::ParallelFor;

namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kPanel = 2 * kLanes;  // columns of a packed panel
constexpr int64_t kDepth = 128;         // rows of B per block: 128 x 32 floats, 16 KiB
constexpr int64_t kMaxDepth = int64_t{1} << 24;  // K: a tile's row offsets (in floats) fit the gather's int32
constexpr int kMaxRows = 12;            // rows of a register tile (24 accumulators)
constexpr int64_t kRowBlock = 480;
constexpr int64_t kOutputBytes = 2 << 20;  // outputs that stay in L2: panel by panel (Panels), else PanelsByBlock
constexpr int64_t kBlockBytes = 1 << 20;   // B's panels per block of PanelsByBlock: about 1 MiB, in L2
constexpr int64_t kAhead = 16 * kPanel;  // floats of B prefetched ahead: 16 rows of a panel, 2 KiB      // rows of A whose block (480 x 256 floats) stays in L2

struct Problem {
  const float* packed_a;  // [tiles][K][rows of the tile]
  const float* b;         // [panels][K][32]
  const float* bias;      // [N] or null
  float* y;
  int64_t m, k, n, rows;  // rows: of a full tile
};

inline __mmask16 LaneMask(int64_t remaining) {
  if (remaining <= 0) return 0;
  return remaining >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1);
}

#define HETERO_SDK_REPEAT12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

// Rows [m0, m0 + R) by panel `panel`, B's rows [k0, k0 + depth): the accumulators start from the bias (or
// zero) when `first`, else from y; a: the tile's packed A at row k0 ([depth][R]). The accumulators are
// named variables: held in an array, GCC spills them to the stack on each step.
template <int R>
void Tile(const Problem& p, const float* a, const float* bp, int64_t m0, int64_t panel, int64_t depth,
          bool first, bool fetch) {
  const int64_t n0 = panel * kPanel;
  const __mmask16 m_lo = LaneMask(p.n - n0), m_hi = LaneMask(p.n - n0 - kLanes);
  float* out = p.y + m0 * p.n + n0;
  __m512 init_lo = _mm512_setzero_ps(), init_hi = _mm512_setzero_ps();
  if (first && p.bias != nullptr) {
    init_lo = _mm512_maskz_loadu_ps(m_lo, p.bias + n0);
    init_hi = _mm512_maskz_loadu_ps(m_hi, p.bias + n0 + kLanes);
  }
#define HETERO_SDK_LOAD(r)                                                                   \
  __m512 lo_##r = init_lo, hi_##r = init_hi;                                                 \
  if constexpr (R > r) {                                                                     \
    if (!first) {                                                                            \
      lo_##r = _mm512_maskz_loadu_ps(m_lo, out + r * p.n);                                   \
      hi_##r = _mm512_maskz_loadu_ps(m_hi, out + r * p.n + kLanes);                          \
    }                                                                                        \
  }
  HETERO_SDK_REPEAT12(HETERO_SDK_LOAD)
#undef HETERO_SDK_LOAD
  for (int64_t k = 0; k < depth; ++k, a += R, bp += kPanel) {
    if (fetch) {  // the first tile of a block brings B's next rows from memory ahead of their use
      _mm_prefetch(reinterpret_cast<const char*>(bp + kAhead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(bp + kAhead + kLanes), _MM_HINT_T0);
    }
    const __m512 b_lo = _mm512_loadu_ps(bp), b_hi = _mm512_loadu_ps(bp + kLanes);
#define HETERO_SDK_STEP(r)                               \
    if constexpr (R > r) {                               \
      const __m512 av = _mm512_set1_ps(a[r]);            \
      lo_##r = _mm512_fmadd_ps(av, b_lo, lo_##r);        \
      hi_##r = _mm512_fmadd_ps(av, b_hi, hi_##r);        \
    }
    HETERO_SDK_REPEAT12(HETERO_SDK_STEP)
#undef HETERO_SDK_STEP
  }
#define HETERO_SDK_STORE(r)                                          \
  if constexpr (R > r) {                                             \
    _mm512_mask_storeu_ps(out + r * p.n, m_lo, lo_##r);              \
    _mm512_mask_storeu_ps(out + r * p.n + kLanes, m_hi, hi_##r);     \
  }
  HETERO_SDK_REPEAT12(HETERO_SDK_STORE)
#undef HETERO_SDK_STORE
}
#undef HETERO_SDK_REPEAT12

// Tile<R> for a tile of `rows` rows, rows <= R.
template <int R>
void TileOfSize(const Problem& p, const float* a, const float* bp, int64_t m0, int64_t rows, int64_t panel,
                int64_t depth, bool first, bool fetch) {
  if constexpr (R > 1) {
    if (rows < R) return TileOfSize<R - 1>(p, a, bp, m0, rows, panel, depth, first, fetch);
  }
  Tile<R>(p, a, bp, m0, panel, depth, first, fetch);
}

// Panels [j0, j1) of every row: for each block of rows and of K, every panel, and in it every row tile.
void Panels(const Problem& p, int64_t j0, int64_t j1) {
  for (int64_t r0 = 0; r0 < p.m; r0 += kRowBlock) {
    const int64_t r1 = std::min(p.m, r0 + kRowBlock);
    for (int64_t j = j0; j < j1; ++j) {
      for (int64_t k0 = 0; k0 < p.k; k0 += kDepth) {  // B read in order: each panel is one run
        const int64_t depth = std::min(kDepth, p.k - k0);
        const float* bp = p.b + (j * p.k + k0) * kPanel;
        for (int64_t m0 = r0; m0 < r1; m0 += p.rows) {
          const int64_t rows = std::min(p.rows, p.m - m0);
          const float* a = p.packed_a + m0 * p.k + k0 * rows;  // tiles before m0 are full
          TileOfSize<kMaxRows>(p, a, bp, m0, rows, j, depth, k0 == 0, m0 == r0);
        }
      }
    }
  }
}

// Panels [j0, j1) of every row when the outputs outgrow L2 (kOutputBytes), in blocks of panels whose B fits
// kBlockBytes: for each block of rows and
// of panels, every row tile against every panel of the block, over the whole of K. The first tile streams
// the block's panels from memory in order (each panel one run, prefetched ahead), the others read them from
// L2; a tile writes the block's consecutive columns of each of its rows (the outputs of a whole block written
// column strip by column strip missed the cache on every row once they outgrew L2).
void PanelsByBlock(const Problem& p, int64_t j0, int64_t j1) {
  const int64_t block = std::max<int64_t>(1, kBlockBytes / (p.k * kPanel * int64_t{sizeof(float)}));
  for (int64_t r0 = 0; r0 < p.m; r0 += kRowBlock) {
    const int64_t r1 = std::min(p.m, r0 + kRowBlock);
    for (int64_t jb = j0; jb < j1; jb += block) {
      const int64_t je = std::min(j1, jb + block);
      for (int64_t m0 = r0; m0 < r1; m0 += p.rows) {
        const int64_t rows = std::min(p.rows, p.m - m0);
        const float* a = p.packed_a + m0 * p.k;  // tiles before m0 are full
        for (int64_t j = jb; j < je; ++j)
          TileOfSize<kMaxRows>(p, a, p.b + j * p.k * kPanel, m0, rows, j, p.k, true, m0 == r0);
      }
    }
  }
}

// Rows [0, rows) of A (rows <= 16, `depth` <= kMaxDepth floats apart) as a tile [depth][rows]: one gather a
// column (the scalar transposition took a quarter of the time of 1024 rows by 256x256).
void PackTile(const float* src, int64_t depth, int64_t rows, float* dst) {
  const __m512i index = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32(static_cast<int32_t>(depth)));
  const __mmask16 mask = LaneMask(rows);
  for (int64_t k = 0; k < depth; ++k, dst += rows)
    _mm512_mask_storeu_ps(dst, mask, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, index, src + k, 4));
}

ffi::Error Compute(ffi::ThreadPool& pool, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b, const float* bias,
                   int64_t bias_size, ffi::ResultBuffer<ffi::F32> y) {
  const auto ad = a.dimensions(), bd = b.dimensions(), yd = y->dimensions();
  if (ad.size() != 2 || bd.size() != 3 || yd.size() != 2)
    return ffi::Error::InvalidArgument("gemm kernel: a and y must be 2-D, b 3-D (packed)");
  Problem p;
  p.m = ad[0], p.k = ad[1], p.n = yd[1];
  const int64_t panels = (p.n + kPanel - 1) / kPanel;
  if (p.k > kMaxDepth) return ffi::Error::InvalidArgument("gemm kernel: K is over 2^24");
  if (yd[0] != p.m || bd[0] != panels || bd[1] != p.k || bd[2] != kPanel || (bias && bias_size != p.n))
    return ffi::Error::InvalidArgument("gemm kernel: operand shapes do not agree");
  p.b = b.typed_data();
  p.bias = bias;
  p.y = y->typed_data();
  if (p.m == 0 || p.n == 0) return ffi::Error::Success();
  if (p.k == 0) {
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) p.y[i * p.n + j] = bias ? bias[j] : 0.0f;
    return ffi::Error::Success();
  }
  // Tiles of even size: M = 20 makes two tiles of 10 rather than 12 and 8.
  const int64_t tiles = (p.m + kMaxRows - 1) / kMaxRows;
  p.rows = (p.m + tiles - 1) / tiles;
  std::vector<float> packed(p.m * p.k);
  for (int64_t m0 = 0; m0 < p.m; m0 += p.rows)
    PackTile(a.typed_data() + m0 * p.k, p.k, std::min(p.rows, p.m - m0), packed.data() + m0 * p.k);
  p.packed_a = packed.data();
  // Pieces of panels worth about 2^20 multiply-adds each.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(p.m * p.k * kPanel, 1));
  if (p.m * p.n * int64_t{sizeof(float)} <= kOutputBytes)
    ParallelFor(pool, panels, grain, [&](int64_t j0, int64_t j1) { Panels(p, j0, j1); });
  else
    ParallelFor(pool, panels, grain, [&](int64_t j0, int64_t j1) { PanelsByBlock(p, j0, j1); });
  return ffi::Error::Success();
}

ffi::Error GemmImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                    ffi::ResultBuffer<ffi::F32> y) {
  try {
    return Compute(pool, a, b, nullptr, 0, y);
  } catch (const std::bad_alloc&) {
    return ffi::Error::Internal("gemm kernel: out of memory");
  }
}

ffi::Error GemmBiasImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                        ffi::Buffer<ffi::F32> bias, ffi::ResultBuffer<ffi::F32> y) {
  if (bias.dimensions().size() != 1) return ffi::Error::InvalidArgument("gemm kernel: bias must be 1-D");
  try {
    return Compute(pool, a, b, bias.typed_data(), bias.dimensions()[0], y);
  } catch (const std::bad_alloc&) {
    return ffi::Error::Internal("gemm kernel: out of memory");
  }
}

// ---- The in-place path (HeteroSdkGemmF32Fused): A read where it lies, a bias and an activation fused. ----
//
// y[m, n] = act(bias[n] + sum_k a[m, k] * B[k, n]), act 0 none, 1 relu, 2 silu (v * sigmoid(v)), 3 hardswish
// (v * min(max(v + 3, 0), 6) / 6). A register tile of R rows by V vectors of 16 columns (12 x 2, 8 x 3 or
// 6 x 4: 24 accumulators; the columns of N <= 64 in one tile, so that A is read once) sums the whole of K in
// registers, broadcasting each a[m, k] from A's row m as it lies (XNNPACK's GEMM micro-kernel: no packing of A,
// which cost the packed path a gather per column and per call), then applies the activation to the registers (which
// started from the bias) before the one store. Rows go by blocks whose A (about kInPlaceBlockBytes) stays in L2 while
// every group of columns passes over it, B's columns (K x 16 V) staying in L1 across the block's tiles where they
// fit (kInPlaceL1Bytes); deeper ones stream from L2 on every tile, each tile prefetching their rows kFetchRows
// ahead (YOLOX's 169 x 768 by 768 x 384 0.95 of the time without from warm caches, 0.88 from cold ones). Blocks of
// rows are split on XLA's intra-op thread pool.

enum Activation : int64_t { kNone = 0, kRelu = 1, kSilu = 2, kHardSwish = 3 };

constexpr int64_t kInPlaceBlockBytes = 96 << 10;  // A's rows per block: about 96 KiB
constexpr int64_t kInPlaceL1Bytes = 48 << 10;     // B's columns of a tile beyond L1 (48 KiB) are prefetched
constexpr int64_t kFetchRows = 16;                // rows of B prefetched ahead (16 and 32 alike, 64 slower)

constexpr int kMaxOperands = 8;  // A's operands in one call (HeteroSdkGemmF32FusedConcat)

// One operand of A: `k` columns of a row-major [M, lda] buffer from `a` (a column offset already applied),
// B's rows from the operands before it.
struct Operand {
  const float* a;
  int64_t lda, k;
};

struct InPlace {
  Operand ops[kMaxOperands];  // A [M, K] as its operands' columns in order: one for HeteroSdkGemmF32Fused
  int operands;
  const float* b;     // [panels][K][32]
  const float* bias;  // [N]
  float* y;           // [M, N]
  int64_t m, k, n;
};

template <int64_t Act>
inline __m512 Activate(__m512 v) {
  if constexpr (Act == kRelu) return _mm512_max_ps(v, _mm512_setzero_ps());
  if constexpr (Act == kSilu) return hetero_sdk_native::Silu(v);
  if constexpr (Act == kHardSwish) return hetero_sdk_native::HardSwish(v);
  return v;
}

// The rows of a tile of V vectors: 24 accumulators.
constexpr int RowsOf(int v) { return v == 1 ? 12 : 24 / v; }

#define HETERO_SDK_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

// Rows [m0, m0 + R) by the V vectors of columns from n0 (a multiple of 16), the whole of K, the bias and the
// activation applied before the store.
template <int R, int V, int64_t Act, bool Fetch>
void InPlaceTile(const InPlace& p, int64_t m0, int64_t n0) {
  const float* bp[4];
  __mmask16 mask[4];
  __m512 bias[4];
  for (int v = 0; v < 4; ++v) {
    const int64_t c = std::min(n0 + v * kLanes, (p.n + kLanes - 1) / kLanes * kLanes - kLanes);
    bp[v] = p.b + (c / kPanel) * p.k * kPanel + c % kPanel;  // vector v's column block, packed in panel c / 32
    mask[v] = LaneMask(p.n - n0 - v * kLanes);
    bias[v] = _mm512_maskz_loadu_ps(mask[v], p.bias + n0 + v * kLanes);
  }
#define HETERO_SDK_INIT(r) __m512 c0_##r = bias[0], c1_##r = bias[1], c2_##r = bias[2], c3_##r = bias[3];
  HETERO_SDK_ROWS(HETERO_SDK_INIT)
#undef HETERO_SDK_INIT
  int64_t base = 0;  // B's row of the operand's first column
  for (int o = 0; o < p.operands; base += p.ops[o].k, ++o) {
    const int64_t lda = p.ops[o].lda, depth = p.ops[o].k;
    const float* a = p.ops[o].a + m0 * lda;
    for (int64_t k = 0; k < depth; ++k) {
      const int64_t off = (base + k) * kPanel;
      if constexpr (Fetch) {  // B's columns come from L2: ask for their rows kFetchRows ahead
        for (int v = 0; v < V; ++v)
          _mm_prefetch(reinterpret_cast<const char*>(bp[v] + off + kFetchRows * kPanel), _MM_HINT_T0);
      }
      const __m512 b0 = _mm512_loadu_ps(bp[0] + off);
      const __m512 b1 = V > 1 ? _mm512_loadu_ps(bp[1] + off) : b0;
      const __m512 b2 = V > 2 ? _mm512_loadu_ps(bp[2] + off) : b0;
      const __m512 b3 = V > 3 ? _mm512_loadu_ps(bp[3] + off) : b0;
#define HETERO_SDK_STEP(r)                                          \
      if constexpr (R > r) {                                          \
        const __m512 av = _mm512_set1_ps(a[r * lda + k]);             \
        c0_##r = _mm512_fmadd_ps(av, b0, c0_##r);                     \
        if constexpr (V > 1) c1_##r = _mm512_fmadd_ps(av, b1, c1_##r); \
        if constexpr (V > 2) c2_##r = _mm512_fmadd_ps(av, b2, c2_##r); \
        if constexpr (V > 3) c3_##r = _mm512_fmadd_ps(av, b3, c3_##r); \
      }
      HETERO_SDK_ROWS(HETERO_SDK_STEP)
#undef HETERO_SDK_STEP
    }
  }
  float* out = p.y + m0 * p.n + n0;
#define HETERO_SDK_STORE(r)                                                                                    \
  if constexpr (R > r) {                                                                                       \
    _mm512_mask_storeu_ps(out + r * p.n, mask[0], Activate<Act>(c0_##r));             \
    if constexpr (V > 1)                                                                                       \
      _mm512_mask_storeu_ps(out + r * p.n + kLanes, mask[1], Activate<Act>(c1_##r));   \
    if constexpr (V > 2)                                                                                       \
      _mm512_mask_storeu_ps(out + r * p.n + 2 * kLanes, mask[2], Activate<Act>(c2_##r)); \
    if constexpr (V > 3)                                                                                       \
      _mm512_mask_storeu_ps(out + r * p.n + 3 * kLanes, mask[3], Activate<Act>(c3_##r)); \
  }
  HETERO_SDK_ROWS(HETERO_SDK_STORE)
#undef HETERO_SDK_STORE
}
#undef HETERO_SDK_ROWS

template <int R, int V, int64_t Act, bool Fetch>
void InPlaceTileOfSize(const InPlace& p, int64_t m0, int64_t rows, int64_t n0) {
  if constexpr (R > 1) {
    if (rows < R) return InPlaceTileOfSize<R - 1, V, Act, Fetch>(p, m0, rows, n0);
  }
  InPlaceTile<R, V, Act, Fetch>(p, m0, n0);
}

// Rows [r0, r1) by the V vectors of columns from n0. Where those columns of B (K x 16 V floats) outgrow
// kInPlaceL1Bytes, each tile streams them from L2 and prefetches them ahead.
template <int V, int64_t Act>
void InPlaceColumns(const InPlace& p, int64_t r0, int64_t r1, int64_t n0) {
  constexpr int R = RowsOf(V);
  if (p.k * V * kLanes * int64_t{sizeof(float)} > kInPlaceL1Bytes) {
    for (int64_t m0 = r0; m0 < r1; m0 += R)
      InPlaceTileOfSize<R, V, Act, true>(p, m0, std::min<int64_t>(R, r1 - m0), n0);
  } else {
    for (int64_t m0 = r0; m0 < r1; m0 += R)
      InPlaceTileOfSize<R, V, Act, false>(p, m0, std::min<int64_t>(R, r1 - m0), n0);
  }
}

// Rows [r0, r1): the columns in groups of three vectors where they divide, else two, the last group of up to
// four (N <= 64: one group).
template <int64_t Act>
void InPlaceRows(const InPlace& p, int64_t r0, int64_t r1) {
  const int64_t vectors = (p.n + kLanes - 1) / kLanes;
  for (int64_t v0 = 0; v0 < vectors;) {
    const int64_t left = vectors - v0;
    const int64_t group = left <= 4 ? left : (left % 3 == 0 ? 3 : 2);
    const int64_t n0 = v0 * kLanes;
    switch (group) {
      case 1: InPlaceColumns<1, Act>(p, r0, r1, n0); break;
      case 2: InPlaceColumns<2, Act>(p, r0, r1, n0); break;
      case 3: InPlaceColumns<3, Act>(p, r0, r1, n0); break;
      default: InPlaceColumns<4, Act>(p, r0, r1, n0); break;
    }
    v0 += group;
  }
}

// Rows of A per block: whole tiles whose rows fill about kInPlaceBlockBytes, at least one tile.
int64_t InPlaceBlock(const InPlace& p) {
  const int64_t tiles = std::max<int64_t>(1, kInPlaceBlockBytes / (24 * std::max<int64_t>(p.k, 1) * 4));
  return tiles * 24;  // a multiple of every tile's rows
}

// Rows [r0, r1) (whole blocks, InPlaceBlock) with the activation's code.
void InPlaceRange(const InPlace& p, int64_t activation, int64_t r0, int64_t r1) {
  const int64_t block = InPlaceBlock(p);
  auto run = [&](auto act) {
    constexpr int64_t Act = decltype(act)::value;
    for (int64_t m0 = r0; m0 < r1; m0 += block) InPlaceRows<Act>(p, m0, std::min(r1, m0 + block));
  };
  switch (activation) {
    case kRelu: run(std::integral_constant<int64_t, kRelu>{}); break;
    case kSilu: run(std::integral_constant<int64_t, kSilu>{}); break;
    case kHardSwish: run(std::integral_constant<int64_t, kHardSwish>{}); break;
    default: run(std::integral_constant<int64_t, kNone>{}); break;
  }
}

ffi::Error RunInPlace(ffi::ThreadPool& pool, InPlace& p, ffi::Buffer<ffi::F32> b, ffi::Buffer<ffi::F32> bias,
                      int64_t activation, ffi::ResultBuffer<ffi::F32> y);

ffi::Error ComputeInPlace(ffi::ThreadPool& pool, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                          ffi::Buffer<ffi::F32> bias, int64_t activation, ffi::ResultBuffer<ffi::F32> y) {
  const auto ad = a.dimensions();
  if (ad.size() != 2) return ffi::Error::InvalidArgument("gemm kernel: a must be 2-D");
  InPlace p{};
  p.ops[0] = Operand{a.typed_data(), ad[1], ad[1]};
  p.operands = 1;
  p.m = ad[0], p.k = ad[1];
  return RunInPlace(pool, p, b, bias, activation, y);
}

// Checks B, the bias, y and the activation against p's A ([p.m, p.k] over its operands), then runs the in-place
// path.
ffi::Error RunInPlace(ffi::ThreadPool& pool, InPlace& p, ffi::Buffer<ffi::F32> b, ffi::Buffer<ffi::F32> bias,
                      int64_t activation, ffi::ResultBuffer<ffi::F32> y) {
  const auto bd = b.dimensions(), yd = y->dimensions();
  if (bd.size() != 3 || yd.size() != 2 || bias.dimensions().size() != 1)
    return ffi::Error::InvalidArgument("gemm kernel: y must be 2-D, b 3-D (packed), bias 1-D");
  p.b = b.typed_data(), p.bias = bias.typed_data(), p.y = y->typed_data(), p.n = yd[1];
  const int64_t panels = (p.n + kPanel - 1) / kPanel;
  if (yd[0] != p.m || bd[0] != panels || bd[1] != p.k || bd[2] != kPanel || bias.dimensions()[0] != p.n)
    return ffi::Error::InvalidArgument("gemm kernel: operand shapes do not agree");
  if (activation < kNone || activation > kHardSwish)
    return ffi::Error::InvalidArgument("gemm kernel: activation must be 0 (none), 1 (relu), 2 (silu) or 3 (hardswish)");
  if (p.m == 0 || p.n == 0) return ffi::Error::Success();
  const int64_t block = InPlaceBlock(p), blocks = (p.m + block - 1) / block;
  ParallelFor(pool, blocks, 1, [&](int64_t b0, int64_t b1) {
    InPlaceRange(p, activation, b0 * block, std::min(p.m, b1 * block));
  });
  return ffi::Error::Success();
}

// A given as operands ([M, L_i] f32 buffers, the remaining arguments), of which it reads columns
// [starts[i], starts[i] + widths[i]) in order: y = act(bias + concat(those columns) @ B).
ffi::Error ComputeConcat(ffi::ThreadPool& pool, ffi::Buffer<ffi::F32> b, ffi::Buffer<ffi::F32> bias,
                         ffi::RemainingArgs operands, ffi::ResultBuffer<ffi::F32> y, int64_t activation,
                         ffi::Span<const int64_t> starts, ffi::Span<const int64_t> widths) {
  const size_t count = operands.size();
  if (count < 1 || count > static_cast<size_t>(kMaxOperands) || starts.size() != count || widths.size() != count)
    return ffi::Error::InvalidArgument("gemm kernel: 1 to 8 operands of A, one start and one width each");
  if (y->dimensions().size() != 2) return ffi::Error::InvalidArgument("gemm kernel: y must be 2-D");
  InPlace p{};
  p.m = y->dimensions()[0], p.k = 0, p.operands = static_cast<int>(count);
  for (size_t i = 0; i < count; ++i) {
    auto operand = operands.get<ffi::Buffer<ffi::F32>>(i);
    if (!operand.has_value()) return ffi::Error::InvalidArgument("gemm kernel: every operand of A must be f32");
    const auto d = operand->dimensions();
    if (d.size() != 2 || d[0] != p.m || starts[i] < 0 || widths[i] < 0 || starts[i] + widths[i] > d[1])
      return ffi::Error::InvalidArgument("gemm kernel: an operand of A is not [M, L] with its columns inside L");
    p.ops[i] = Operand{operand->typed_data() + starts[i], d[1], widths[i]};
    p.k += widths[i];
  }
  if (p.k > kMaxDepth) return ffi::Error::InvalidArgument("gemm kernel: K is over 2^24");
  return RunInPlace(pool, p, b, bias, activation, y);
}

ffi::Error GemmFusedImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                         ffi::Buffer<ffi::F32> bias, ffi::ResultBuffer<ffi::F32> y, int64_t activation) {
  return ComputeInPlace(pool, a, b, bias, activation, y);
}

ffi::Error GemmFusedConcatImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> b, ffi::Buffer<ffi::F32> bias,
                               ffi::RemainingArgs operands, ffi::ResultBuffer<ffi::F32> y, int64_t activation,
                               ffi::Span<const int64_t> starts, ffi::Span<const int64_t> widths) {
  return ComputeConcat(pool, b, bias, operands, y, activation, starts, widths);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkGemmF32, GemmImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkGemmF32Bias, GemmBiasImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkGemmF32Fused, GemmFusedImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("activation"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkGemmF32FusedConcat, GemmFusedConcatImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .RemainingArgs()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("activation")
                                  .Attr<ffi::Span<const int64_t>>("starts")
                                  .Attr<ffi::Span<const int64_t>>("widths"));
