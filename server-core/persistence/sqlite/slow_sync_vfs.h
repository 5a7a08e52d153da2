// Testing and measurement only: a slower disk. `persistence.fault_injection.sync_delay`
// makes every sync of a database file (SQLite's xSync: the write-ahead log at each COMMIT
// with `synchronous: full`, the database at checkpoints) wait that long before the real
// fsync, as a disk whose cache flush takes milliseconds would (a virtual machine's disk
// here flushes in 0.1 ms). It is how group commit's "many transitions per fsync" is
// measured where fsync costs what it costs on real disks (bench/workflow_bench.cc,
// --sync-delay), with the raw baseline on the same slowed files.
#pragma once

#include <cstdint>

#include "absl/time/time.h"

namespace tock::persistence {

// Makes a VFS wrapping the process's default one the default, each sync through it
// waiting `delay` first. Once per process (later calls change nothing), and a zero delay
// installs nothing.
// Call before opening databases (server start). Not thread-safe against concurrent opens.
void InstallSlowSyncVfs(absl::Duration delay);

// How many syncs went through the slow VFS in this process (for tests).
uint64_t SlowSyncCount();

}  // namespace tock::persistence
