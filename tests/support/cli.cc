#include "tests/support/cli.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace autotune::testing {
namespace {

// Runs the first column of the first row of sql on db_path (read-only) through `read`.
template <typename Read>
void QueryFirst(const std::string& db_path, const std::string& sql, Read&& read) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 1000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      read(stmt);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
}

}  // namespace

std::string AutotuneBinary() { return AUTOTUNE_BINARY; }

CommandResult RunAutotune(const std::string& args) {
  TempDir capture;
  return RunCommand({"/bin/sh", "-c", "'" + AutotuneBinary() + "' " + args}, capture.path());
}

pid_t StartCommand(const std::vector<std::string>& argv, const std::string& out_path,
                   const std::string& err_path) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) unsetenv(v);
  const int in = open("/dev/null", O_RDONLY);
  if (in < 0 || dup2(in, STDIN_FILENO) < 0) _exit(126);
  if (!freopen(out_path.c_str(), "w", stdout) || !freopen(err_path.c_str(), "w", stderr)) {
    _exit(126);
  }
  std::vector<std::string> full = {"timeout", std::to_string(kCommandTimeoutS)};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<char*> c;
  for (std::string& a : full) c.push_back(a.data());
  c.push_back(nullptr);
  execvp(c[0], c.data());
  _exit(127);
}

int WaitCommand(pid_t pid) {
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int FreeTcpPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& dir) {
  const std::string out = dir + "/out.txt", err = dir + "/err.txt";
  CommandResult r;
  r.exit_code = WaitCommand(StartCommand(argv, out, err));
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/autotune_cli_XXXXXX";
  const char* made = mkdtemp(tmpl);
  if (made == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::File(const std::string& name, const std::string& text) const {
  std::string file = path_ + "/" + name;
  if (!text.empty()) WriteFile(file, text);
  return file;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

int LineCount(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

int64_t QueryInt(const std::string& db_path, const std::string& sql) {
  int64_t v = -1;
  QueryFirst(db_path, sql, [&](sqlite3_stmt* stmt) { v = sqlite3_column_int64(stmt, 0); });
  return v;
}

std::string QueryText(const std::string& db_path, const std::string& sql) {
  std::string v;
  QueryFirst(db_path, sql, [&](sqlite3_stmt* stmt) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    if (text != nullptr) v = reinterpret_cast<const char*>(text);
  });
  return v;
}

}  // namespace autotune::testing
