// The native kernels' SiLU (avx512_math.h's Silu) at two versions in one binary: ns per value of each over an
// L1-resident buffer (four independent vectors a step, as a kernel's epilogue has them), interleaved rounds,
// one CPU, medians by thread CPU time; and each version's largest relative error against x / (1 + e^-x) in
// double on every `stride`-th float32 in [-100, 100] (where |SiLU| > 1e-30; the largest absolute error below),
// with MXCSR's default (denormals kept: XLA's threads flush them, which turns results under 1.2e-38 into zeros).
//
//   mkdir -p /tmp/silu && git show REV:plugins/jax/hetero_sdk_jax/native/src/avx512_math.h |
//       sed 's/hetero_sdk_native/old_math/; s/HETERO_SDK_NATIVE_AVX512/OLD_AVX512/' > /tmp/silu/old_math.h
//   g++ -O3 -march=native -std=c++17 -I/tmp/silu -Iplugins/jax/hetero_sdk_jax/native/src
//       bench/silu_epilogue_harness.cc -o /tmp/silu/harness
//   taskset -c 0 /tmp/silu/harness 11 16   # rounds, stride (1: every float32, about 20 s)
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "avx512_math.h"
#include "old_math.h"

namespace {

double Now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

template <class F>
double NsPerValue(F f, const float* in, float* out, int n, int reps) {
  const double start = Now();
  for (int r = 0; r < reps; ++r) {
    for (int i = 0; i < n; i += 64) {
      const __m512 a = _mm512_load_ps(in + i), b = _mm512_load_ps(in + i + 16), c = _mm512_load_ps(in + i + 32),
                   d = _mm512_load_ps(in + i + 48);
      _mm512_store_ps(out + i, f(a));
      _mm512_store_ps(out + i + 16, f(b));
      _mm512_store_ps(out + i + 32, f(c));
      _mm512_store_ps(out + i + 48, f(d));
    }
    asm volatile("" ::: "memory");
  }
  return (Now() - start) / (double(n) * reps) * 1e9;
}

template <class F>
void Accuracy(const char* name, F f, uint32_t stride) {
  double worst = 0, worst_x = 0, worst_abs = 0, worst_abs_x = 0;
  uint64_t count = 0;
  float xs[16], out[16];
  int k = 0;
  auto check = [&]() {
    _mm512_storeu_ps(out, f(_mm512_loadu_ps(xs)));
    for (int j = 0; j < k; ++j) {
      const double x = xs[j], want = x / (1.0 + std::exp(-x)), error = std::fabs(out[j] - want);
      if (std::fabs(want) > 1e-30) {
        if (error / std::fabs(want) > worst) worst = error / std::fabs(want), worst_x = x;
      } else if (error > worst_abs) {
        worst_abs = error, worst_abs_x = x;
      }
    }
    count += k;
    k = 0;
  };
  for (uint32_t bits = 0;; bits += stride) {
    float x;
    std::memcpy(&x, &bits, 4);
    if (x > 100) break;
    xs[k++] = x;
    xs[k++] = -x;
    if (k == 16) check();
  }
  if (k > 0) check();
  std::printf("%s: %llu values, largest relative error %.3g (%.2f ulps of 2^-24) at x = %.9g; absolute %.3g at %g\n",
              name, static_cast<unsigned long long>(count), worst, worst / 5.9604645e-8, worst_x, worst_abs,
              worst_abs_x);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 11;
  const uint32_t stride = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 16;
  const int n = 4096, reps = 2000;
  float* in = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  float* out = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  for (int i = 0; i < n; ++i) in[i] = -12.0f + 24.0f * static_cast<float>((i * 7919) % n) / n;
  Accuracy("old", old_math::Silu, stride);
  Accuracy("new", hetero_sdk_native::Silu, stride);
  std::vector<double> old_ns, new_ns, ratio;
  for (int r = 0; r < rounds; ++r) {
    old_ns.push_back(NsPerValue(old_math::Silu, in, out, n, reps));
    new_ns.push_back(NsPerValue(hetero_sdk_native::Silu, in, out, n, reps));
    ratio.push_back(new_ns.back() / old_ns.back());
  }
  for (auto* v : {&old_ns, &new_ns, &ratio}) std::sort(v->begin(), v->end());
  std::printf("old %.3f ns/value, new %.3f ns/value (medians of %d rounds), new / old %.3f (fastest %.3f, %.3f)\n",
              old_ns[rounds / 2], new_ns[rounds / 2], rounds, ratio[rounds / 2], old_ns[0], new_ns[0]);
}
