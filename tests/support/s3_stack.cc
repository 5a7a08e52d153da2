#include "tests/support/s3_stack.h"

#include <filesystem>
#include <regex>

namespace tock::testing {

S3Stack::S3Stack(std::string source_dir, std::string data_dir, std::vector<std::string> buckets)
    : source_dir_(std::move(source_dir)), data_dir_(std::move(data_dir)), buckets_(std::move(buckets)) {}

bool S3Stack::Start() {
  const std::string script = source_dir_ + "/tests/s3/s3_stack.mjs";
  if (!std::filesystem::exists(source_dir_ + "/tests/s3/node_modules/s3rver")) {
    error_ = "tests/s3/node_modules is missing: run scripts/setup.sh (npm install in tests/s3)";
    return false;
  }
  // The first line is {"endpoint":"http://127.0.0.1:<proxy>","direct":"http://127.0.0.1:<port>",...}.
  process_ = std::make_unique<ServerProcess>(
      "/usr/bin/env", "\"endpoint\":\"(http://127\\.0\\.0\\.1:[0-9]+)\",\"direct\":\"http://127\\.0\\.0\\.1:([0-9]+)\"");
  // s3rver's list continuation tokens use DES, in OpenSSL 3's legacy provider.
  std::vector<std::string> args = {"node", "--openssl-legacy-provider", script, "--dir", data_dir_};
  for (const std::string& b : buckets_) {
    args.push_back("--bucket");
    args.push_back(b);
  }
  if (!proxy_port_.empty()) {  // again on the same ports: clients keep their endpoint
    args.insert(args.end(), {"--proxy-port", proxy_port_, "--direct-port", direct_port_});
  }
  if (!process_->Start(args)) {
    error_ = process_->error();
    return false;
  }
  endpoint_ = process_->address();
  std::smatch m;
  const std::string& banner = process_->banner();
  if (std::regex_search(banner, m, std::regex("\"direct\":\"http://127\\.0\\.0\\.1:([0-9]+)\""))) {
    direct_port_ = m[1];
  }
  proxy_port_ = endpoint_.substr(endpoint_.rfind(':') + 1);
  return true;
}

void S3Stack::Stop() {
  if (process_ && process_->running()) process_->Stop();
}

ProcessResult S3Stack::ReadObjects(const std::string& bucket, const std::string& prefix) const {
  return RunProcess({"/usr/bin/env", "node", source_dir_ + "/tests/s3/read_objects.mjs",
                     "--endpoint", endpoint_, "--bucket", bucket, "--prefix", prefix},
                    {{"NODE_NO_WARNINGS", "1"}});
}

ProcessResult S3Stack::PutObject(const std::string& bucket, const std::string& key,
                                 const std::string& file) const {
  return RunProcess({"/usr/bin/env", "node", source_dir_ + "/tests/s3/put_object.mjs",
                     "--endpoint", endpoint_, "--bucket", bucket, "--key", key, "--file", file},
                    {{"NODE_NO_WARNINGS", "1"}});
}

}  // namespace tock::testing
