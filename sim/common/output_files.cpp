#include "sim/common/output_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "models/common/error.hpp"

namespace systolic {
namespace {

namespace fs = std::filesystem;

// Opens a new file exclusively; -1 with errno when the name exists (a file or a link) or the
// folder is not writable.
int open_exclusive(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

void make_parent(const std::string& path) {
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (fs::is_directory(target, ec)) throw InputError(fmt::format("{}: cannot write: it is a directory", path));
}

// Creates the temporary and returns its open descriptor.
int create_temp(const std::string& target, const std::string& suffix, std::string& temp) {
  static std::atomic<unsigned> counter{0};
  make_parent(target);
  const fs::path t(target);
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = (t.parent_path() / fmt::format(".{}.{}-{}{}", t.filename().string(), ::getpid(), counter++, suffix)).string();
    const int fd = open_exclusive(temp);
    if (fd >= 0) return fd;
    if (errno != EEXIST) break;
  }
  throw InputError(fmt::format("{}: cannot write ({})", target, std::strerror(errno)));
}

}  // namespace

std::string create_exclusive_temp(const std::string& target, const std::string& suffix) {
  std::string temp;
  ::close(create_temp(target, suffix, temp));
  return temp;
}

void check_writable(const std::string& path) {
  // The nearest folder that exists must let us create entries; nothing is created here, so a
  // run refused later leaves no folder behind.
  fs::path dir = fs::path(path).parent_path();
  std::error_code ec;
  while (!dir.empty() && !fs::exists(dir, ec)) dir = dir.parent_path();
  if (dir.empty()) dir = ".";
  if (fs::is_directory(path, ec)) throw InputError(fmt::format("{}: cannot write: it is a directory", path));
  if (!fs::is_directory(dir, ec) || ::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("{}: cannot write: {} is not a writable folder", path, dir.string()));
}

OutputSet::~OutputSet() {
  for (const auto& [target, temp] : files_) ::unlink(temp.c_str());
}

void OutputSet::add(const std::string& path, const std::string& text) {
  std::string temp;
  const int fd = create_temp(path, ".tmp", temp);
  files_.emplace_back(path, temp);  // removed by the destructor if anything below fails
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(fmt::format("{}: write failed ({})", path, std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) throw InputError(fmt::format("{}: write failed ({})", path, std::strerror(errno)));
}

void OutputSet::adopt(const std::string& path, const std::string& temp) { files_.emplace_back(path, temp); }

void OutputSet::commit() {
  for (auto it = files_.begin(); it != files_.end(); it = files_.erase(it))
    if (::rename(it->second.c_str(), it->first.c_str()) != 0)
      throw InputError(fmt::format("{}: cannot write ({})", it->first, std::strerror(errno)));
}

}  // namespace systolic
