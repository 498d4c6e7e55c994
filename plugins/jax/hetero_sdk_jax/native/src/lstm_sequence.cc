// The recurrent part of LSTMSequence on XLA:CPU through XLA's FFI: every time step of every direction in
// one call, the input projection X W^T + B already done by XLA.
//
// Operands:
//   projected f32 [seq, dirs, batch, 4H]  X W^T + B of every step, gates stacked f, i, c, o
//   h0, c0    f32 [batch, dirs, H]        the initial states
//   lengths   s32 [batch]                 each batch entry's sequence length
//   packed    f32 [dirs, tiles, H, 128]   R^T in column tiles of 128 gates: packed[d, g / 128, k, g % 128]
//                                          = R[d, g, k], zero past 4H (made once at compile time)
// Attributes: direction (0 forward, 1 reverse, 2 bidirectional: direction 1 reversed), clip (> 0: gate
// pre-activations clipped to [-clip, clip]).
// Results: y f32 [batch, dirs, seq, H], ho, co f32 [batch, dirs, H].
//
// Per step: gates = projected[t] + h R^T, f, i, o = sigmoid, c~ = tanh, c = f c + i c~, h = o tanh(c);
// a step at or past a batch entry's length holds its state and writes zeros to y (a reversed direction
// runs from the last step down, so its first steps are the held ones). The product reads each tile of
// R^T (128 gates by H, contiguous) once a step for up to 3 batch rows, h[k] broadcast against 8 vectors
// of the tile's row k: no horizontal sums, a plain stream through R. Every other step walks the tiles
// backwards, starting on those still in L2. With more than one thread in XLA's pool, the two directions
// of a bidirectional layer run at once.
#if !defined(__AVX512F__)
#error "this kernel needs AVX-512F: the XLA device falls back to its pure-XLA lowering"
#endif

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "avx512_math.h"
#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using hetero_sdk_native::Exp;
using hetero_sdk_native::ParallelFor;
using hetero_sdk_native::Sigmoid;

namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kTile = 128;  // gates per column tile of R^T: 8 vectors
constexpr int64_t kVectors = kTile / kLanes;
constexpr int64_t kRows = 3;  // batch rows sharing each load of R^T: 24 accumulators

// tanh: Cephes' tanhf polynomial below |x| = 0.625, else 1 - 2 / (e^(2|x|) + 1) with x's sign.
inline __m512 Tanh(__m512 x) {
  const __m512 sign = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)));
  const __m512 a = _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_set1_epi32(INT32_MIN), _mm512_castps_si512(x)));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 large = _mm512_sub_ps(
      one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(Exp(_mm512_add_ps(a, a)), one)));
  const __m512 z = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(-5.70498872745e-3f);
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(2.06390887954e-2f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-5.37397155531e-2f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.33314422036e-1f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-3.33332819422e-1f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(p, z), x, x);
  const __mmask16 is_small = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.625f), _CMP_LT_OQ);
  return _mm512_mask_blend_ps(is_small, _mm512_or_ps(large, sign), small);
}

// out[b][g] = sum_k h[b][k] * R^T[k][g] for rows b of [b0, b0 + Rows), one tile of 128 gates.
template <int Rows>
inline void TileProduct(const float* tile, const float* h, int64_t hidden, float* out, int64_t out_stride) {
  __m512 acc[Rows][kVectors];
  for (int b = 0; b < Rows; ++b)
    for (int v = 0; v < kVectors; ++v) acc[b][v] = _mm512_setzero_ps();
  for (int64_t k = 0; k < hidden; ++k) {
    const float* row = tile + k * kTile;
    __m512 w[kVectors];
    for (int v = 0; v < kVectors; ++v) w[v] = _mm512_loadu_ps(row + v * kLanes);
    for (int b = 0; b < Rows; ++b) {
      const __m512 hk = _mm512_set1_ps(h[b * hidden + k]);
      for (int v = 0; v < kVectors; ++v) acc[b][v] = _mm512_fmadd_ps(hk, w[v], acc[b][v]);
    }
  }
  for (int b = 0; b < Rows; ++b)
    for (int v = 0; v < kVectors; ++v) _mm512_storeu_ps(out + b * out_stride + v * kLanes, acc[b][v]);
}

