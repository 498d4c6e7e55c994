// ParallelFor: the native kernels' way to split work on XLA's intra-op thread pool (xla::ffi::ThreadPool).
#ifndef HETERO_SDK_NATIVE_PARALLEL_FOR_H_
#define HETERO_SDK_NATIVE_PARALLEL_FOR_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>

#include "xla/ffi/api/ffi.h"

namespace hetero_sdk_native {

// Runs body(begin, end) over [0, n) in pieces of `grain` on the thread pool and this thread; returns when
// every piece is done. Pieces are claimed from a shared counter, so this thread finishes whatever no
// pool thread started: it never waits on a task that has not begun.
template <typename Body>
void ParallelFor(xla::ffi::ThreadPool& pool, int64_t n, int64_t grain, const Body& body) {
  const int64_t pieces = (n + grain - 1) / grain;
  const int64_t threads = std::min<int64_t>(pool.num_threads(), pieces);
  if (threads <= 1) {
    body(0, n);
    return;
  }
  struct State {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
  };
  std::shared_ptr<State> state;
  try {
    state = std::make_shared<State>();
  } catch (const std::bad_alloc&) {
    body(0, n);
    return;
  }
  // Pool tasks keep the state alive; one that starts after every piece is claimed touches nothing else.
  try {
    for (int64_t t = 1; t < threads; ++t) {
      pool.Schedule([state, pieces, grain, n, body_ptr = &body]() {
        for (int64_t piece; (piece = state->next.fetch_add(1)) < pieces;) {
          (*body_ptr)(piece * grain, std::min(n, (piece + 1) * grain));
          state->done.fetch_add(1, std::memory_order_release);
        }
      });
    }
  } catch (const std::bad_alloc&) {  // fewer helpers: this thread does the rest
  }
  for (int64_t piece; (piece = state->next.fetch_add(1)) < pieces;) {
    body(piece * grain, std::min(n, (piece + 1) * grain));
    state->done.fetch_add(1, std::memory_order_release);
  }
  while (state->done.load(std::memory_order_acquire) < pieces) std::this_thread::yield();
}

}  // namespace hetero_sdk_native

#endif  // HETERO_SDK_NATIVE_PARALLEL_FOR_H_
