// The largest gRPC messages tock sends and accepts, in one place for every channel and the
// server.
#pragma once

namespace tock {

// What every channel tock opens (the CLI's, and the server's to other hosts, clusters and
// itself) accepts in both directions, and what the server may send: histories, list pages
// and archived runs can be large. The SDKs' clients accept as much (128 MiB).
inline constexpr int kMaxMessageBytes = 128 * 1024 * 1024;

// What tock-server accepts of one request: Temporal's frontend limit (gRPC's default). Over
// it, gRPC answers RESOURCE_EXHAUSTED itself and the call never reaches a handler, so a
// caller (authenticated or not) cannot make the server hold 128 MiB per call. A request
// holds payloads of at most limits.blob_size_error (2 MiB by default) each.
inline constexpr int kMaxRequestBytes = 4 * 1024 * 1024;

}  // namespace tock
