#include "executor/stop_signal.h"

#include <csignal>

namespace autotune::executor {

namespace {

volatile std::sig_atomic_t stop_signal = 0;  // see stop_signal.h

void OnStopSignal(int signo) { stop_signal = signo; }

}  // namespace

void InstallStopSignalHandlers() {
  struct sigaction action = {};
  action.sa_handler = &OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

int StopSignal() { return stop_signal; }

void ClearStopSignal() { stop_signal = 0; }

}  // namespace autotune::executor
