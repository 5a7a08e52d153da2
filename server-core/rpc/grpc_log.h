// gRPC's own log lines in tock-server, bounded.
//
// gRPC core writes some events to stderr itself, outside Tock's logger: with TLS, one
// "Handshake failed ..." line per refused connection. Anyone who can reach the port could
// then write to the server's stderr as fast as they can connect. Installed, this keeps at
// most kLinesPerWindow of gRPC's lines per 10 s window (each line cut at 512 bytes) and says
// how many were dropped when the next one is let through.
//
// Thread safety: gRPC calls the sink from any thread; Install once, from main.
#pragma once

namespace tock::server::rpc {

inline constexpr int kGrpcLogLinesPerWindow = 20;

// Routes gRPC's log lines (severity ERROR and above, gRPC's default) through the bound.
void InstallBoundedGrpcLog();

}  // namespace tock::server::rpc
