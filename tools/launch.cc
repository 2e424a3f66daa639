#include "tools/launch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>

#include "executor/launch_status.h"
#include "executor/record.h"
#include "tools/command.h"
#include "tools/mpirun_output.h"
#include "tools/progress.h"

#ifndef AUTOTUNE_MPIEXEC
#define AUTOTUNE_MPIEXEC "mpirun"
#endif
#ifndef AUTOTUNE_MPIRUN_FLAGS_STRING
#define AUTOTUNE_MPIRUN_FLAGS_STRING ""
#endif

namespace autotune::cli {

namespace {

std::vector<std::string> SplitSpaces(const std::string& text) {
  std::istringstream in(text);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

}  // namespace

bool LaunchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return true;
  }
  return false;
}

std::string MpiLaunchHint(const std::string& subcommand) {
  return subcommand + " runs on every rank of an MPI job: add --np N to launch N local ranks " +
         "(e.g. autotune " + subcommand + " --np 4 ...), or run it under mpirun (mpirun -np 4 " +
         "autotune " + subcommand + " ...)";
}

std::vector<std::string> SelfArgv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    argv.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

std::string ShellQuote(const std::string& value) {
  bool plain = !value.empty();
  for (char c : value) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._-/:+,=@%", c))) {
      plain = false;
    }
  }
  if (plain) return value;
  std::string quoted = "'";
  for (char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string JoinCommandLine(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(a);
  }
  return out;
}

std::vector<std::string> MpirunArgv(int np, const std::vector<std::string>& self_argv,
                                    const std::string& exe) {
  std::vector<std::string> argv = {AUTOTUNE_MPIEXEC, "-np", std::to_string(np)};
  for (const std::string& f : SplitSpaces(AUTOTUNE_MPIRUN_FLAGS_STRING)) argv.push_back(f);
  // mpirun's own notices (e.g. the many lines after a rank's non-zero exit) are taken out
  // by the launcher (tools/mpirun_output.h), which reads a dead rank's name from them.
  argv.insert(argv.end(),
              {"--stdin", "none", "-x", executor::kLaunchStatusEnv, "-x", kProgressTtyEnv});
  if (const char* extra = std::getenv("AUTOTUNE_MPIRUN_ARGS")) {
    for (const std::string& f : SplitSpaces(extra)) argv.push_back(f);
  }
  argv.push_back(exe);
  for (size_t i = 1; i < self_argv.size(); ++i) {
    const std::string& a = self_argv[i];
    if (a == "--np") {
      ++i;  // and its value
      continue;
    }
    if (a.rfind("--np=", 0) == 0) continue;
    argv.push_back(a);
  }
  return argv;
}

