#pragma once

namespace tock {

// Tock's version: printed by tock-server's banner, answered by GetSystemInfo and
// DescribeCluster, and sent by the CLI as its client-version header. One constant, so the
// three never disagree.
inline constexpr char kTockVersion[] = "0.1.0";

}  // namespace tock
