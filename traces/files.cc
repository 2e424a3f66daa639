#include "traces/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace autotune {
namespace {

// What a file that is not a regular file is, in words; "" for a regular file.
std::string KindOf(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string MiB(int64_t bytes) {
  const int64_t mib = bytes >> 20;
  return mib > 0 ? std::to_string(mib) + " MiB" : std::to_string(bytes) + " bytes";
}

// Writes all of text to fd; false with errno set on failure.
bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// Errno in words; "file too large" is what RLIMIT_FSIZE gives.
std::string Reason(int err) {
  if (err == ENOSPC) return "no space left on the device (disk full)";
  if (err == EFBIG) return "file too large (a file-size limit)";
  return std::strerror(err);
}

std::atomic<int> temp_counter{0};

Status WriteThrough(const std::string& path, const std::string& target, const std::string& text) {
  const int fd = open(target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot write " + path + ": " + Reason(errno));
  const bool written = WriteAll(fd, text);
  const int write_errno = errno;
  const bool closed = close(fd) == 0;
  if (!written) return Status::IoError("cannot write " + path + ": " + Reason(write_errno));
  if (!closed) return Status::IoError("cannot write " + path + ": " + Reason(errno));
  return Status::Ok();
}

Status WriteReplacing(const std::string& path, const std::string& target, mode_t mode,
                      const std::string& text) {
  const std::filesystem::path t(target);
  const std::string folder = t.has_parent_path() ? t.parent_path().string() : ".";
  const std::string temp = folder + "/." + t.filename().string() + ".tmp-" +
                           std::to_string(getpid()) + "-" + std::to_string(temp_counter++);
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, mode);
  if (fd < 0) return Status::IoError("cannot write " + path + ": " + Reason(errno));
  bool ok = WriteAll(fd, text) && fsync(fd) == 0;
  int err = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && rename(temp.c_str(), target.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    unlink(temp.c_str());
    return Status::IoError("cannot write " + path + ": " + Reason(err));
  }
  return Status::Ok();
}

}  // namespace

Status ReadInputFile(const std::string& path, const std::string& what, int64_t max_bytes,
                     std::string* text) {
  const std::string prefix = "cannot read " + what + " " + path + ": ";
  if (path.empty()) return Status::IoError("cannot read " + what + ": no file name given");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::IoError(prefix + std::strerror(errno));
  const std::string kind = KindOf(st.st_mode);
  if (!kind.empty() && !S_ISFIFO(st.st_mode)) {
    return Status::IoError(prefix + "it is " + kind + ", not a file");
  }
  if (S_ISREG(st.st_mode) && st.st_size > max_bytes) {
    return Status::IoError(prefix + "larger than the limit of " + MiB(max_bytes));
  }
  const int fd = open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Status::IoError(prefix + std::strerror(errno));
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string reason = std::strerror(errno);
      close(fd);
      return Status::IoError(prefix + reason);
    }
    if (n == 0) break;
    if (static_cast<int64_t>(out.size()) + n > max_bytes) {
      close(fd);
      return Status::IoError(prefix + "larger than the limit of " + MiB(max_bytes));
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  *text = std::move(out);
  return Status::Ok();
}

Status WriteOutputFile(const std::string& path, const std::string& text) {
  if (path.empty()) return Status::IoError("cannot write: no file name given");
  std::string target = path;
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    target = std::filesystem::weakly_canonical(path, ec).string();
    if (ec) return Status::IoError("cannot write " + path + ": " + ec.message());
  }
  mode_t mode = 0666;  // less the umask, as for any new file
  if (stat(target.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return WriteThrough(path, target, text);
    const std::string kind = KindOf(st.st_mode);
    if (!kind.empty()) {
      return Status::IoError("cannot write " + path + ": it is " + kind + ", not a file");
    }
    mode = st.st_mode & 07777;
  } else if (errno != ENOENT) {
    return Status::IoError("cannot write " + path + ": " + std::strerror(errno));
  }
  return WriteReplacing(path, target, mode, text);
}

std::string EscapeForTerminal(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) {
        escape(c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A valid UTF-8 sequence is kept whole (no overlong forms, no surrogates, <= U+10FFFF).
    size_t length = 0;
    uint32_t min = 0;
    uint32_t code = 0;
    if ((c & 0xe0) == 0xc0) {
      length = 2, min = 0x80, code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      length = 3, min = 0x800, code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      length = 4, min = 0x10000, code = c & 0x07;
    }
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xc0) == 0x80;
      code = (code << 6) | (next & 0x3f);
    }
    valid = valid && code >= min && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) &&
            !(code >= 0x80 && code < 0xa0);  // C1 controls
    if (valid) {
      out.append(text, i, length);
      i += length;
    } else {
      escape(c);
      ++i;
    }
  }
  return out;
}

}  // namespace autotune
