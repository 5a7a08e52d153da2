#include "server-core/timers/callback_address_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tock::server::timers {
namespace {

// How much of a host or an entry a message quotes (they are short but not bounded).
constexpr size_t kQuotedBytes = 100;

// This Abseil's string_view is its own type, not std's.
absl::string_view A(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string Quoted(std::string_view text) {
  return absl::StrCat("\"", A(text.substr(0, kQuotedBytes)),
                      text.size() > kQuotedBytes ? "..." : "", "\"");
}

IpAddress V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  IpAddress ip;
  ip.bytes[0] = a;
  ip.bytes[1] = b;
  ip.bytes[2] = c;
  ip.bytes[3] = d;
  return ip;
}

// The IPv4 address an IPv6 one carries (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96,
// the deprecated IPv4-compatible ::/96 but :: and ::1), or the address itself.
IpAddress Embedded(const IpAddress& ip) {
  if (!ip.v6) return ip;
  const auto& b = ip.bytes;
  const bool zero80 = std::all_of(b.begin(), b.begin() + 10, [](uint8_t x) { return x == 0; });
  const bool mapped = zero80 && b[10] == 0xff && b[11] == 0xff;
  static constexpr uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  const bool nat64 = std::memcmp(b.data(), kNat64, 12) == 0;
  const bool compatible = zero80 && b[10] == 0 && b[11] == 0 &&
                          (b[12] | b[13] | b[14]) != 0;  // not :: or ::1
  if (!mapped && !nat64 && !compatible) return ip;
  return V4(b[12], b[13], b[14], b[15]);
}

const char* RestrictedV4(const std::array<uint8_t, 16>& b) {
  if (b[0] == 0) return "unspecified";
  if (b[0] == 127) return "loopback";
  if (b[0] == 10 || (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168) ||
      (b[0] == 100 && (b[1] & 0xc0) == 64)) {
    return "private";
  }
  if (b[0] == 169 && b[1] == 254) return "link-local";
  if ((b[0] == 192 && b[1] == 0 && b[2] == 0) || (b[0] == 198 && (b[1] & 0xfe) == 18) ||
      b[0] >= 224) {
    return "reserved";
  }
  return nullptr;
}

const char* RestrictedV6(const std::array<uint8_t, 16>& b) {
  const bool zero120 = std::all_of(b.begin(), b.begin() + 15, [](uint8_t x) { return x == 0; });
  if (zero120 && b[15] == 0) return "unspecified";
  if (zero120 && b[15] == 1) return "loopback";
  if ((b[0] & 0xfe) == 0xfc) return "private";                    // fc00::/7
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local";  // fe80::/10
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "private";     // fec0::/10
  if (b[0] == 0xff) return "reserved";                             // multicast
  static constexpr uint8_t kLocalNat64[6] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};
  if (std::memcmp(b.data(), kLocalNat64, 6) == 0) return "private";  // 64:ff9b:1::/48
  return nullptr;
}

bool PrefixMatches(const IpAddress& a, const IpAddress& base, int bits) {
  if (a.v6 != base.v6) return false;
  const int whole = bits / 8;
  if (std::memcmp(a.bytes.data(), base.bytes.data(), static_cast<size_t>(whole)) != 0) return false;
  const int rest = bits % 8;
  if (rest == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (a.bytes[whole] & mask) == (base.bytes[whole] & mask);
}

bool IsHostName(std::string_view name) {
  if (name.empty() || name.size() > 253 || name.front() == '.' || name.front() == '-') {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

std::string Normalized(std::string_view host) {
  std::string out = absl::AsciiStrToLower(A(host));
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

// "a loopback", "an unspecified".
std::string WithArticle(const char* range) {
  const char first = range[0];
  const bool vowel = first == 'a' || first == 'e' || first == 'i' || first == 'o' || first == 'u';
  return absl::StrCat(vowel ? "an " : "a ", range);
}

bool IsLocalhostName(std::string_view host) {
  return host == "localhost" || absl::EndsWith(A(host), ".localhost");
}

absl::Status BadEntry(std::string_view entry, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      kCallbackAllowKey, ": ", Quoted(entry), " ", A(why),
      "; each entry is a range (10.0.0.0/8, fd00::/8), an address (127.0.0.1, ::1), a host "
      "name (hooks.internal) or the names under a domain (*.svc.cluster.local)"));
}

}  // namespace

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  std::string s(text);
  IpAddress ip;
  if (s.find(':') != std::string::npos) {
    if (const size_t zone = s.find('%'); zone != std::string::npos) s.resize(zone);
    in6_addr a6{};
    if (inet_pton(AF_INET6, s.c_str(), &a6) != 1) return std::nullopt;
    ip.v6 = true;
    std::memcpy(ip.bytes.data(), &a6, 16);
    return ip;
  }
  // inet_aton, not inet_pton: it reads 127.1, 0x7f.0.0.1 and 2130706433 as the resolver and
  // curl do, so no spelling of a refused address passes for a name.
  in_addr a4{};
  if (inet_aton(s.c_str(), &a4) == 0) return std::nullopt;
  std::memcpy(ip.bytes.data(), &a4, 4);
  return ip;
}

