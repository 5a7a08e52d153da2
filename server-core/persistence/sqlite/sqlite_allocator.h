// SQLite's memory: small blocks from the process's allocator, as SQLite's default does (an
// 8-byte size header per block), and large ones (1 MiB or more: an in-memory database's
// buffer) on anonymous mappings of their own, grown with mremap and unmapped when freed.
//
// Why: the in-memory database lives in SQLite's memdb VFS (sqlite_db.cc says why), which
// grows its buffer by doubling through realloc. On the process's allocator (tcmalloc) every
// growth copied the whole database and kept the old buffer: 10,000 idle workflows grew the
// server by 57 MB (33 on `:memory:`). A mapping grows in place or moves its pages without a
// copy, and goes back to the system at once: 32 MB. Untouched pages of the doubled buffer
// cost nothing.
#pragma once

namespace tock::persistence {

// Installs the allocator for the whole process, once; SQLite must not have been used yet
// (it then keeps its default, and this returns false).
bool InstallSqliteAllocator();

}  // namespace tock::persistence