struct Problem {
  const float* projected;
  const float* h0;
  const float* c0;
  const int32_t* lengths;
  const float* packed;
  float* y;
  float* ho;
  float* co;
  int64_t seq, dirs, batch, hidden, tiles;
  float clip;
};

inline __m512 Clipped(__m512 x, float clip) {
  if (clip <= 0.0f) return x;
  return _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-clip)), _mm512_set1_ps(clip));
}

// One direction, every step. h, c: [batch, H] state; gates: [batch, tiles * 128] scratch.
void Direction(const Problem& pr, int64_t d, bool reversed, float* h, float* c, float* gates) {
  const int64_t hidden = pr.hidden, width = pr.tiles * kTile, four = 4 * hidden;
  const float* packed = pr.packed + d * pr.tiles * hidden * kTile;
  for (int64_t b = 0; b < pr.batch; ++b) {
    std::memcpy(h + b * hidden, pr.h0 + (b * pr.dirs + d) * hidden, hidden * sizeof(float));
    std::memcpy(c + b * hidden, pr.c0 + (b * pr.dirs + d) * hidden, hidden * sizeof(float));
  }
  for (int64_t s = 0; s < pr.seq; ++s) {
    const int64_t t = reversed ? pr.seq - 1 - s : s;
    for (int64_t n = 0; n < pr.tiles; ++n) {
      // Every other step walks the tiles backwards: it starts on those the last step read most
      // recently, still in L2 where all of R does not fit (H = 512: 4 MB a direction; measured 8.3 ->
      // 6.0 ms on ddddocr's CRNN layer, one thread).
      const int64_t tile = s % 2 ? pr.tiles - 1 - n : n;
      const float* r = packed + tile * hidden * kTile;
      int64_t b = 0;
      for (; b + kRows <= pr.batch; b += kRows)
        TileProduct<kRows>(r, h + b * hidden, hidden, gates + b * width + tile * kTile, width);
      if (pr.batch - b == 2) TileProduct<2>(r, h + b * hidden, hidden, gates + b * width + tile * kTile, width);
      else if (pr.batch - b == 1) TileProduct<1>(r, h + b * hidden, hidden, gates + b * width + tile * kTile, width);
    }
    for (int64_t b = 0; b < pr.batch; ++b) {
      float* yt = pr.y + ((b * pr.dirs + d) * pr.seq + t) * hidden;
      if (t >= pr.lengths[b]) {  // past this entry's length: the state holds, y is zero
        std::memset(yt, 0, hidden * sizeof(float));
        continue;
      }
      const float* p = pr.projected + ((t * pr.dirs + d) * pr.batch + b) * four;
      const float* g = gates + b * width;
      float* hb = h + b * hidden;
      float* cb = c + b * hidden;
      for (int64_t j = 0; j < hidden; j += kLanes) {
        const __mmask16 m = hidden - j >= kLanes ? static_cast<__mmask16>(0xFFFF)
                                                 : static_cast<__mmask16>((1u << (hidden - j)) - 1);
        auto gate = [&](int64_t q) {
          const int64_t at = q * hidden + j;
          return Clipped(_mm512_add_ps(_mm512_maskz_loadu_ps(m, p + at), _mm512_maskz_loadu_ps(m, g + at)), pr.clip);
        };
        const __m512 f = Sigmoid(gate(0)), i = Sigmoid(gate(1)), cand = Tanh(gate(2)), o = Sigmoid(gate(3));
        const __m512 cn = _mm512_fmadd_ps(f, _mm512_maskz_loadu_ps(m, cb + j), _mm512_mul_ps(i, cand));
        const __m512 hn = _mm512_mul_ps(o, Tanh(cn));
        _mm512_mask_storeu_ps(cb + j, m, cn);
        _mm512_mask_storeu_ps(hb + j, m, hn);
        _mm512_mask_storeu_ps(yt + j, m, hn);
      }
    }
  }
  for (int64_t b = 0; b < pr.batch; ++b) {
    std::memcpy(pr.ho + (b * pr.dirs + d) * hidden, h + b * hidden, hidden * sizeof(float));
    std::memcpy(pr.co + (b * pr.dirs + d) * hidden, c + b * hidden, hidden * sizeof(float));
  }
}

