// MatMulNBits on XLA:CPU through XLA's FFI: y = x @ dequantize(B)^T with B kept packed.
//
// Operands (prepared once when the model compiles, see hetero_sdk_contrib.xla_matmul_nbits):
//   x       f32 [M, K]            the activations
//   packed  u8  [N, blocks, blob] ONNX's packing: element i of a block in bits (i * bits) % 8 of byte
//                                 (i * bits) / 8, low bits first
//   scales  f32 [N, blocks]
//   zeros   u8  [N, blocks]       one zero point per block, unpacked (2^(bits-1) where the model has none)
// Attributes: bits (2, 4 or 8), block_size (a power of two >= 16), k (K; the last block may be partial).
// A weight row (blocks * blob bytes) must be a whole number of 16-byte chunks.
// Result: f32 [M, N], y[m, n] = sum_b s[n,b] * dot(x_b, q_b - z[n,b]), accumulated in f32.
//
// Few rows (decode): each packed byte is read once per row, unpacked in registers and multiplied with x
// reordered once per row so that a 16-byte load of B meets x in the order the nibbles come out (lane i
// holds byte i's element p in plane p). Many rows (prefill): a tile of 4 weight rows is dequantized into
// a scratch buffer (in the same order) and multiplied with rows of x 128 at a time, 6 rows by 4 weight
// rows in registers. Work over N is split on XLA's intra-op thread pool when a call is large enough.
#if !defined(__AVX512F__) || !defined(__AVX512BW__)
#error "this kernel needs AVX-512 (F and BW): the XLA device falls back to its pure-XLA lowering"
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

#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using hetero_sdk_native::ParallelFor;

namespace {

constexpr int64_t kLanes = 16;      // f32 lanes of a 512-bit register; bytes of B read at once
constexpr int64_t kUnrollN = 4;     // weight rows computed together in the decode kernel
constexpr int64_t kManyRows = 4;    // from this many rows on, the tiled (prefill) kernel runs
constexpr int64_t kPrefillTileN = 4;  // weight rows dequantized at once (prefill)
constexpr int64_t kPrefillTileM = 6;  // rows of x per register tile (prefill): 24 accumulators of 32 registers

struct Problem {
  const float* x;
  const uint8_t* packed;
  const float* scales;
  const uint8_t* zeros;
  float* y;
  int64_t m, n, k, bits, block, blocks, blob;
};

// x of one row reordered per 16-byte chunk of B: plane p (p < 8 / bits) holds the elements in bits
// p*bits.. of each byte, times 2^-(p*bits) (the weights of plane p come out 2^(p*bits) times too large,
// see Plane: scaling by powers of two changes no rounding); zero beyond K.
void ReorderRow(const float* x, int64_t k, int64_t bits, int64_t padded, float* out) {
  const int64_t per_byte = 8 / bits, chunk = kLanes * per_byte;
  for (int64_t c = 0; c < padded; c += chunk) {
    for (int64_t p = 0; p < per_byte; ++p) {
      const float scale = 1.0f / static_cast<float>(1 << (p * bits));
      for (int64_t i = 0; i < kLanes; ++i) {
        const int64_t source = c + i * per_byte + p;
        out[c + p * kLanes + i] = source < k ? x[source] * scale : 0.0f;
      }
    }
  }
}

// Plane p of 16 bytes (zero-extended to 16 lanes) minus the zero points, as floats, times 2^(p*bits):
// the plane's bits are kept where they are and put in the mantissa of 2^23 (their bits OR 0x4B000000 is
// the float 2^23 + q * 2^(p*bits), exactly: one vpternlogd with the plane's mask), and magic_zero,
// 2^23 + z * 2^(p*bits), subtracted: (q - z) * 2^(p*bits) exactly, without a shift or an
// integer-to-float conversion.
template <int Bits>
inline __m512 Plane(__m512i bytes, int p, __m512 magic_zero) {
  const __m512i magic = _mm512_set1_epi32(0x4B000000);
  __m512i value;
  if constexpr (Bits == 8) {
    value = _mm512_or_si512(bytes, magic);
  } else {
    const __m512i mask = _mm512_set1_epi32(((1 << Bits) - 1) << (Bits * p));
    value = _mm512_ternarylogic_epi32(bytes, mask, magic, 0xEA);  // (a & b) | c
  }
  return _mm512_sub_ps(_mm512_castsi512_ps(value), magic_zero);
}

// 2^23 + z * 2^(p*bits) for each lane, from zero points as 32-bit integers.
template <int Bits>
inline __m512 MagicZero(__m512i zero, int p) {
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_slli_epi32(zero, Bits * p), _mm512_set1_epi32(0x4B000000)));
}

