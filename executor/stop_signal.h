// Stop requests from SIGTERM, SIGINT or SIGUSR1: the record loop finishes the current step,
// marks the run incomplete and returns Aborted. Every rank's request stops every rank after
// the same step (the flag is agreed between steps).
//
// Under mpirun, send SIGUSR1 to mpirun: Open MPI forwards it to every rank. (mpirun answers
// SIGTERM/SIGINT by killing the ranks about a second later, too soon to finish a step.)
// `autotune record --np N` turns its own SIGTERM/SIGINT into that SIGUSR1 (tools/launch.h).
//
// The one piece of process-global mutable state in the executor: a signal handler can only
// reach a static, so the request is one `volatile std::sig_atomic_t` flag, written by the
// handler and read between steps.
#pragma once

namespace autotune::executor {

// Installs handlers for SIGTERM, SIGINT and SIGUSR1 that set the stop flag (idempotent).
void InstallStopSignalHandlers();
// The signal number that asked to stop, 0 if none.
int StopSignal();
// Clears the flag (tests).
void ClearStopSignal();

}  // namespace autotune::executor
