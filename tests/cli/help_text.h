// Reading CLI11 help texts in the tests that hold the docs and the man pages against the
// binaries (docs_test.cc, man_test.cc), so that both read the option lines the same way.
#pragma once

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tock::testing {

// Long flags ("--db-file") in a CLI11 help text, in the order listed: the option lines only
// (they start "  -"), so a flag named in a description is not counted.
inline std::vector<std::string> LongFlags(const std::string& help) {
  std::vector<std::string> out;
  std::regex flag("(^|[ ,])(--[a-z][a-z0-9-]*)");
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  -", 0) != 0) continue;
    std::string spec = line.substr(0, line.find("  ", 2));
    for (std::sregex_iterator it(spec.begin(), spec.end(), flag), end; it != end; ++it) {
      out.push_back((*it)[2]);
    }
  }
  return out;
}

}  // namespace tock::testing