// Decode kernel, U weight rows from n for one row of x (reordered: xr). Zero points are subtracted from
// the integers before they become floats, so each product is x * (q - z) and the block's scale multiplies
// the block's sum: the dequantized weight times x, only grouped by block.
template <int Bits, int U, int PerBlock>
inline void DecodeTile(const Problem& pr, const float* xr, float* y, int64_t n) {
  constexpr int64_t per_byte = 8 / Bits;
  const int64_t block_bytes = pr.blob;
  __m512 total[U];
  const uint8_t* rows[U];
  const float* scale_rows[U];
  const uint8_t* zero_rows[U];
  for (int j = 0; j < U; ++j) {
    total[j] = _mm512_setzero_ps();
    rows[j] = pr.packed + (n + j) * pr.blocks * block_bytes;
    scale_rows[j] = pr.scales + (n + j) * pr.blocks;
    zero_rows[j] = pr.zeros + (n + j) * pr.blocks;
  }
  if (block_bytes >= kLanes) {  // one scale and zero point per block
    const int64_t per_block = PerBlock > 0 ? PerBlock : block_bytes / kLanes;
    alignas(64) float magic_zeros[U][per_byte][kLanes];
    for (int64_t b0 = 0; b0 < pr.blocks; b0 += kLanes) {
      const int64_t count = std::min(kLanes, pr.blocks - b0);
      const __mmask16 present = static_cast<__mmask16>((1u << count) - 1);
      for (int j = 0; j < U; ++j) {  // each plane's 2^23 + z * 2^(p*bits) of 16 blocks at once
        const __m512i zero = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(present, zero_rows[j] + b0));
        for (int p = 0; p < per_byte; ++p) _mm512_store_ps(magic_zeros[j][p], MagicZero<Bits>(zero, p));
      }
      for (int64_t b = 0; b < count; ++b) {
        __m512 acc[U];
        for (int j = 0; j < U; ++j) acc[j] = _mm512_setzero_ps();
        const int64_t first = (b0 + b) * per_block;
        for (int64_t c = first; c < first + per_block; ++c) {
          const float* xc = xr + c * kLanes * per_byte;
          for (int j = 0; j < U; ++j) {
            const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[j] + c * kLanes)));
            for (int p = 0; p < per_byte; ++p)
              acc[j] = _mm512_fmadd_ps(Plane<Bits>(bytes, p, _mm512_set1_ps(magic_zeros[j][p][b])),
                                       _mm512_loadu_ps(xc + p * kLanes), acc[j]);
          }
        }
        for (int j = 0; j < U; ++j)
          total[j] = _mm512_fmadd_ps(acc[j], _mm512_set1_ps(scale_rows[j][b0 + b]), total[j]);
      }
    }
  } else {  // several blocks in 16 bytes: a scale and zero point per lane
    const int64_t groups = kLanes / block_bytes;
    alignas(64) int32_t index[kLanes];
    for (int64_t i = 0; i < kLanes; ++i) index[i] = static_cast<int32_t>(i / block_bytes);
    const __m512i lane_block = _mm512_load_si512(index);
    const __mmask16 present = static_cast<__mmask16>((1u << groups) - 1);
    const int64_t chunks = pr.blocks / groups;
    for (int64_t c = 0; c < chunks; ++c) {
      const float* xc = xr + c * kLanes * per_byte;
      for (int j = 0; j < U; ++j) {
        const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[j] + c * kLanes)));
        const __m512i zero = _mm512_permutexvar_epi32(
            lane_block, _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(present, zero_rows[j] + c * groups)));
        __m512 acc = _mm512_setzero_ps();
        for (int p = 0; p < per_byte; ++p)
          acc = _mm512_fmadd_ps(Plane<Bits>(bytes, p, MagicZero<Bits>(zero, p)), _mm512_loadu_ps(xc + p * kLanes), acc);
        const __m512 s = _mm512_permutexvar_ps(lane_block, _mm512_maskz_loadu_ps(present, scale_rows[j] + c * groups));
        total[j] = _mm512_fmadd_ps(acc, s, total[j]);
      }
    }
  }
  for (int j = 0; j < U; ++j) y[n + j] = _mm512_reduce_add_ps(total[j]);
}

// PerBlock: 16-byte chunks per block when known at compile time (0: read from the problem).
template <int Bits, int PerBlock>
void DecodeRowsOf(const Problem& pr, const float* xr, float* y, int64_t n0, int64_t n1) {
  int64_t n = n0;
  for (; n + kUnrollN <= n1; n += kUnrollN) DecodeTile<Bits, kUnrollN, PerBlock>(pr, xr, y, n);
  for (; n < n1; ++n) DecodeTile<Bits, 1, PerBlock>(pr, xr, y, n);
}

