#include "server-core/persistence/sqlite/slow_sync_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <thread>

namespace tock::persistence {
namespace {

std::atomic<uint64_t> syncs{0};
absl::Duration sync_delay;
sqlite3_vfs* real_vfs = nullptr;
sqlite3_vfs slow_vfs;

// A file opened through the slow VFS: the real VFS's file follows it in the same block.
struct SlowFile {
  sqlite3_file base;  // first: SQLite sees a sqlite3_file
  sqlite3_file* real;
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<SlowFile*>(f)->real; }

// Every method forwards to the real file; xSync waits first.
int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 at) {
  return Real(f)->pMethods->xRead(Real(f), buf, n, at);
}
int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 at) {
  return Real(f)->pMethods->xWrite(Real(f), buf, n, at);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) {
  syncs.fetch_add(1, std::memory_order_relaxed);
  std::this_thread::sleep_for(absl::ToChronoMicroseconds(sync_delay));
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int delete_flag) {
  return Real(f)->pMethods->xShmUnmap(Real(f), delete_flag);
}
int Fetch(sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), at, n, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 at, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), at, p);
}

const sqlite3_io_methods kMethods = {
    3,        Close,       Read,       Write,      Truncate,
    Sync,     FileSize,    Lock,       Unlock,     CheckReservedLock,
    FileControl, SectorSize, DeviceCharacteristics, ShmMap, ShmLock,
    ShmBarrier,  ShmUnmap,   Fetch,      Unfetch};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  auto* file = reinterpret_cast<SlowFile*>(f);
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  int rc = real_vfs->xOpen(real_vfs, name, file->real, flags, out_flags);
  // The real file's methods decide whether it is open (xClose is called when they are set).
  file->base.pMethods = file->real->pMethods != nullptr ? &kMethods : nullptr;
  return rc;
}

// The VFS's own methods forward to the real VFS with its own pointer.
int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return real_vfs->xDelete(real_vfs, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return real_vfs->xAccess(real_vfs, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return real_vfs->xFullPathname(real_vfs, name, n, out);
}
int Randomness(sqlite3_vfs*, int n, char* out) { return real_vfs->xRandomness(real_vfs, n, out); }
int Sleep(sqlite3_vfs*, int micros) { return real_vfs->xSleep(real_vfs, micros); }
int CurrentTime(sqlite3_vfs*, double* out) { return real_vfs->xCurrentTime(real_vfs, out); }
int GetLastError(sqlite3_vfs*, int n, char* out) {
  return real_vfs->xGetLastError(real_vfs, n, out);
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

}  // namespace

void InstallSlowSyncVfs(absl::Duration delay) {
  if (delay <= absl::ZeroDuration() || real_vfs != nullptr) return;
  real_vfs = sqlite3_vfs_find(nullptr);
  sync_delay = delay;
  slow_vfs = sqlite3_vfs{};
  slow_vfs.iVersion = 2;  // no system-call overrides (version 3) through this one
  slow_vfs.szOsFile = static_cast<int>(sizeof(SlowFile)) + real_vfs->szOsFile;
  slow_vfs.mxPathname = real_vfs->mxPathname;
  slow_vfs.zName = "tock-slow-sync";
  slow_vfs.xOpen = Open;
  slow_vfs.xDelete = Delete;
  slow_vfs.xAccess = Access;
  slow_vfs.xFullPathname = FullPathname;
  slow_vfs.xRandomness = Randomness;
  slow_vfs.xSleep = Sleep;
  slow_vfs.xCurrentTime = CurrentTime;
  slow_vfs.xGetLastError = GetLastError;
  slow_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  sqlite3_vfs_register(&slow_vfs, /*makeDflt=*/1);
}

uint64_t SlowSyncCount() { return syncs.load(std::memory_order_relaxed); }

}  // namespace tock::persistence
