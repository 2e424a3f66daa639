// Fidelity: where a score comes from. One enum for the database's samples and the tuner's
// observations; the database stores its name ("measured" / "simulated").
#pragma once

#include <string>

#include "traces/status.h"

namespace autotune {

enum class Fidelity {
  kSimulated,  // predicted by the simulator (a replay of a recorded trace)
  kMeasured,   // played on the target (a run, or one sample of a run tuned online)
};

// "simulated" / "measured": the text the samples table and the logs hold.
inline const char* FidelityName(Fidelity fidelity) {
  return fidelity == Fidelity::kSimulated ? "simulated" : "measured";
}

// Parses FidelityName's text; fails naming the text otherwise.
inline Status ParseFidelity(const std::string& text, Fidelity* fidelity) {
  if (text == "simulated" || text == "measured") {
    *fidelity = text == "simulated" ? Fidelity::kSimulated : Fidelity::kMeasured;
    return Status::Ok();
  }
  return Status::InvalidArgument("fidelity must be measured or simulated, not \"" + text + "\"");
}

}  // namespace autotune