template <int Bits>
void DecodeRows(const Problem& pr, const float* xr, float* y, int64_t n0, int64_t n1) {
  if (pr.blob == kLanes) DecodeRowsOf<Bits, 1>(pr, xr, y, n0, n1);
  else if (pr.blob == 2 * kLanes) DecodeRowsOf<Bits, 2>(pr, xr, y, n0, n1);
  else DecodeRowsOf<Bits, 0>(pr, xr, y, n0, n1);
}

// Dequantizes weight rows [n, n + count) into w, in the order of ReorderRow (count rows of `padded`
// floats; values past k multiply zeros of the reordered x).
template <int Bits>
void Dequantize(const Problem& pr, int64_t n, int64_t count, int64_t padded, float* w) {
  constexpr int64_t per_byte = 8 / Bits;
  const int64_t chunks = padded / (kLanes * per_byte);
  const int64_t groups = pr.blob >= kLanes ? 1 : kLanes / pr.blob;  // blocks per 16-byte chunk
  alignas(64) int32_t index[kLanes];
  for (int64_t i = 0; i < kLanes; ++i) index[i] = static_cast<int32_t>(groups == 1 ? 0 : i / pr.blob);
  const __m512i lane_block = _mm512_load_si512(index);
  const __mmask16 present = static_cast<__mmask16>((1u << groups) - 1);
  for (int64_t j = 0; j < count; ++j) {
    const uint8_t* row = pr.packed + (n + j) * pr.blocks * pr.blob;
    const float* srow = pr.scales + (n + j) * pr.blocks;
    const uint8_t* zrow = pr.zeros + (n + j) * pr.blocks;
    float* out = w + j * padded;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t block = c * kLanes / pr.blob;  // the chunk's first block
      __m512i zero;
      __m512 scale;
      if (groups == 1) {
        zero = _mm512_set1_epi32(zrow[block]);
        scale = _mm512_set1_ps(srow[block]);
      } else {
        zero = _mm512_permutexvar_epi32(lane_block, _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(present, zrow + block)));
        scale = _mm512_permutexvar_ps(lane_block, _mm512_maskz_loadu_ps(present, srow + block));
      }
      const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c * kLanes)));
      for (int p = 0; p < per_byte; ++p)  // times 2^(p*bits), as x's plane is times 2^-(p*bits)
        _mm512_storeu_ps(out + (c * per_byte + p) * kLanes,
                         _mm512_mul_ps(Plane<Bits>(bytes, p, MagicZero<Bits>(zero, p)), scale));
    }
  }
}

// Prefill kernel: y[:, n0:n1] for every row of x (x_padded: M rows reordered by ReorderRow, `padded` floats).
template <int Bits>
void TiledRows(const Problem& pr, const float* x_padded, int64_t padded, float* w, int64_t n0, int64_t n1) {
  // Rows of x in groups of kRowGroup, so that a group stays in L2 while every weight tile (4 rows, in L1)
  // passes it; each tile is dequantized again for each group (cheap beside the products).
  constexpr int64_t kTileN = kPrefillTileN, kTileM = kPrefillTileM, kRowGroup = 128;
  for (int64_t m0 = 0; m0 < pr.m; m0 += kRowGroup) {
  const int64_t m1 = std::min(pr.m, m0 + kRowGroup);
  for (int64_t n = n0; n < n1; n += kTileN) {
    const int64_t tn = std::min(kTileN, n1 - n);
    Dequantize<Bits>(pr, n, tn, padded, w);
    for (int64_t j = tn; j < kTileN; ++j) std::memset(w + j * padded, 0, padded * sizeof(float));
    for (int64_t m = m0; m < m1; m += kTileM) {
      const int64_t tm = std::min(kTileM, m1 - m);
      __m512 acc[kTileM][kTileN];
      for (int i = 0; i < kTileM; ++i)
        for (int j = 0; j < kTileN; ++j) acc[i][j] = _mm512_setzero_ps();
      const float* xs[kTileM];
      for (int i = 0; i < kTileM; ++i) xs[i] = x_padded + (m + std::min<int64_t>(i, tm - 1)) * padded;
      for (int64_t k = 0; k < padded; k += kLanes) {
        __m512 wv[kTileN];
        for (int j = 0; j < kTileN; ++j) wv[j] = _mm512_loadu_ps(w + j * padded + k);
        for (int i = 0; i < kTileM; ++i) {
          const __m512 xv = _mm512_loadu_ps(xs[i] + k);
          for (int j = 0; j < kTileN; ++j) acc[i][j] = _mm512_fmadd_ps(xv, wv[j], acc[i][j]);
        }
      }
      for (int64_t i = 0; i < tm; ++i)
        for (int64_t j = 0; j < tn; ++j) pr.y[(m + i) * pr.n + n + j] = _mm512_reduce_add_ps(acc[i][j]);
    }
  }
  }
}

