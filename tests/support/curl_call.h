// One HTTP call with libcurl, as curl users make them (the timer API's and Temporal's HTTP
// API's black-box tests): a JSON body, extra headers, a 30 s limit.
#pragma once

#include <curl/curl.h>

#include <string>
#include <vector>

namespace tock::testing {

struct HttpAnswer {
  long status = 0;
  std::string body;
  std::string content_type;
  std::string error;  // curl's, when the call failed
};

inline size_t AppendToString(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// `method` `url`; `body` is sent (as application/json) unless the method is GET.
inline HttpAnswer CurlCall(const std::string& method, const std::string& url,
                           const std::string& body, const std::vector<std::string>& headers = {}) {
  HttpAnswer answer;
  CURL* curl = curl_easy_init();
  curl_slist* list = curl_slist_append(nullptr, "Content-Type: application/json");
  for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method != "GET") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendToString);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30'000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl);
  if (rc != CURLE_OK) answer.error = curl_easy_strerror(rc);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  char* type = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type);
  if (type != nullptr) answer.content_type = type;
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  return answer;
}

}  // namespace tock::testing
