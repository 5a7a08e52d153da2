// The replay driver: runs a fuzz target without libFuzzer, so that the normal build checks
// every target on every test run (ctest fuzz_replay_<target>).
//
//   fuzz_<target> [--mutations N] [--max-len BYTES] [--seed S] PATH...
//
// Each PATH is a file or a directory (every regular file in it, in name order). Every input
// is run through LLVMFuzzerTestOneInput, then N inputs made from them by deterministic
// pseudo-random mutations (flips, inserts, deletions, repeats, splices of two inputs; the
// same N inputs on every run for a given seed). A crash leaves the input that caused it in
// ./fuzz-replay-crash-<pid> (written from the signal handler) and kills the process with the
// signal, so ctest reports the test as failed; rerun the binary on that file to reproduce.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input being run, for the crash handler.
const uint8_t* g_current = nullptr;
size_t g_current_size = 0;

void OnCrash(int sig) {
  char name[64];
  std::snprintf(name, sizeof name, "fuzz-replay-crash-%d", static_cast<int>(getpid()));
  const int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    size_t done = 0;
    while (g_current != nullptr && done < g_current_size) {
      const ssize_t n = write(fd, g_current + done, g_current_size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
  }
  static const char kMessage[] =
      "fuzz replay: crashed; the input is in ./fuzz-replay-crash-<pid>\n";
  (void)!write(2, kMessage, sizeof kMessage - 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

// splitmix64: small, fast, and the same sequence everywhere.
struct Random {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
};

// Bytes that matter to the parsers under test (quotes, brackets, separators, escapes).
constexpr char kInteresting[] = "()[]{}<>'\"\\,;:=!&#%@*?/-_. \t\n\r\x00\x7f\xff\xc3\xa9";

std::vector<uint8_t> Mutate(const std::vector<std::vector<uint8_t>>& corpus, Random& random,
                            size_t max_len) {
  std::vector<uint8_t> out = corpus[random.Below(corpus.size())];
  const int steps = 1 + static_cast<int>(random.Below(4));
  for (int step = 0; step < steps; ++step) {
    const size_t at = random.Below(out.size() + 1);
    switch (random.Below(8)) {
      case 0:  // flip a bit
        if (!out.empty()) out[random.Below(out.size())] ^= uint8_t(1u << random.Below(8));
        break;
      case 1:  // a random byte in place
        if (!out.empty()) out[random.Below(out.size())] = static_cast<uint8_t>(random.Next());
        break;
      case 2:  // insert an interesting byte
        out.insert(out.begin() + at,
                   static_cast<uint8_t>(kInteresting[random.Below(sizeof kInteresting - 1)]));
        break;
      case 3: {  // delete a range
        const size_t n = std::min(out.size() - std::min(at, out.size()), 1 + random.Below(8));
        out.erase(out.begin() + at, out.begin() + at + n);
        break;
      }
      case 4: {  // repeat a chunk many times (deep nesting, long runs)
        if (out.empty()) break;
        const size_t from = random.Below(out.size());
        const size_t n = std::min(out.size() - from, 1 + random.Below(4));
        const std::vector<uint8_t> chunk(out.begin() + from, out.begin() + from + n);
        const size_t times = 1 + random.Below(random.Below(2) ? 8 : 300);
        for (size_t i = 0; i < times && out.size() + n <= max_len; ++i) {
          out.insert(out.begin() + from, chunk.begin(), chunk.end());
        }
        break;
      }
      case 5: {  // splice in part of another input
        const std::vector<uint8_t>& other = corpus[random.Below(corpus.size())];
        if (other.empty()) break;
        const size_t from = random.Below(other.size());
        const size_t n = 1 + random.Below(other.size() - from);
        out.insert(out.begin() + at, other.begin() + from, other.begin() + from + n);
        break;
      }
      case 6:  // truncate
        out.resize(at);
        break;
      default: {  // an interesting small or boundary number, as a byte
        static const uint8_t kValues[] = {0, 1, 2, 9, 10, 31, 32, 59, 60, 99, 100, 127, 128, 255};
        if (!out.empty()) out[random.Below(out.size())] = kValues[random.Below(sizeof kValues)];
        break;
      }
    }
  }
  if (out.size() > max_len) out.resize(max_len);
  return out;
}

std::vector<uint8_t> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Run(const std::vector<uint8_t>& input) {
  g_current = input.data();
  g_current_size = input.size();
  LLVMFuzzerTestOneInput(input.data(), input.size());
  g_current = nullptr;
  g_current_size = 0;
}

int Usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--mutations N] [--max-len BYTES] [--seed S] PATH...\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mutations = 2000;
  size_t max_len = 4096;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--mutations" || arg == "--max-len" || arg == "--seed") && i + 1 < argc) {
      const unsigned long long value = std::strtoull(argv[++i], nullptr, 10);
      if (arg == "--mutations")
        mutations = value;
      else if (arg == "--max-len")
        max_len = value;
      else
        seed = value;
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage(argv[0]);
    } else {
      paths.emplace_back(arg);
    }
  }
  if (paths.empty()) return Usage(argv[0]);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) signal(sig, OnCrash);

  std::vector<std::filesystem::path> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(path, ec)) {
      files.push_back(path);
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", path.c_str());
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "no input files\n");
    return 2;
  }

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<uint8_t>> corpus;
  for (const auto& file : files) {
    corpus.push_back(ReadFile(file));
    Run(corpus.back());
  }
  Random random{seed};
  for (size_t i = 0; i < mutations; ++i) Run(Mutate(corpus, random, max_len));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu inputs and %zu mutations run in %.2f s\n", corpus.size(), mutations, seconds);
  return 0;
}
