// The options `search` and `record --autotune` share: Horovod's autotune flags (sample budget,
// Gaussian-process noise, seed, log file, warm-up and steps per sample) and Bagua's time-based
// ones, declared once for both commands. Each flag's name and help are what it means to the
// command it is added to: `search --live` counts its warm-up in steps of each measured run,
// `record --autotune` in samples of the one run it tunes. Also the list of online knobs that
// --autotune's help shows, from the knob table.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace autotune::cli {

struct TuningFlags {
  // Measured samples: `search` stops proposing with this many, `record --autotune` keeps the
  // best setting after observing this many.
  int max_samples = 20;
  // Fixed noise of measured scores in units of their spread (Horovod's default 0.8); < 0:
  // learned (`search` only). Fixed by default: with a handful of noisy runs a learned noise
  // reads the noise as signal (bench/tuner/real_task.sh, first grid, mean of 2 passes: 15
  // runs to 3% of the grid's best learned, 4 fixed).
  double gp_noise = 0.8;
  uint64_t seed = 1;     // the tuner's random seed
  std::string log_file;  // CSV, one row per sample (tools/search/sample_log.h); "": none
  // Discarded before each measured sample (`search --live`: steps of each record run) or
  // before tuning starts (`record --autotune`: samples).
  int warmup_samples = 3;
  int steps_per_sample = 10;                 // measured steps per sample
  double warmup_time_s = -1.0;               // Bagua's autotune_warmup_time; < 0: not given
  double sampling_confidence_time_s = -1.0;  // Bagua's; <= 0: not given
  // True when either of Bagua's time-based flags was given.
  bool time_based() const { return warmup_time_s >= 0 || sampling_confidence_time_s > 0; }
};

// The command the shared flags are added to.
enum class TuningCommand { kSearch, kRecordAutotune };

// One shared flag, by the TuningFlags field it sets.
enum class TuningFlag {
  kMaxSamples,
  kGpNoise,
  kSeed,
  kLogFile,
  kWarmupSamples,
  kStepsPerSample,
  kWarmupTime,
  kSamplingConfidenceTime,
};

// The knobs the online search moves in a Horovod run, as --autotune's help lists them:
// "fusion_threshold_mb, cycle_time_ms, ..., hierarchical_allreduce/allgather" (a name that
// shares all but its last word with the one before it is written as that word after a slash).
std::string OnlineKnobList();

// Adds the flags `which` to `app`, in that order (the order --help shows them), with the names,
// help and checks they have for `command`, bound to `flags` (which must outlive `app`'s
// parse).
void AddTuningFlags(CLI::App* app, TuningCommand command, std::initializer_list<TuningFlag> which,
                    TuningFlags* flags);

}  // namespace autotune::cli
