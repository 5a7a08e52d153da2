// The web console's files (web/index.html, web/assets/**, the libraries' ES modules),
// embedded in the binary by cmake/WebConsole.cmake.
#pragma once

#include <string_view>
#include <vector>

namespace tock::server::console {

struct ConsoleFile {
  std::string_view path;   // under the console's root: "index.html", "assets/app/main.js"
  std::string_view bytes;  // in .rodata, for the life of the process
};

const std::vector<ConsoleFile>& ConsoleFiles();

}  // namespace tock::server::console
