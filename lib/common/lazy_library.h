// A shared library opened at its first use rather than by the dynamic loader at every
// process start. `tock` and `tock-server` carry the PostgreSQL client (libpq) and libcurl
// (S3 archives) for commands and configurations most runs never use; as ordinary
// dependencies they and the ~28 libraries they pull in (Kerberos, LDAP, GnuTLS, ...) cost
// every start about 3 ms of loading and relocation. Their entry points are defined by
// forwarding stubs (persistence/postgres/libpq_stubs.cc, archival/libcurl_stubs.cc) that
// resolve the real function here on first call.
//
// Thread safety: safe from any thread.
#pragma once

#include <mutex>
#include <string>

#include "absl/status/status.h"

namespace tock {

class LazyLibrary {
 public:
  // `soname`: the file the dynamic loader finds ("libpq.so.5"); `package`: the Debian
  // package that installs it, named in the error.
  LazyLibrary(const char* soname, const char* package) : soname_(soname), package_(package) {}

  // Opens the library (once). FAILED_PRECONDITION naming the library and its package when
  // it is not installed. Entry points call this first, so that a missing library is an
  // error, not a crash.
  absl::Status Load();

  // The address of `symbol`. A missing library or symbol here is a broken install (Load
  // was checked at the entry point): the process stops with a message naming both.
  void* Symbol(const char* name);

 private:
  const char* const soname_;
  const char* const package_;
  std::once_flag once_;
  void* handle_ = nullptr;
  std::string error_;  // dlerror's text (its buffer is reused by later calls)
};

}  // namespace tock

// Inside the stub of `name` (prototype from the library's own header): `real`, the
// library's function of that name, resolved from `library` (a LazyLibrary) on the first call.
#define TOCK_LAZY_REAL(library, name) \
  static const auto real = reinterpret_cast<decltype(&::name)>((library).Symbol(#name))
