#include "lib/archival/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tock::archival {
namespace {

std::string Hex(const unsigned char* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Encode(std::string_view s, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 15]);
    }
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof digest);
}

std::string UriEncode(std::string_view s) { return Encode(s, false); }
std::string UriEncodePath(std::string_view s) { return Encode(s, true); }

std::string AmzDate(absl::Time t) {
  return absl::FormatTime("%Y%m%dT%H%M%SZ", t, absl::UTCTimeZone());
}

std::string SignV4(const SigV4Request& request, const AwsCredentials& credentials,
                   const std::string& region, const std::string& service, absl::Time now) {
  std::vector<std::pair<std::string, std::string>> query;
  for (const auto& [k, v] : request.query) query.emplace_back(UriEncode(k), UriEncode(v));
  std::sort(query.begin(), query.end());
  std::string canonical_query;
  for (const auto& [k, v] : query) {
    if (!canonical_query.empty()) canonical_query += '&';
    absl::StrAppend(&canonical_query, k, "=", v);
  }
  std::string canonical_headers;
  std::vector<std::string> names;
  for (const auto& [name, value] : request.headers) {  // std::map: sorted by name
    absl::StrAppend(&canonical_headers, name, ":", absl::StripAsciiWhitespace(value), "\n");
    names.push_back(name);
  }
  const std::string signed_headers = absl::StrJoin(names, ";");
  const std::string canonical_request =
      absl::StrCat(request.method, "\n", request.encoded_path, "\n", canonical_query, "\n",
                   canonical_headers, "\n", signed_headers, "\n", request.payload_sha256_hex);
  const std::string day = absl::FormatTime("%Y%m%d", now, absl::UTCTimeZone());
  const std::string scope = absl::StrCat(day, "/", region, "/", service, "/aws4_request");
  const std::string string_to_sign = absl::StrCat("AWS4-HMAC-SHA256\n", AmzDate(now), "\n", scope,
                                                  "\n", Sha256Hex(canonical_request));
  std::string key = Hmac(absl::StrCat("AWS4", credentials.secret_access_key), day);
  key = Hmac(key, region);
  key = Hmac(key, service);
  key = Hmac(key, "aws4_request");
  const std::string mac = Hmac(key, string_to_sign);
  return absl::StrCat("AWS4-HMAC-SHA256 Credential=", credentials.access_key_id, "/", scope,
                      ", SignedHeaders=", signed_headers, ", Signature=",
                      Hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size()));
}

}  // namespace tock::archival
