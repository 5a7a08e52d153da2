// The S3 stack of tests/s3 (s3rver behind a SigV4-verifying proxy, node) as a test fixture:
// started on free loopback ports with objects in a directory, stopped and started again on
// the same ports to play an outage, killed at destruction.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace tock::testing {

class S3Stack {
 public:
  // `source_dir`: the repository root (tests/s3 with its node_modules must be there).
  S3Stack(std::string source_dir, std::string data_dir, std::vector<std::string> buckets);
  ~S3Stack() { Stop(); }

  // False with the reason in error(): node or tests/s3/node_modules missing, or no start.
  bool Start();
  void Stop();  // SIGTERM; objects stay in the data directory
  const std::string& endpoint() const { return endpoint_; }
  const std::string& error() const { return error_; }
  std::string stderr_text() const { return process_ ? process_->stderr_text() : ""; }

  // tests/s3/read_objects.mjs: every object under `prefix`, read with @aws-sdk/client-s3.
  ProcessResult ReadObjects(const std::string& bucket, const std::string& prefix) const;
  // tests/s3/put_object.mjs: uploads `file` with @aws-sdk/client-s3.
  ProcessResult PutObject(const std::string& bucket, const std::string& key,
                          const std::string& file) const;

 private:
  std::string source_dir_;
  std::string data_dir_;
  std::vector<std::string> buckets_;
  std::unique_ptr<ServerProcess> process_;
  std::string endpoint_;
  std::string direct_port_;
  std::string proxy_port_;
  std::string error_;
};

}  // namespace tock::testing