std::optional<IpAddress> IpAddress::FromSockaddr(const sockaddr* address) {
  if (address == nullptr) return std::nullopt;
  IpAddress ip;
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    std::memcpy(ip.bytes.data(), &in->sin_addr, 4);
    return ip;
  }
  if (address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    ip.v6 = true;
    std::memcpy(ip.bytes.data(), &in6->sin6_addr, 16);
    return ip;
  }
  return std::nullopt;
}

std::string IpAddress::ToString() const {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), text, sizeof(text));
  return text;
}

const char* RestrictedRange(const IpAddress& address) {
  const IpAddress ip = Embedded(address);
  return ip.v6 ? RestrictedV6(ip.bytes) : RestrictedV4(ip.bytes);
}

std::string CallbackUrlHost(std::string_view url, bool* plain) {
  if (plain != nullptr) *plain = false;
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return "";
  std::string_view authority = url.substr(scheme + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  const bool is_plain = authority.find_first_of("@\\%") == std::string_view::npos;
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  std::string_view host;
  if (!authority.empty() && authority.front() == '[') {
    const size_t end = authority.find(']');
    if (end == std::string_view::npos) return "";
    host = authority.substr(1, end - 1);
  } else {
    host = authority.substr(0, authority.find(':'));
  }
  if (plain != nullptr) *plain = is_plain;
  return Normalized(host);
}

absl::StatusOr<CallbackAddressPolicy> CallbackAddressPolicy::Parse(
    const std::vector<std::string>& allow) {
  CallbackAddressPolicy policy;
  for (const std::string& entry : allow) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(entry);
    const std::string_view e(stripped.data(), stripped.size());
    if (e.empty()) return BadEntry(entry, "is empty");
    if (const size_t slash = e.find('/'); slash != std::string_view::npos) {
      std::optional<IpAddress> base = IpAddress::Parse(e.substr(0, slash));
      int bits = -1;
      if (!base.has_value() || !absl::SimpleAtoi(A(e.substr(slash + 1)), &bits)) {
        return BadEntry(entry, "is not a range");
      }
      if (bits < 0 || bits > (base->v6 ? 128 : 32)) {
        return BadEntry(entry, absl::StrCat("has a prefix length out of 0..", base->v6 ? 128 : 32));
      }
      policy.ranges_.push_back({*base, bits});
    } else if (std::optional<IpAddress> ip = IpAddress::Parse(e); ip.has_value()) {
      policy.ranges_.push_back({*ip, ip->v6 ? 128 : 32});
    } else if (absl::StartsWith(A(e), "*.") && IsHostName(e.substr(2))) {
      policy.domains_.push_back(absl::StrCat(".", Normalized(e.substr(2))));
    } else if (IsHostName(e)) {
      policy.names_.push_back(Normalized(e));
    } else {
      return BadEntry(entry, "is not understood");
    }
  }
  // A range of IPv4-mapped IPv6 addresses is the IPv4 range: addresses are judged as IPv4.
  for (Range& r : policy.ranges_) {
    const IpAddress v4 = Embedded(r.base);
    if (r.base.v6 && !v4.v6 && r.bits >= 96) r = {v4, r.bits - 96};
  }
  return policy;
}

bool CallbackAddressPolicy::InAllowedRange(const IpAddress& address) const {
  const IpAddress ip = Embedded(address);
  return std::any_of(ranges_.begin(), ranges_.end(),
                     [&](const Range& r) { return PrefixMatches(ip, r.base, r.bits); });
}

bool CallbackAddressPolicy::AllowsName(std::string_view url) const {
  if (names_.empty() && domains_.empty()) return false;
  bool plain = false;
  const std::string host = CallbackUrlHost(url, &plain);
  if (!plain || host.empty()) return false;
  if (std::find(names_.begin(), names_.end(), host) != names_.end()) return true;
  return std::any_of(domains_.begin(), domains_.end(),
                     [&](const std::string& d) { return absl::EndsWith(host, d); });
}

const char* CallbackAddressPolicy::RefusedRange(std::string_view url,
                                                const IpAddress& address) const {
  const char* range = RestrictedRange(address);
  if (range == nullptr || InAllowedRange(address) || AllowsName(url)) return nullptr;
  return range;
}

std::string CallbackAddressPolicy::NotSentError(const char* range) {
  return absl::StrCat("callback not sent: its host resolves to ", WithArticle(range),
                      " address, which timer callbacks may reach only if the server's config "
                      "allows it in ",
                      kCallbackAllowKey, " (no retry)");
}

absl::Status CallbackAddressPolicy::CheckUrl(std::string_view url, const std::string& field) const {
  const std::string host = CallbackUrlHost(url);
  std::optional<IpAddress> address = IpAddress::Parse(host);
  // A name of this host is known without resolving it (RFC 6761: localhost is loopback).
  if (!address.has_value() && IsLocalhostName(host)) address = V4(127, 0, 0, 1);
  if (!address.has_value()) return absl::OkStatus();  // a name: checked once resolved
  const char* range = RefusedRange(url, *address);
  if (range == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, "'s host ", Quoted(host), " is ", WithArticle(range),
      " address; timer callbacks may reach it only if the server's config allows it in ",
      kCallbackAllowKey, " (a range such as 10.0.0.0/8, an address, or a host name)"));
}

}  // namespace tock::server::timers
