#include "lib/common/lazy_library.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace tock {

absl::Status LazyLibrary::Load() {
  std::call_once(once_, [this] {
    // RTLD_LOCAL: its symbols serve the stubs through this handle only, never the stubs'
    // own names (which would call themselves).
    handle_ = dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* error = dlerror();
      error_ = error != nullptr ? error : "unknown error";
    }
  });
  if (handle_ != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      soname_, " cannot be loaded (", error_, "); install it: apt-get install ", package_));
}

void* LazyLibrary::Symbol(const char* name) {
  if (absl::Status s = Load(); !s.ok()) {
    std::fprintf(stderr, "fatal: %s\n", std::string(s.message()).c_str());
    std::abort();
  }
  void* symbol = dlsym(handle_, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "fatal: %s has no symbol %s\n", soname_, name);
    std::abort();
  }
  return symbol;
}

}  // namespace tock
