#include "tools/launch.h"

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
#include <sstream>

#include "tools/command.h"

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
  // --quiet: mpirun's own multi-line notes on a rank's non-zero exit would bury the one
  // error line rank 0 prints.
  argv.insert(argv.end(), {"--stdin", "none", "--quiet"});
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

int RelaunchUnderMpirun(int np) {
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Fail("--np: cannot find this program's path: " + ec.message());
  const std::vector<std::string> args = MpirunArgv(np, SelfArgv(), exe);

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
  if (child == 0) {
    setpgid(0, 0);  // terminal Ctrl-C reaches this launcher only, not mpirun directly
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // the launcher killed outright takes mpirun along
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    std::vector<char*> cargs;
    for (const std::string& a : args) cargs.push_back(const_cast<char*>(a.c_str()));
    cargs.push_back(nullptr);
    execvp(cargs[0], cargs.data());
    std::fprintf(stderr, "autotune: error: --np: cannot run %s: %s\n", cargs[0],
                 std::strerror(errno));
    _exit(127);
  }
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) {
      sigprocmask(SIG_SETMASK, &previous, nullptr);
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    timespec tick = {1, 0};
    const int signo = sigtimedwait(&waited, nullptr, &tick);
    if (signo == SIGTERM || signo == SIGINT) kill(child, SIGUSR1);  // idempotent
  }
}

}  // namespace autotune::cli
