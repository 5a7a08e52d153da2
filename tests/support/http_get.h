// A minimal HTTP/1.0 client for tests (scraping /metrics, querying a Prometheus server's API):
// one connection per request, read until the server closes it, with a time limit. Plain
// sockets, so the tests check the server with a client that shares no code with it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace tock::testing {

struct HttpResult {
  int status = 0;  // 0: no answer (see error)
  std::string content_type;
  std::string body;
  std::string error;
};

// A TCP connection to `ip`:`port` (IPv4), or -1.
inline int ConnectTcp(const std::string& ip, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1 ||
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Percent-encodes everything but unreserved characters (for query strings).
inline std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// `method` `url` ("http://IP:PORT/path?query") with `body` and `request_headers` ("Name: value"
// each; a body is sent with its Content-Length).
inline HttpResult HttpSend(const std::string& method, const std::string& url,
                           const std::string& body, const std::vector<std::string>& request_headers,
                           std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  HttpResult result;
  const std::string prefix = "http://";
  if (url.rfind(prefix, 0) != 0) {
    result.error = "not an http:// URL: " + url;
    return result;
  }
  const size_t slash = url.find('/', prefix.size());
  const std::string host_port = url.substr(prefix.size(), slash - prefix.size());
  const std::string target = slash == std::string::npos ? "/" : url.substr(slash);
  const size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) {
    result.error = "no port in " + url;
    return result;
  }
  const std::string ip = host_port.substr(0, colon);
  const int port = std::stoi(host_port.substr(colon + 1));
  int fd = ConnectTcp(ip, port);
  if (fd < 0) {
    result.error = "cannot connect to " + host_port;
    return result;
  }
  std::string request =
      method + " " + target + " HTTP/1.0\r\nHost: " + host_port + "\r\nAccept: */*\r\n";
  for (const std::string& header : request_headers) request += header + "\r\n";
  if (!body.empty() || method != "GET") {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n" + body;
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    result.error = "cannot send the request";
    return result;
  }
  std::string response;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[16384];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.error = "no complete answer within the time limit";
      break;
    }
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  const size_t end_of_headers = response.find("\r\n\r\n");
  if (end_of_headers == std::string::npos || response.rfind("HTTP/1.", 0) != 0) {
    if (result.error.empty()) result.error = "not an HTTP answer: " + response.substr(0, 200);
    return result;
  }
  result.status = std::stoi(response.substr(9, 3));
  const std::string headers = response.substr(0, end_of_headers);
  std::string lower = headers;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t type = lower.find("\r\ncontent-type:");
  if (type != std::string::npos) {
    size_t begin = type + 15;
    while (begin < headers.size() && headers[begin] == ' ') ++begin;
    result.content_type = headers.substr(begin, headers.find("\r\n", begin) - begin);
  }
  result.body = response.substr(end_of_headers + 4);
  return result;
}

// GET `url` ("http://IP:PORT/path?query").
inline HttpResult HttpGet(const std::string& url,
                          std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  return HttpSend("GET", url, "", {}, timeout);
}

}  // namespace tock::testing
