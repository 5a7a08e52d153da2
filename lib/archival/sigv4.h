// AWS Signature Version 4 for S3 requests (what every S3 server checks), computed with
// OpenSSL's SHA-256 and HMAC-SHA256.
//
// The caller gives the request exactly as it will be sent (the path already percent-encoded
// with UriEncodePath, the query parameters raw) and gets the Authorization header value.
// Verified against AWS's published examples in tests/unit/sigv4_test.cc.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace tock::archival {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // "" unless temporary credentials
};

struct SigV4Request {
  std::string method;                                      // "GET", "PUT", ...
  std::string encoded_path;                                // "/bucket/key%3Aa", as sent
  std::vector<std::pair<std::string, std::string>> query;  // raw names and values
  std::map<std::string, std::string> headers;              // lower-case names; all are signed
  std::string payload_sha256_hex;                          // or "UNSIGNED-PAYLOAD"
};

std::string Sha256Hex(std::string_view data);

// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters stay, the rest is %XX;
// UriEncodePath keeps '/'.
std::string UriEncode(std::string_view s);
std::string UriEncodePath(std::string_view s);

// "20130524T000000Z", the x-amz-date header's format.
std::string AmzDate(absl::Time t);

// The Authorization header value for `request` signed at `now` (which must equal the
// request's x-amz-date header) in `region` for `service`.
std::string SignV4(const SigV4Request& request, const AwsCredentials& credentials,
                   const std::string& region, const std::string& service, absl::Time now);

}  // namespace tock::archival
