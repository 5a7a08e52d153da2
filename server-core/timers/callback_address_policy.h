// Which addresses timer callbacks may reach (review P2-2). Anyone who may create a timer
// chooses its callback URL, and the server POSTs it: without a policy that makes the server a
// way to reach what only it can reach (its own metrics and admin ports, a database, a cloud
// metadata service at 169.254.169.254).
//
// An address is refused when it is in a range that is not the public internet, unless the
// server's config allows it (`timers.callbacks.allow`):
//   loopback     127.0.0.0/8, ::1
//   unspecified  0.0.0.0/8, :: (connecting to 0.0.0.0 reaches this host)
//   private      10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 (shared),
//                fc00::/7 (unique local), fec0::/10 (site-local), 64:ff9b:1::/48
//   link-local   169.254.0.0/16 (cloud metadata services), fe80::/10
//   reserved     192.0.0.0/24, 198.18.0.0/15, 224.0.0.0/3 (multicast and beyond), ff00::/8
// An IPv6 address that carries an IPv4 one (::ffff:a.b.c.d, 64:ff9b::a.b.c.d) is judged by
// the IPv4 address.
//
// `timers.callbacks.allow` entries:
//   10.1.0.0/16, fd00::/8   a range (CIDR): any address in it
//   127.0.0.1, ::1          one address
//   hooks.internal          a host name: a URL naming it may reach whatever it resolves to
//   *.svc.cluster.local     the names under a domain (not the domain itself)
// A host name is trusted as the operator's: the address check is what stops a name someone
// else controls (DNS rebinding included), because it is made on the address each connection
// is opened to, after resolution (HttpCallbackSender). A name is matched only in a URL whose
// authority is plainly host[:port] (no user info), so that no two parsers can disagree on it.
//
// Thread safety: immutable after Parse; any thread.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tock::server::timers {

// The config key of the allow-list, named in every refusal.
inline constexpr char kCallbackAllowKey[] = "timers.callbacks.allow";

// An IPv4 or IPv6 address (IPv4 in the first 4 bytes).
struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};

  // A dotted IPv4 address (also the shorter and numeric forms the C library and curl accept,
  // such as 127.1 or 2130706433) or an IPv6 one (without brackets); nullopt otherwise.
  static std::optional<IpAddress> Parse(std::string_view text);
  static std::optional<IpAddress> FromSockaddr(const sockaddr* address);
  std::string ToString() const;
};

// The restricted range `address` is in ("loopback", "private", "link-local", "unspecified",
// "reserved"), or nullptr for a public address.
const char* RestrictedRange(const IpAddress& address);

// The host of an http(s) URL, lower case, without brackets around an IPv6 address, without a
// trailing dot; "" when the URL has none. `plain`: the authority is host[:port] only (no user
// info or anything else a parser might read differently).
std::string CallbackUrlHost(std::string_view url, bool* plain = nullptr);

class CallbackAddressPolicy {
 public:
  // Refuses every restricted address (no entry).
  CallbackAddressPolicy() = default;

  // INVALID_ARGUMENT naming the entry and the allowed forms when one is not a range, an
  // address or a host pattern.
  static absl::StatusOr<CallbackAddressPolicy> Parse(const std::vector<std::string>& allow);

  // The restricted range (RestrictedRange) that keeps a callback to `url` from connecting to
  // `address`, or nullptr when it may.
  const char* RefusedRange(std::string_view url, const IpAddress& address) const;

  // The last_error of a callback not sent because every address of its host was refused:
  // the range, not the address (the creator of a timer need not learn what internal names
  // resolve to), and the config key that allows it.
  static std::string NotSentError(const char* range);

  // At create and update: INVALID_ARGUMENT (naming `field`, the range and the config key)
  // when the URL's host is an address, or a name of this host (localhost), that is refused.
  // Other names are checked when the callback connects, after they are resolved.
  absl::Status CheckUrl(std::string_view url, const std::string& field) const;

 private:
  struct Range {
    IpAddress base;
    int bits = 0;
  };
  bool AllowsName(std::string_view url) const;
  bool InAllowedRange(const IpAddress& address) const;

  std::vector<Range> ranges_;
  std::vector<std::string> names_;    // exact host names, lower case
  std::vector<std::string> domains_;  // ".example.com" for *.example.com
};

}  // namespace tock::server::timers
