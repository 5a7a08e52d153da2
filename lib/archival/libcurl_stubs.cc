// The libcurl functions the S3 store (and its tests) call, defined here so that the binaries
// need no libcurl at start-up: each resolves the real function on its first call
// (libcurl_stubs.h). The prototypes are curl.h's own. curl_easy_setopt and
// curl_easy_getinfo are variadic with exactly one argument after the option: setopt's type
// is told by the option's number (CURLOPTTYPE_*), getinfo's is always a pointer, so each is
// read as its own type and passed on as such.
#include "lib/archival/libcurl_stubs.h"

#include <curl/curl.h>

#include <cstdarg>

namespace tock::archival {

LazyLibrary& Libcurl() {
  static LazyLibrary library("libcurl.so.4", "libcurl4");
  return library;
}

}  // namespace tock::archival

#define TOCK_LIBCURL_REAL(name) TOCK_LAZY_REAL(tock::archival::Libcurl(), name)

extern "C" {

CURLcode curl_global_init(long flags) {
  TOCK_LIBCURL_REAL(curl_global_init);
  return real(flags);
}
CURL* curl_easy_init(void) {
  TOCK_LIBCURL_REAL(curl_easy_init);
  return real();
}
CURLcode curl_easy_perform(CURL* curl) {
  TOCK_LIBCURL_REAL(curl_easy_perform);
  return real(curl);
}
void curl_easy_reset(CURL* curl) {
  TOCK_LIBCURL_REAL(curl_easy_reset);
  real(curl);
}
void curl_easy_cleanup(CURL* curl) {
  TOCK_LIBCURL_REAL(curl_easy_cleanup);
  real(curl);
}
const char* curl_easy_strerror(CURLcode code) {
  TOCK_LIBCURL_REAL(curl_easy_strerror);
  return real(code);
}
struct curl_slist* curl_slist_append(struct curl_slist* list, const char* data) {
  TOCK_LIBCURL_REAL(curl_slist_append);
  return real(list, data);
}
void curl_slist_free_all(struct curl_slist* list) {
  TOCK_LIBCURL_REAL(curl_slist_free_all);
  real(list);
}

CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  TOCK_LIBCURL_REAL(curl_easy_setopt);
  va_list args;
  va_start(args, option);
  CURLcode code;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    code = real(curl, option, va_arg(args, long));
  } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
    code = real(curl, option, va_arg(args, void*));
  } else if (option < CURLOPTTYPE_OFF_T) {
    using AnyFunction = void (*)();
    code = real(curl, option, va_arg(args, AnyFunction));
  } else if (option < CURLOPTTYPE_BLOB) {
    code = real(curl, option, va_arg(args, curl_off_t));
  } else {
    code = real(curl, option, va_arg(args, void*));  // struct curl_blob*
  }
  va_end(args);
  return code;
}

CURLcode curl_easy_getinfo(CURL* curl, CURLINFO info, ...) {
  TOCK_LIBCURL_REAL(curl_easy_getinfo);
  va_list args;
  va_start(args, info);
  void* out = va_arg(args, void*);
  va_end(args);
  return real(curl, info, out);
}

// The multi interface: the timer service's callbacks (server-core/timers/http_callback_sender).
CURLM* curl_multi_init(void) {
  TOCK_LIBCURL_REAL(curl_multi_init);
  return real();
}
CURLMcode curl_multi_cleanup(CURLM* multi) {
  TOCK_LIBCURL_REAL(curl_multi_cleanup);
  return real(multi);
}
CURLMcode curl_multi_add_handle(CURLM* multi, CURL* curl) {
  TOCK_LIBCURL_REAL(curl_multi_add_handle);
  return real(multi, curl);
}
CURLMcode curl_multi_remove_handle(CURLM* multi, CURL* curl) {
  TOCK_LIBCURL_REAL(curl_multi_remove_handle);
  return real(multi, curl);
}
CURLMcode curl_multi_perform(CURLM* multi, int* running) {
  TOCK_LIBCURL_REAL(curl_multi_perform);
  return real(multi, running);
}
CURLMcode curl_multi_poll(CURLM* multi, struct curl_waitfd extra_fds[], unsigned int extra_nfds,
                          int timeout_ms, int* ret) {
  TOCK_LIBCURL_REAL(curl_multi_poll);
  return real(multi, extra_fds, extra_nfds, timeout_ms, ret);
}
CURLMcode curl_multi_wakeup(CURLM* multi) {
  TOCK_LIBCURL_REAL(curl_multi_wakeup);
  return real(multi);
}
CURLMsg* curl_multi_info_read(CURLM* multi, int* msgs_in_queue) {
  TOCK_LIBCURL_REAL(curl_multi_info_read);
  return real(multi, msgs_in_queue);
}
const char* curl_multi_strerror(CURLMcode code) {
  TOCK_LIBCURL_REAL(curl_multi_strerror);
  return real(code);
}
// Variadic like curl_easy_setopt, read the same way: the option's number tells its type.
CURLMcode curl_multi_setopt(CURLM* multi, CURLMoption option, ...) {
  TOCK_LIBCURL_REAL(curl_multi_setopt);
  va_list args;
  va_start(args, option);
  CURLMcode code;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    code = real(multi, option, va_arg(args, long));
  } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
    code = real(multi, option, va_arg(args, void*));
  } else if (option < CURLOPTTYPE_OFF_T) {
    using AnyFunction = void (*)();
    code = real(multi, option, va_arg(args, AnyFunction));
  } else {
    code = real(multi, option, va_arg(args, curl_off_t));
  }
  va_end(args);
  return code;
}

}  // extern "C"
