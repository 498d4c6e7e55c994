// The native depthwise kernel's C++ code at two versions, called directly on the same 64-byte-aligned
// buffers (bench only: no XLA, no FFI call), interleaved, one CPU, medians of `reps` calls by thread CPU
// time, with each version's largest error against a float64 loop written here.
//
//   mkdir -p /tmp/dw && cp plugins/jax/hetero_sdk_jax/native/src/*.h /tmp/dw/
//   git show REV:plugins/jax/hetero_sdk_jax/native/src/depthwise_conv.cc > /tmp/dw/old.cc
//   cp plugins/jax/hetero_sdk_jax/native/src/depthwise_conv.cc /tmp/dw/new.cc
//   g++ -O3 -march=native -std=c++17 -isystem "$(python -c 'import jax; print(jax.ffi.include_dir())')" \
//       -I/tmp/dw bench/depthwise_kernel_harness.cc -o /tmp/dw/harness
//   taskset -c 0 /tmp/dw/harness rec 200 2   # layers: rec, det, cls, tiny (L1-sized), odd; reps; activation 0/1/2
//
// Columns: each median (us), new / old, the new and the old version's largest absolute error, each fastest call.
//
// Environment: WARM=1 times each version on its second call in a row; OFF=16 offsets every buffer by 16
// bytes (vectors straddling two cache lines).
#include <immintrin.h>
#include <time.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
#include "xla/ffi/api/ffi.h"
#include "parallel_for.h"
#include "avx512_math.h"
#undef XLA_FFI_DEFINE_HANDLER_SYMBOL
#define XLA_FFI_DEFINE_HANDLER_SYMBOL(...)
namespace oldk {
#include "old.cc"
}
namespace newk {
#include "new.cc"
}

struct AV { float* p; size_t n; float* data() { return p; } float* begin() { return p; } float* end() { return p + n; } float& operator[](size_t i) { return p[i]; } };
struct Layer { int64_t c, h, w, k, sh, sw, count; int64_t kw = 0; };

static double now() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }

