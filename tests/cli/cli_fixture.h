// The fixture of the CLI black-box tests: a real tock-server on a free port with its database
// in a temporary directory, and the built `tock` binary run against it as a separate process.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/fixtures.h"
#include "tests/support/process.h"

namespace tock::testing {

using nlohmann::json;

// SPEC §1.1: every retention error starts with exactly this sentence.
inline constexpr char kRetentionPrefix[] = "error: A valid retention period is not set on request.";

// DESIGN.md "CLI contract": exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotFound = 3;
inline constexpr int kExitUnavailable = 4;
inline constexpr int kExitConflict = 5;

// "$ tock a b c" with the result, for failure messages.
inline std::string Describe(const std::vector<std::string>& args, const ProcessResult& r) {
  std::string line = "$ tock";
  for (const auto& a : args) line += " " + (a.size() > 60 ? a.substr(0, 57) + "..." : a);
  return line + "\n[exit " + std::to_string(r.exit_code) + "]\nstdout: " + r.out +
         "\nstderr: " + r.err;
}

// One JSON document per non-empty line; a line that does not parse fails the test.
inline std::vector<json> ParseJsonLines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) {
      ADD_FAILURE() << "empty line in JSON lines output:\n" << text;
      continue;
    }
    json parsed = json::parse(line, nullptr, false);
    if (parsed.is_discarded()) {
      ADD_FAILURE() << "not JSON: " << line;
      continue;
    }
    out.push_back(std::move(parsed));
  }
  return out;
}

// A field of a parsed document by JSON pointer ("/namespaceInfo/name"), or null when absent,
// so a missing field fails an equality check instead of throwing.
inline json At(const json& doc, const std::string& pointer) {
  json::json_pointer p(pointer);
  return doc.contains(p) ? doc.at(p) : json();
}

// Nanoseconds since the epoch of an RFC 3339 UTC timestamp as protobuf's JSON writes it
// ("2026-11-22T13:16:28.587772215Z", 0 to 9 fractional digits); -1 when it is not one.
inline int64_t TimestampNanos(const json& value) {
  if (!value.is_string()) return -1;
  const std::string text = value.get<std::string>();
  std::tm tm{};
  int consumed = 0;
  if (sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
             &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return -1;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  int64_t nanos = 0;
  size_t i = static_cast<size_t>(consumed);
  if (i < text.size() && text[i] == '.') {
    int64_t scale = 100000000;
    for (++i; i < text.size() && isdigit(static_cast<unsigned char>(text[i])); ++i, scale /= 10) {
      nanos += (text[i] - '0') * scale;
    }
  }
  if (i + 1 != text.size() || text[i] != 'Z') return -1;
  return static_cast<int64_t>(timegm(&tm)) * 1000000000 + nanos;
}

class CliTest : public ::testing::Test {
 protected:
  // Starts tock-server with `args` plus `--db-file <tmp>/tock.db` (and `--port 0`).
  void StartServer(std::vector<std::string> args = {}) {
    args.push_back("--db-file");
    args.push_back(dir_.File("tock.db"));
    server_ = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
    ASSERT_TRUE(server_->Start(args)) << server_->error();
  }

  // Starts a server configured with the seed's two clusters a (current, master) and b.
  void StartTwoClusterServer() {
    StartServer({"--config", dir_.Write("two-clusters.yaml", kTwoClusterConfigYaml)});
  }

  // `tock --address <server> args...` with stdin a pipe holding `input`.
  ProcessResult Tock(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", server_->address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, {}, input, std::chrono::seconds(30));
  }

  // `tock ... -o json`: must exit 0 and print one JSON document.
  json TockJson(std::vector<std::string> args) {
    args.push_back("-o");
    args.push_back("json");
    ProcessResult r = Tock(args);
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(args, r);
    json parsed = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << Describe(args, r);
    return parsed.is_discarded() ? json() : parsed;
  }

  // `tock ... -o jsonl`: must exit 0 and print one JSON object per line.
  std::vector<json> TockJsonLines(std::vector<std::string> args) {
    args.push_back("-o");
    args.push_back("jsonl");
    ProcessResult r = Tock(args);
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(args, r);
    std::vector<json> lines = ParseJsonLines(r.out);
    for (const auto& line : lines) EXPECT_TRUE(line.is_object()) << line.dump();
    return lines;
  }

  // The command must exit with `code`, print nothing on stdout and exactly
  // "error: <message>\n" on stderr.
  void ExpectError(const std::vector<std::string>& args, int code, const std::string& message) {
    ProcessResult r = Tock(args);
    EXPECT_EQ(r.exit_code, code) << Describe(args, r);
    EXPECT_EQ(r.err, "error: " + message + "\n") << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
  }

  // As ExpectError, for messages of which only the start is exact (retention).
  void ExpectErrorStartingWith(const std::vector<std::string>& args, int code,
                               const std::string& prefix) {
    ProcessResult r = Tock(args);
    EXPECT_EQ(r.exit_code, code) << Describe(args, r);
    EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << "expected stderr to start with: " << prefix << "\n"
                                           << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
  }

  void Register(const std::vector<std::string>& args) {
    std::vector<std::string> full = {"namespace", "register"};
    full.insert(full.end(), args.begin(), args.end());
    ProcessResult r = Tock(full);
    ASSERT_EQ(r.exit_code, kExitOk) << Describe(full, r);
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

}  // namespace tock::testing