ffi::Error Compute(ffi::ThreadPool& pool, ffi::Buffer<ffi::F32> projected, ffi::Buffer<ffi::F32> h0, ffi::Buffer<ffi::F32> c0,
                   ffi::Buffer<ffi::S32> lengths, ffi::Buffer<ffi::F32> packed, ffi::ResultBuffer<ffi::F32> y,
                   ffi::ResultBuffer<ffi::F32> ho, ffi::ResultBuffer<ffi::F32> co, int64_t direction, float clip) {
  const auto pd = projected.dimensions();
  const auto rd = packed.dimensions();
  if (pd.size() != 4 || rd.size() != 4 || h0.dimensions().size() != 3)
    return ffi::Error::InvalidArgument("LSTMSequence kernel: bad ranks");
  Problem pr;
  pr.seq = pd[0];
  pr.dirs = pd[1];
  pr.batch = pd[2];
  pr.hidden = rd[2];
  pr.tiles = rd[1];
  pr.clip = clip;
  if (direction < 0 || direction > 2 || pr.dirs != (direction == 2 ? 2 : 1) || rd[0] != pr.dirs ||
      rd[3] != kTile || pd[3] != 4 * pr.hidden || pr.tiles * kTile < 4 * pr.hidden ||
      static_cast<int64_t>(h0.element_count()) != pr.batch * pr.dirs * pr.hidden || c0.element_count() != h0.element_count() ||
      static_cast<int64_t>(lengths.element_count()) != pr.batch)
    return ffi::Error::InvalidArgument("LSTMSequence kernel: operand shapes do not agree");
  pr.projected = projected.typed_data();
  pr.h0 = h0.typed_data();
  pr.c0 = c0.typed_data();
  pr.lengths = lengths.typed_data();
  pr.packed = packed.typed_data();
  pr.y = y->typed_data();
  pr.ho = ho->typed_data();
  pr.co = co->typed_data();
  const int64_t scratch = pr.batch * (2 * pr.hidden + pr.tiles * kTile);
  std::vector<float> buffers(pr.dirs * scratch);
  auto run = [&](int64_t d) {
    float* h = buffers.data() + d * scratch;
    Direction(pr, d, direction == 1 || (direction == 2 && d == 1), h, h + pr.batch * pr.hidden,
              h + 2 * pr.batch * pr.hidden);
  };
  // With more than one pool thread the directions run at once (ParallelFor runs one piece inline).
  ParallelFor(pool, pr.dirs, 1, [&](int64_t d0, int64_t d1) {
    for (int64_t d = d0; d < d1; ++d) run(d);
  });
  return ffi::Error::Success();
}

ffi::Error LstmSequenceImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> projected, ffi::Buffer<ffi::F32> h0, ffi::Buffer<ffi::F32> c0,
                            ffi::Buffer<ffi::S32> lengths, ffi::Buffer<ffi::F32> packed,
                            ffi::ResultBuffer<ffi::F32> y, ffi::ResultBuffer<ffi::F32> ho,
                            ffi::ResultBuffer<ffi::F32> co, int64_t direction, float clip) {
  try {
    return Compute(pool, projected, h0, c0, lengths, packed, y, ho, co, direction, clip);
  } catch (const std::bad_alloc&) {
    return ffi::Error::Internal("LSTMSequence kernel: out of memory for its state buffers");
  }
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkLstmSequence, LstmSequenceImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("direction")
                                  .Attr<float>("clip"));