int main(int argc, char** argv) {
  const char* model = argc > 1 ? argv[1] : "rec";
  int reps = argc > 2 ? atoi(argv[2]) : 200;
  int act = argc > 3 ? atoi(argv[3]) : 2;
  std::vector<Layer> layers;
  if (!strcmp(model, "rec")) layers = {{16,24,160,3,1,1,1},{32,24,160,3,1,1,1},{64,24,160,3,1,1,1},{64,24,160,3,2,1,1},{128,12,160,3,1,1,1},{128,12,160,3,1,2,1},{240,12,80,5,1,1,4},{240,12,80,5,2,1,1},{480,6,80,5,1,1,1},{480,6,80,5,2,1,1},{480,3,80,5,1,1,1}};
  else if (!strcmp(model, "cls")) layers = {{8,24,96,3,2,1,1},{24,12,96,3,2,1,1},{32,6,96,3,1,1,1},{32,6,96,5,2,1,1},{88,3,96,5,1,1,2},{40,3,96,5,1,1,1},{48,3,96,5,1,1,1},{104,3,96,5,2,1,1},{200,2,96,5,1,1,2}};
  else if (!strcmp(model, "det")) layers = {{16,160,160,3,1,1,1},{32,160,160,3,2,2,1},{48,80,80,3,1,1,1},{48,80,80,3,2,2,1},{96,40,40,3,1,1,1},{96,40,40,3,2,2,1},{192,20,20,5,1,1,4},{192,20,20,5,2,2,1},{384,10,10,5,1,1,3}};
  else if (!strcmp(model, "tiny")) layers = {{16,12,80,5,1,1,1},{16,24,40,3,1,1,1},{32,6,64,5,1,1,1},{240,2,16,5,1,1,1}};
  else { // odd shapes for correctness: c, h, w, k, sh, sw, count, kw
    layers = {{17,9,31,3,1,1,1,1},{33,7,29,1,1,1,1,3},{40,8,40,7,1,1,1},{20,9,37,7,2,2,1},{5,6,23,5,1,2,1},{64,5,50,3,1,1,1,5},{48,4,44,3,2,1,1}};
  }
  double tot_old = 0, tot_new = 0;
  printf("%-22s %9s %9s %6s %10s\n", "layer", "old us", "new us", "ratio", "maxerr");
  for (auto L : layers) {
    int64_t kh = L.k, kw = L.kw ? L.kw : L.k;
    int64_t pt = kh / 2, pl = kw / 2;
    int64_t oh = (L.h + 2 * pt - kh) / L.sh + 1, ow = (L.w + 2 * pl - kw) / L.sw + 1;
    const size_t off = getenv("OFF") ? atoi(getenv("OFF")) : 0;
    auto alloc = [&](size_t n) { float* q = (float*)aligned_alloc(4096, ((n * 4 + off + 8191) / 4096) * 4096); return AV{q + off / 4, n}; };
    AV x = alloc(L.h * L.w * L.c), w = alloc(kh * kw * L.c), b = alloc(L.c), y0 = alloc(oh * ow * L.c), y1 = alloc(oh * ow * L.c);
    srand(1);
    for (auto& v : x) v = (rand() / (float)RAND_MAX) * 8 - 4;
    for (auto& v : w) v = (rand() / (float)RAND_MAX) * 2 - 1;
    for (auto& v : b) v = (rand() / (float)RAND_MAX) * 2 - 1;
    // reference
    std::vector<double> ref(oh * ow * L.c);
    for (int64_t i = 0; i < oh; ++i) for (int64_t j = 0; j < ow; ++j) for (int64_t c = 0; c < L.c; ++c) {
      double s = b[c];
      for (int64_t a = 0; a < kh; ++a) for (int64_t bb = 0; bb < kw; ++bb) {
        int64_t r = i * L.sh - pt + a, q = j * L.sw - pl + bb;
        if (r < 0 || r >= L.h || q < 0 || q >= L.w) continue;
        s += (double)x[(r * L.w + q) * L.c + c] * w[(a * kw + bb) * L.c + c];
      }
      if (act == 1) s = std::max(s, 0.0); else if (act == 2) s = s * std::min(std::max(s + 3, 0.0), 6.0) / 6;
      ref[(i * ow + j) * L.c + c] = s;
    }
    oldk::Problem po{x.data(), w.data(), y0.data(), 1, L.h, L.w, L.c, kh, kw, oh, ow, L.sh, L.sw, pt, pl, 1, 1, b.data(), act};
    newk::Problem pn{x.data(), w.data(), y1.data(), 1, L.h, L.w, L.c, kh, kw, oh, ow, L.sh, L.sw, pt, pl, 1, 1, b.data(), act};
    oldk::Rows(po, 0, oh); newk::Rows(pn, 0, oh);
    double err = 0, err0 = 0;
    for (size_t t = 0; t < ref.size(); ++t) { err = std::max(err, std::fabs(y1[t] - ref[t])); err0 = std::max(err0, std::fabs(y0[t] - ref[t])); }
    std::vector<double> to, tn;
    for (int r = 0; r < reps; ++r) {
      double t0, t1, t2;
      if (getenv("WARM")) {  // each kernel timed on its second call in a row (its buffers warm in L2)
        oldk::Rows(po, 0, oh); t0 = now(); oldk::Rows(po, 0, oh); t1 = now();
        newk::Rows(pn, 0, oh); const double t15 = now(); newk::Rows(pn, 0, oh); t2 = now(); t2 -= t15 - t1;
      }

      else { t0 = now(); oldk::Rows(po, 0, oh); t1 = now(); newk::Rows(pn, 0, oh); t2 = now(); }
      to.push_back(t1 - t0); tn.push_back(t2 - t1);
    }
    std::sort(to.begin(), to.end()); std::sort(tn.begin(), tn.end());
    double mo = to[reps / 2] * 1e6, mn = tn[reps / 2] * 1e6;
    tot_old += mo * L.count; tot_new += mn * L.count;
    char name[64]; snprintf(name, sizeof name, "%ldx%ldx%ld %ldx%ld /%ld,%ld x%ld", L.c, L.h, L.w, kh, kw, L.sh, L.sw, L.count);
    printf("%-26s %9.1f %9.1f %6.2f %10.2e %8.1e  (min %6.1f %6.1f)\n", name, mo, mn, mn / mo, err, err0, to[0]*1e6, tn[0]*1e6);
  }
  printf("%-26s %9.1f %9.1f %6.2f\n", "total", tot_old, tot_new, tot_new / tot_old);
}