namespace {

// This launch's own folder under TMPDIR (or /tmp), removed with everything in it when the
// launcher returns, whichever way; path is "" if none could be made. It holds rank 0's notes
// (executor/launch_status.h) and the local part of Open MPI's session folder: mpiruns started
// at once on one host share /tmp/ompi.HOST.UID, which one of them removes while ending as
// another creates its job folder under it ("Error in file session_dir.c"; open-mpi/ompi#7049,
// #3818), so each launch gets a private one.
class LaunchDir {
 public:
  LaunchDir() {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/autotune-launch-XXXXXX";
    if (mkdtemp(path_.data()) == nullptr) path_.clear();
  }
  ~LaunchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  LaunchDir(const LaunchDir&) = delete;
  LaunchDir& operator=(const LaunchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An empty file in `dir` for rank 0's notes; "" if none can be made.
std::string MakeStatusFile(const std::string& dir) {
  if (dir.empty()) return "";
  const std::string path = dir + "/status";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return "";
  close(fd);
  return path;
}

// Appends the launch status note that names the stop signal the launcher got
// (executor::kLauncherSignalKey), before the launcher passes it on as SIGUSR1.
void NoteSignal(const std::string& status_path, const char* name) {
  if (status_path.empty()) return;
  const int fd = open(status_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  const std::string line = std::string(executor::kLauncherSignalKey) + " " + name + "\n";
  (void)!write(fd, line.data(), line.size());
  close(fd);
}

// The dead rank's line: who, where, and what the run kept (stored as the run's end reason).
void ReportDeadRank(const DeadRank& dead, const std::string& status_path,
                    const LaunchTarget& target) {
  const std::map<std::string, std::string> notes = executor::ReadLaunchStatus(status_path);
  if (notes.count("reported") > 0) return;  // rank 0 said why the job ended
  const std::string who = "rank " + std::to_string(dead.rank) + " on " + dead.host +
                          " died (signal " + std::to_string(dead.signal) +
                          (dead.signal_name.empty() ? "" : ", " + dead.signal_name) + ")";
  const auto run_note = notes.find("run");
  if (run_note == notes.end()) {
    Fail(who + (target.command == "calibrate"
                    ? "; no calibration saved (one is saved once every size is measured)"
                    : "; no run was created"));
    return;
  }
  int64_t run_id = 0;
  int planned = 0;
  std::istringstream(run_note->second) >> run_id >> planned;
  Fail(who + "; " + executor::EndRunElsewhere(target.db_path, run_id, planned, who));
}

// Copies the child's stderr (read end `fd`) to ours through the filter until it closes;
// waits at most `patience_ms` for each chunk. Returns false when nothing came in time.
bool PumpStderr(int fd, int patience_ms, MpirunOutputFilter* filter) {
  pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, patience_ms) <= 0) return false;
  char buffer[4096];
  const ssize_t n = read(fd, buffer, sizeof buffer);
  if (n <= 0) return false;
  std::string out;
  filter->Feed(std::string(buffer, static_cast<size_t>(n)), &out);
  if (!out.empty()) (void)!write(STDERR_FILENO, out.data(), out.size());
  return true;
}

[[noreturn]] void ExecMpirun(const std::vector<std::string>& args, const std::string& launch_dir,
                             const std::string& status, int stderr_fd, const sigset_t& previous) {
  setpgid(0, 0);  // terminal Ctrl-C reaches this launcher only, not mpirun directly
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // the launcher killed outright takes mpirun along
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  setenv(executor::kLaunchStatusEnv, status.c_str(), 1);  // "" (no file): no notes
  // Open MPI's session folder on this host (mpirun's and its local ranks') goes to this
  // launch's folder, unless the user chose one. TMPDIR, not orte_tmpdir_base: the latter
  // would be sent to remote daemons, where this folder does not exist.
  const bool chosen = std::getenv("OMPI_MCA_orte_tmpdir_base") != nullptr ||
                      std::getenv("OMPI_MCA_orte_local_tmpdir_base") != nullptr;
  if (!launch_dir.empty() && !chosen) setenv("TMPDIR", launch_dir.c_str(), 1);
  const char* tty = std::getenv(kProgressTtyEnv);  // as given, or our stderr (before the pipe)
  const bool terminal = isatty(STDERR_FILENO) || (tty != nullptr && std::string(tty) == "1");
  setenv(kProgressTtyEnv, terminal ? "1" : "0", 1);
  dup2(stderr_fd, STDERR_FILENO);
  std::vector<char*> cargs;
  for (const std::string& a : args) cargs.push_back(const_cast<char*>(a.c_str()));
  cargs.push_back(nullptr);
  execvp(cargs[0], cargs.data());
  std::fprintf(stderr, "autotune: error: --np: cannot run %s: %s\n", cargs[0],
               std::strerror(errno));
  _exit(127);
}

}  // namespace

int RelaunchUnderMpirun(int np, const LaunchTarget& target) {
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Fail("--np: cannot find this program's path: " + ec.message());
  const std::vector<std::string> args = MpirunArgv(np, SelfArgv(), exe);
  const LaunchDir launch_dir;  // the child execs or _exits: only this process removes it
  const std::string status = MakeStatusFile(launch_dir.path());
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Fail(std::string("--np: cannot make a pipe: ") + std::strerror(errno));
  }

  // Stop signals and the child's exit are taken synchronously (sigtimedwait), so no
  // handler and no global state are needed.
  sigset_t waited, previous;
  sigemptyset(&waited);
  for (int s : {SIGTERM, SIGINT, SIGCHLD}) sigaddset(&waited, s);
  sigprocmask(SIG_BLOCK, &waited, &previous);

  const pid_t child = fork();
  if (child < 0) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    return Fail(std::string("--np: cannot start mpirun: ") + std::strerror(errno));
  }
  if (child == 0) ExecMpirun(args, launch_dir.path(), status, pipe_fds[1], previous);
  close(pipe_fds[1]);
  MpirunOutputFilter filter;
  int status_word = 0;
  bool told_signal = false;
  for (;;) {
    PumpStderr(pipe_fds[0], 200, &filter);
    const timespec now = {0, 0};
    const int signo = sigtimedwait(&waited, nullptr, &now);
    if (signo == SIGTERM || signo == SIGINT) {
      // mpirun passes SIGUSR1 on to the ranks; the note tells rank 0 what the user sent.
      if (!told_signal) NoteSignal(status, signo == SIGTERM ? "SIGTERM" : "SIGINT");
      told_signal = true;
      kill(child, SIGUSR1);  // idempotent
    }
    if (waitpid(child, &status_word, WNOHANG) == child) break;
  }
  while (PumpStderr(pipe_fds[0], 1000, &filter)) {
  }
  close(pipe_fds[0]);
  std::string rest;
  filter.Finish(&rest);
  if (!rest.empty()) (void)!write(STDERR_FILENO, rest.data(), rest.size());
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  const int code =
      WIFEXITED(status_word) ? WEXITSTATUS(status_word)
                             : 128 + (WIFSIGNALED(status_word) ? WTERMSIG(status_word) : 0);
  if (code != 0 && filter.dead()) {
    ReportDeadRank(*filter.dead(), status, target);
  } else if (code != 0 && filter.passed_lines() == 0 && !filter.dropped().empty()) {
    (void)!write(STDERR_FILENO, filter.dropped().data(), filter.dropped().size());
  }
  return code;
}

}  // namespace autotune::cli
