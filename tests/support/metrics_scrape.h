// Reading a tock-server's /metrics from a test: where the banner says it is, and the sum of a
// family's series in the text exposition.
#pragma once

#include <regex>
#include <sstream>
#include <string>

#include "tests/support/process.h"

namespace tock::testing {

// The URL the banner gives for /metrics ("  metrics:    http://IP:PORT/metrics"); "" when
// the server has no metrics endpoint.
inline std::string MetricsUrl(const ServerProcess& server) {
  std::smatch match;
  const std::string& banner = server.banner();
  if (!std::regex_search(banner, match, std::regex(R"(\n  metrics:    (http://\S+/metrics)\n)"))) {
    return "";
  }
  return match[1];
}

// The sum of every series of family `name` whose labels contain `label` ("" for all).
inline double FamilySum(const std::string& exposition, const std::string& name,
                        const std::string& label = "") {
  double sum = 0;
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "{", 0) != 0 && line.rfind(name + " ", 0) != 0) continue;
    if (!label.empty() && line.find(label) == std::string::npos) continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

}  // namespace tock::testing
