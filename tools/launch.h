// Launching under MPI: `record` and `calibrate` run on every rank of an MPI job; with
// `--np N` they re-launch their own command line under `mpirun -np N` on this machine.
//
// The re-launch runs: mpirun -np N <AUTOTUNE_MPIRUN_FLAGS of the build> --stdin none
// -x AUTOTUNE_LAUNCH_STATUS -x AUTOTUNE_PROGRESS_TTY [$AUTOTUNE_MPIRUN_ARGS, split on spaces, e.g. "--hostfile hosts"]
// /proc/self/exe ARGS... (ARGS = this command line without --np). mpirun's stderr passes
// through this process, which takes out mpirun's own notices (tools/mpirun_output.h): when
// the job fails because a rank died, one line names the rank, its host, the signal and what
// the run kept (the run is marked incomplete with that reason), unless rank 0 already said
// why the job ended (executor/launch_status.h). mpirun runs in its own process group; a
// SIGTERM or SIGINT to this process is passed on to mpirun as SIGUSR1 (every time), which
// mpirun forwards to every rank: the ranks finish the current step and stop gracefully
// (executor/stop_signal.h). To stop at once, signal mpirun itself; if this launcher is
// killed outright, mpirun gets SIGTERM (PR_SET_PDEATHSIG) and ends the job.
// Each launch has its own folder under TMPDIR for rank 0's notes and Open MPI's session
// folder on this host: mpirun and its local ranks get it as TMPDIR (unless the user set
// OMPI_MCA_orte_tmpdir_base or orte_local_tmpdir_base), and it is removed when mpirun ends.
#pragma once

#include <string>
#include <vector>

namespace autotune::cli {

// True when an MPI launcher started this process (OMPI_COMM_WORLD_SIZE, PMIX_RANK or
// PMI_SIZE is set).
bool LaunchedByMpi();

// One line telling how to launch `subcommand` (e.g. "record") under MPI.
std::string MpiLaunchHint(const std::string& subcommand);

// This process's command line (from /proc/self/cmdline), argv[0] first.
std::vector<std::string> SelfArgv();
// value as one POSIX shell word: as is when plain (letters, digits, ._-/:+,=@%), else in
// single quotes, a ' inside written '\''.
std::string ShellQuote(const std::string& value);
// The command line as one shell command: every argument ShellQuote'd.
std::string JoinCommandLine(const std::vector<std::string>& argv);
// The argv that re-launches self_argv under mpirun with np ranks (self_argv[0] replaced by
// exe, --np N / --np=N removed).
std::vector<std::string> MpirunArgv(int np, const std::vector<std::string>& self_argv,
                                    const std::string& exe);

// What the re-launched job writes, for the line about a dead rank.
struct LaunchTarget {
  std::string command;  // "record" or "calibrate"
  std::string db_path;  // its --db
};

// Re-runs this process's command line under mpirun -np np, waits for it, passing stop
// signals on (see above). Returns mpirun's exit code (128 + signal if it was killed), or 1
// after printing one error line when mpirun cannot be started.
int RelaunchUnderMpirun(int np, const LaunchTarget& target);

}  // namespace autotune::cli
