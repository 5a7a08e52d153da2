#include "lib/archival/file_blob_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tock::archival {
namespace fs = std::filesystem;
namespace {

absl::Status Errno(const std::string& what, const std::string& path) {
  const int e = errno;
  const std::string text = absl::StrCat(what, " ", path, ": ", std::strerror(e));
  if (e == ENOENT) return absl::NotFoundError(text);
  if (e == EACCES || e == EPERM) return absl::PermissionDeniedError(text);
  return absl::UnavailableError(text);
}

// mkdir -p with `mode` for every directory it creates.
absl::Status MakeDirs(const fs::path& dir, mode_t mode) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return absl::OkStatus();
  if (dir.has_parent_path() && dir.parent_path() != dir) {
    if (absl::Status s = MakeDirs(dir.parent_path(), mode); !s.ok()) return s;
  }
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) return Errno("cannot create", dir);
  if (!fs::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir.string(), ": a path to a directory was expected"));
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

FileBlobStore::FileBlobStore(std::string root, mode_t file_mode, mode_t dir_mode)
    : root_(std::move(root)), file_mode_(file_mode), dir_mode_(dir_mode) {}

absl::StatusOr<std::string> FileBlobStore::PathOf(const std::string& key) const {
  if (key.empty() || key.front() == '/' || absl::StrContains(key, "..") ||
      absl::StrContains(key, '\0')) {
    return absl::InvalidArgumentError(absl::StrCat("invalid archive key \"", key, "\""));
  }
  return absl::StrCat(root_, "/", key);
}

absl::Status FileBlobStore::Put(const std::string& key, std::string_view bytes) {
  absl::StatusOr<std::string> path = PathOf(key);
  if (!path.ok()) return path.status();
  const fs::path target(*path);
  if (absl::Status s = MakeDirs(target.parent_path(), dir_mode_); !s.ok()) return s;
  // A unique temporary name in the same directory (rename is atomic within a filesystem);
  // the leading dot keeps it out of List.
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = (target.parent_path() / absl::StrCat(".", target.filename().string(), ".",
                                                              ::getpid(), ".", counter++, ".tmp"))
                              .string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, file_mode_);
  if (fd < 0) return Errno("cannot create", tmp);
  absl::Status s = WriteAll(fd, bytes, tmp);
  if (s.ok() && ::fchmod(fd, file_mode_) != 0) s = Errno("cannot chmod", tmp);
  if (s.ok() && ::fsync(fd) != 0) s = Errno("cannot sync", tmp);
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), target.c_str()) != 0) s = Errno("cannot rename into", *path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  // The rename is durable once the directory is.
  const int dir = ::open(target.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> FileBlobStore::Get(const std::string& key) {
  absl::StatusOr<std::string> path = PathOf(key);
  if (!path.ok()) return path.status();
  const int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", *path);
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status s = Errno("cannot read", *path);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::StatusOr<bool> FileBlobStore::Exists(const std::string& key) {
  absl::StatusOr<std::string> path = PathOf(key);
  if (!path.ok()) return path.status();
  struct stat st;
  if (::stat(path->c_str(), &st) == 0) return S_ISREG(st.st_mode);
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return Errno("cannot stat", *path);
}

absl::StatusOr<BlobListPage> FileBlobStore::List(const std::string& prefix, int max_keys,
                                                  const std::string& token) {
  // Walk only the directory the prefix names; every key below it that matches is listed.
  const size_t slash = prefix.rfind('/');
  const std::string dir_key = slash == std::string::npos ? "" : prefix.substr(0, slash);
  const fs::path dir = dir_key.empty() ? fs::path(root_) : fs::path(root_) / dir_key;
  std::vector<std::string> keys;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return BlobListPage{};
  const fs::path root(root_);
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string key = fs::relative(it->path(), root, ec).string();
    if (it->is_directory(ec)) {
      // Only directories that can hold a matching key are walked (the history files sit
      // beside one directory of visibility records per namespace).
      const std::string as_dir = key + "/";
      if (!absl::StartsWith(prefix, as_dir) && !absl::StartsWith(as_dir, prefix)) {
        it.disable_recursion_pending();
      }
      continue;
    }
    const std::string name = it->path().filename().string();
    if (name.empty() || name.front() == '.') continue;  // temporary files of Put
    if (absl::StartsWith(key, prefix) && key > token) keys.push_back(std::move(key));
  }
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot list ", dir.string(), ": ", ec.message()));
  }
  std::sort(keys.begin(), keys.end());
  BlobListPage page;
  if (max_keys > 0 && keys.size() > static_cast<size_t>(max_keys)) {
    keys.resize(static_cast<size_t>(max_keys));
    page.next_token = keys.back();
  }
  page.keys = std::move(keys);
  return page;
}

}  // namespace tock::archival
