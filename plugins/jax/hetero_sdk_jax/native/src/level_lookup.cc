// Level lookup: y[i] = table[index[i]] for u8 indices into a table of at most 256 f32 entries.
//
// The lowering of XlaLevelLookup (hetero_sdk_jax/level_lookup.py, lowering/kernels/level_lookup.py) calls
// it where XLA's own gather ran slowly: XLA:CPU fuses a gather into the consumer that pads the levels for
// the next int8 convolution and computes each padded element with a scalar loop. Here XLA's fusion that
// computes the levels writes them as u8 indices (a quarter of the f32 traffic) and the lookup is one pass.
// The loop is kept scalar: the vectorised form (AVX gathers) measured slower on the whole model.
#include <cstdint>

#include "parallel_for.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

__attribute__((optimize("no-tree-vectorize"))) void Lookup(const uint8_t* index, const float* values, float* out,
                                                           int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 4 <= end; i += 4) {
    const float a = values[index[i]], b = values[index[i + 1]], c = values[index[i + 2]], d = values[index[i + 3]];
    out[i] = a;
    out[i + 1] = b;
    out[i + 2] = c;
    out[i + 3] = d;
  }
  for (; i < end; ++i) out[i] = values[index[i]];
}

ffi::Error LevelLookupImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::U8> index, ffi::Buffer<ffi::F32> table,
                           ffi::ResultBuffer<ffi::F32> y) {
  const int64_t n = static_cast<int64_t>(index.element_count());
  if (static_cast<int64_t>(y->element_count()) != n) {
    return ffi::Error::InvalidArgument("level lookup kernel: index and y must have the same number of elements");
  }
  if (table.element_count() != 256) {
    return ffi::Error::InvalidArgument("level lookup kernel: the table must hold 256 entries");
  }
  const uint8_t* in = index.typed_data();
  const float* values = table.typed_data();
  float* out = y->typed_data();
  hetero_sdk_native::ParallelFor(pool, n, 1 << 16,
                                 [&](int64_t begin, int64_t end) { Lookup(in, values, out, begin, end); });
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HeteroSdkLevelLookup, LevelLookupImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::U8>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
