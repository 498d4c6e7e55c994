// hetero-sdk native kernel: a per-channel bias and an activation applied in place to channels-last f32 data,
// for the XLA device (XLA FFI, CPU, AVX-512F): the epilogue of a convolution or product XLA computed itself.
//
// Operands: x f32 [..., C], bias f32 [C]. Result: y f32 of x's shape, y = activation(x + bias[c]), where
// activation is 0 (none), 1 (relu: max(v, 0), NaN kept) or 2 (silu: v * sigmoid(v), computed as XLA computes it,
// v * (0.5 + 0.5 * tanh(v / 2)), with the rational tanh XLA:CPU emits (XLA's EmitFastTanh): +inf -> +inf, -inf -> NaN,
// NaN -> NaN, as v * sigmoid(v)). avx512_math.h's e^x with a refined reciprocal measured 1.2-1.4x XLA's loop
// in YOLOv8n (25 vector operations a vector against this form's 17).
// The lowering aliases y to x (input_output_aliases), so the pass reads and writes one buffer.
//
// The data is walked as one flat run in 16-lane vectors. The bias repeats every C values; it is tiled
// into a period of lcm(C, 16) values (up to kMaxPeriod), so every vector of the run is a full one but the
// last, whatever C is (18, 24, 48 channels); wider periods walk row by row, a masked vector at each
// row's end. Periods are split on XLA's intra-op pool.

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <new>
#include <vector>

#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using hetero_sdk_native::ParallelFor;

namespace {

enum Activation : int64_t { kNone = 0, kRelu = 1, kSilu = 2 };

constexpr int64_t kLanes = 16;
constexpr int64_t kMaxPeriod = 4096;  // floats of tiled bias (16 KiB)
constexpr int64_t kGrain = 16384;     // values per piece of work on the pool

inline __mmask16 TailMask(int64_t n) { return n >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }

template <int64_t A>
inline __m512 Activate(__m512 v) {
  if constexpr (A == kRelu) return _mm512_max_ps(_mm512_setzero_ps(), v);  // the second operand on NaN: v
  if constexpr (A == kSilu) {  // tanh(h) = h P(h^2) / Q(h^2), h clamped where the ratio rounds to +-1
    const __m512 h = _mm512_mul_ps(v, _mm512_set1_ps(0.5f));
    const __m512 bound = _mm512_set1_ps(9.0f);  // as XLA clamps: the ratio rounds to 1 there
    const __m512 x = _mm512_max_ps(_mm512_min_ps(h, bound), _mm512_sub_ps(_mm512_setzero_ps(), bound));
    const __m512 x2 = _mm512_mul_ps(x, x);
    __m512 p = _mm512_set1_ps(-2.76076847742355e-16f);
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(2.00018790482477e-13f));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-8.60467152213735e-11f));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(5.12229709037114e-08f));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(1.48572235717979e-05f));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(6.37261928875436e-04f));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(4.89352455891786e-03f));
    p = _mm512_mul_ps(p, x);
    __m512 q = _mm512_set1_ps(1.19825839466702e-06f);
    q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(1.18534705686654e-04f));
    q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(2.26843463243900e-03f));
    q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(4.89352518554385e-03f));
    const __m512 t = _mm512_div_ps(p, q);
    return _mm512_mul_ps(v, _mm512_fmadd_ps(t, _mm512_set1_ps(0.5f), _mm512_set1_ps(0.5f)));
  }
  return v;
}

// Values [begin, end) of the flat run, `begin` a multiple of `period`; the bias pattern repeats every
// `period` values.
template <int64_t A>
void Span(const float* x, float* y, const float* pattern, int64_t period, int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; row += period) {
    const int64_t length = std::min(period, end - row);
    const float* in = x + row;
    float* out = y + row;
    int64_t j = 0;
    for (; j + kLanes <= length; j += kLanes) {
      const __m512 v = _mm512_add_ps(_mm512_loadu_ps(in + j), _mm512_loadu_ps(pattern + j));
      _mm512_storeu_ps(out + j, Activate<A>(v));
    }
    if (j < length) {
      const __mmask16 k = TailMask(length - j);
      const __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(k, in + j), _mm512_maskz_loadu_ps(k, pattern + j));
      _mm512_mask_storeu_ps(out + j, k, Activate<A>(v));
    }
  }
}

ffi::Error Compute(ffi::ThreadPool& pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> bias,
                   ffi::ResultBuffer<ffi::F32> y, int64_t activation) {
  const auto xd = x.dimensions(), yd = y->dimensions();
  if (xd.size() < 1 || xd.size() != yd.size() || !std::equal(xd.begin(), xd.end(), yd.begin()))
    return ffi::Error::InvalidArgument("bias_activation kernel: x and y must have one shape of rank 1 or more");
  const int64_t channels = xd.back();
  if (static_cast<int64_t>(bias.element_count()) != channels)
    return ffi::Error::InvalidArgument("bias_activation kernel: the bias must hold one value per channel");
  if (activation < kNone || activation > kSilu)
    return ffi::Error::InvalidArgument("bias_activation kernel: activation must be 0 (none), 1 (relu) or 2 (silu)");
  const int64_t total = static_cast<int64_t>(x.element_count());
  if (total == 0) return ffi::Error::Success();
  const int64_t tiled = std::lcm(channels, kLanes);
  const int64_t period = tiled <= kMaxPeriod ? tiled : channels;
  std::vector<float> pattern(period);
  for (int64_t i = 0; i < period; ++i) pattern[i] = bias.typed_data()[i % channels];
  const float* src = x.typed_data();
  float* dst = y->typed_data();
  const int64_t periods = (total + period - 1) / period;
  const int64_t grain = std::max<int64_t>(1, kGrain / period);
  auto body = [&](int64_t p0, int64_t p1) {
    const int64_t begin = p0 * period, end = std::min(total, p1 * period);
    if (activation == kSilu) Span<kSilu>(src, dst, pattern.data(), period, begin, end);
    else if (activation == kRelu) Span<kRelu>(src, dst, pattern.data(), period, begin, end);
    else Span<kNone>(src, dst, pattern.data(), period, begin, end);
  };
  ParallelFor(pool, periods, grain, body);
  return ffi::Error::Success();
}

ffi::Error BiasActivationImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> bias,
                              ffi::ResultBuffer<ffi::F32> y, int64_t activation) {
  try {
    return Compute(pool, x, bias, y, activation);
  } catch (const std::bad_alloc&) {
    return ffi::Error::Internal("bias_activation kernel: out of memory");
  }
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkBiasActivation, BiasActivationImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("activation"));
