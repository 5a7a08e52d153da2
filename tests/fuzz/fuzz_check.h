// What the fuzz targets share: the input as text, and checks that abort (a finding for
// libFuzzer and for the replay driver alike) with what was wrong.
#pragma once

#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace tock::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

[[noreturn]] inline void Fail(const char* what, std::string_view detail) {
  const size_t shown = detail.size() < 500 ? detail.size() : 500;
  std::fprintf(stderr, "fuzz check failed: %s: %.*s\n", what, static_cast<int>(shown),
               detail.data());
  std::abort();
}
// Debian's Abseil has its own string_view (not an alias of std::string_view).
[[noreturn]] inline void Fail(const char* what, absl::string_view detail) {
  Fail(what, std::string_view(detail.data(), detail.size()));
}
[[noreturn]] inline void Fail(const char* what, const std::string& detail) {
  Fail(what, std::string_view(detail));
}

// Runs `fn` on a thread with a stack of `bytes` and waits for it: a parser whose recursion
// is bounded passes with a small stack, one that recurses per input byte overflows it even
// with inputs of a few KB (the server's threads are not the main thread either).
template <typename Fn>
void OnSmallStack(size_t bytes, Fn fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    (*static_cast<Fn*>(arg))();
    return nullptr;
  };
  if (pthread_create(&thread, &attr, run, &fn) != 0) std::abort();
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

// The stack the query parsers get: 256 KiB (the server's unit test runs its deepest accepted
// query on that much); sanitizer builds use several times more stack per frame.
#if defined(__SANITIZE_ADDRESS__)
#define TOCK_FUZZ_SANITIZED_STACK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TOCK_FUZZ_SANITIZED_STACK 1
#endif
#endif
#ifdef TOCK_FUZZ_SANITIZED_STACK
inline constexpr size_t kParserStackBytes = 2 << 20;
#else
inline constexpr size_t kParserStackBytes = 256 << 10;
#endif

// Messages of parsers of outside input quote only a bounded part of it (the wire edge bounds
// replies too, but a parser that echoes everything is a finding).
inline constexpr size_t kMaxMessageBytes = 1024;

}  // namespace tock::fuzz

#define FUZZ_CHECK(cond, detail)                      \
  do {                                                \
    if (!(cond)) ::tock::fuzz::Fail(#cond, (detail)); \
  } while (0)