ffi::Error Compute(ffi::ThreadPool& pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::U8> packed,
                   ffi::Buffer<ffi::F32> scales, ffi::Buffer<ffi::U8> zeros, ffi::ResultBuffer<ffi::F32> y,
                   int64_t bits, int64_t block, int64_t k) {
  if (bits != 2 && bits != 4 && bits != 8) return ffi::Error::InvalidArgument("MatMulNBits kernel: bits must be 2, 4 or 8");
  const auto pdims = packed.dimensions();
  if (pdims.size() != 3 || x.dimensions().size() != 2) return ffi::Error::InvalidArgument("MatMulNBits kernel: bad ranks");
  Problem pr;
  pr.x = x.typed_data();
  pr.packed = packed.typed_data();
  pr.scales = scales.typed_data();
  pr.zeros = zeros.typed_data();
  pr.y = y->typed_data();
  pr.m = x.dimensions()[0];
  pr.k = k;
  pr.n = pdims[0];
  pr.blocks = pdims[1];
  pr.blob = pdims[2];
  pr.bits = bits;
  pr.block = block;
  const int64_t padded = pr.blocks * pr.block;
  if (block < kLanes || (block & (block - 1)) != 0)
    return ffi::Error::InvalidArgument("MatMulNBits kernel: block_size must be a power of two, at least 16");
  if (x.dimensions()[1] != k || pr.blob * 8 != block * bits || padded < k || (pr.blocks * pr.blob) % kLanes != 0 ||
      scales.element_count() != pr.n * pr.blocks || zeros.element_count() != pr.n * pr.blocks)
    return ffi::Error::InvalidArgument("MatMulNBits kernel: operand shapes do not agree");
  const int64_t work = pr.n * padded * std::max<int64_t>(pr.m, 1);
  const int64_t grain_n = std::max<int64_t>(kUnrollN, ((int64_t{1} << 18) / std::max<int64_t>(padded, 1)) / kUnrollN * kUnrollN);
  if (pr.m < kManyRows) {
    std::vector<float> xr(pr.m * padded);
    for (int64_t m = 0; m < pr.m; ++m) ReorderRow(pr.x + m * k, k, bits, padded, xr.data() + m * padded);
    auto body = [&](int64_t n0, int64_t n1) {
      for (int64_t m = 0; m < pr.m; ++m) {
        const float* xm = xr.data() + m * padded;
        float* ym = pr.y + m * pr.n;
        if (bits == 4) DecodeRows<4>(pr, xm, ym, n0, n1);
        else if (bits == 8) DecodeRows<8>(pr, xm, ym, n0, n1);
        else DecodeRows<2>(pr, xm, ym, n0, n1);
      }
    };
    if (work < (int64_t{1} << 20)) body(0, pr.n);
    else ParallelFor(pool, pr.n, grain_n, body);
    return ffi::Error::Success();
  }
  std::vector<float> xp(pr.m * padded);
  for (int64_t m = 0; m < pr.m; ++m) ReorderRow(pr.x + m * k, k, bits, padded, xp.data() + m * padded);
  std::atomic<bool> out_of_memory{false};
  auto body = [&](int64_t n0, int64_t n1) {
    std::vector<float> w;
    try {  // in a pool thread: an exception must not leave it
      w.resize(kPrefillTileN * padded);
    } catch (const std::bad_alloc&) {
      out_of_memory.store(true);
      return;
    }
    if (bits == 4) TiledRows<4>(pr, xp.data(), padded, w.data(), n0, n1);
    else if (bits == 8) TiledRows<8>(pr, xp.data(), padded, w.data(), n0, n1);
    else TiledRows<2>(pr, xp.data(), padded, w.data(), n0, n1);
  };
  if (work < (int64_t{1} << 20)) body(0, pr.n);
  else ParallelFor(pool, pr.n, std::max<int64_t>(4, grain_n / std::max<int64_t>(pr.m / 4, 1) / 4 * 4), body);
  if (out_of_memory.load()) return ffi::Error::Internal("MatMulNBits kernel: out of memory for its scratch buffers");
  return ffi::Error::Success();
}

// The handler: allocation failures become an error XLA reports, never an exception through XLA's C API.
ffi::Error MatMulNBitsImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::U8> packed,
                           ffi::Buffer<ffi::F32> scales, ffi::Buffer<ffi::U8> zeros, ffi::ResultBuffer<ffi::F32> y,
                           int64_t bits, int64_t block, int64_t k) {
  try {
    return Compute(pool, x, packed, scales, zeros, y, bits, block, k);
  } catch (const std::bad_alloc&) {
    return ffi::Error::Internal("MatMulNBits kernel: out of memory for its scratch buffers");
  }
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkMatMulNBits, MatMulNBitsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::U8>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::U8>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("bits")
                                  .Attr<int64_t>("block_size")
                                  .Attr<int64_t>("k"));
