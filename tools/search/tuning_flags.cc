#include "tools/search/tuning_flags.h"

#include "tools/flag_checks.h"
#include "tools/search/sample_log.h"
#include "traces/framework.h"
#include "tuner/knob_search.h"

namespace autotune::cli {
namespace {

// The flag `flag` of `command`: both commands' names and help side by side.
void AddTuningFlag(CLI::App* app, TuningCommand command, TuningFlag flag, TuningFlags* f) {
  const bool search = command == TuningCommand::kSearch;
  switch (flag) {
    case TuningFlag::kMaxSamples:
      app->add_option(search ? "--max-samples,--autotune-bayes-opt-max-samples,"
                               "--autotune-max-samples"
                             : "--autotune-bayes-opt-max-samples,--autotune-max-samples",
                      f->max_samples,
                      search ? "Measured-sample budget: with this many measured samples, stop "
                               "proposing. Default 20"
                             : "--autotune: samples the tuner observes; then the best setting "
                               "stays for the rest of the run. Default 20")
          ->check(AtLeast(1));
      return;
    case TuningFlag::kGpNoise: {
      CLI::Option* option = app->add_option(
          "--autotune-gaussian-process-noise", f->gp_noise,
          search ? "Fixed noise standard deviation of measured scores, in units of their spread "
                   "(Horovod's meaning); a negative value learns it from the data. Default 0.8 "
                   "(Horovod's)"
                 : "--autotune: fixed noise standard deviation of the scores, in units of their "
                   "spread (Horovod's meaning). Default 0.8");
      if (!search) option->check(AtLeast(0));
      return;
    }
    case TuningFlag::kSeed:
      app->add_option(search ? "--seed" : "--autotune-seed", f->seed,
                      search ? "Random seed of the tuner. Default 1"
                             : "--autotune: random seed of the tuner. Default 1");
      return;
    case TuningFlag::kLogFile:
      app->add_option("--autotune-log-file", f->log_file,
                      search ? "CSV of the measured samples, one row each, in the layout of "
                                   "Horovod's autotune log (" +
                                   HorovodLogColumnsText() +
                                   " in bytes/us), then the other knobs, fidelity, "
                                   "score_bytes_per_s, and last the setting written "
                                   "(fidelity \"best\", Horovod's final best row); the "
                                   "simulated samples go to FILE.simulated.csv"
                             : "--autotune: CSV of the measured samples (the columns of `search "
                               "--autotune-log-file`: Horovod's first); the simulated samples "
                               "go to FILE.simulated.csv");
      return;
    case TuningFlag::kWarmupSamples:
      app->add_option("--autotune-warmup-samples", f->warmup_samples,
                      search ? "--live: warm-up steps played and discarded before each measured "
                               "sample. Default 3"
                             : "--autotune: samples played and discarded before tuning starts. "
                               "Default 3")
          ->check(AtLeast(0));
      return;
    case TuningFlag::kStepsPerSample:
      app->add_option("--autotune-steps-per-sample", f->steps_per_sample,
                      search ? "--live: measured steps per sample (one record run). Default 10"
                             : "--autotune: steps per sample; its score is bytes / time over "
                               "them. Default 10")
          ->check(AtLeast(1));
      return;
    case TuningFlag::kWarmupTime:
      app->add_option("--autotune-warmup-time-s", f->warmup_time_s,
                      search ? "--live: warm-up time per sample in seconds (Bagua's "
                               "autotune_warmup_time), instead of --autotune-warmup-samples: "
                               "ceil(time / the run's median step time) warm-up steps"
                             : "--autotune: warm-up time in seconds (Bagua's "
                               "autotune_warmup_time), instead of --autotune-warmup-samples: "
                               "after a first probe sample of --autotune-steps-per-sample steps, "
                               "ceil(time / sample time) samples are discarded")
          ->check(AtLeast(0));
      return;
    case TuningFlag::kSamplingConfidenceTime:
      app->add_option("--autotune-sampling-confidence-time-s", f->sampling_confidence_time_s,
                      search ? "--live: time each measured sample lasts, in seconds (Bagua's "
                               "autotune_sampling_confidence_time), instead of "
                               "--autotune-steps-per-sample: ceil(time / the run's median step "
                               "time) steps"
                             : "--autotune: time each sample lasts, in seconds (Bagua's "
                               "autotune_sampling_confidence_time): steps per sample = ceil(time "
                               "/ step time of the probe sample)")
          ->check(GreaterThan(0));
      return;
  }
}

}  // namespace

std::string OnlineKnobList() {
  std::string list;
  std::string previous_stem;
  for (const std::string& name : tuner::OnlineKnobNames(Framework::kHorovod)) {
    const size_t last_word = name.rfind('_') + 1;  // 0 for a name of one word
    const std::string stem = name.substr(0, last_word);
    if (!stem.empty() && stem == previous_stem) {
      list += "/" + name.substr(last_word);
      continue;
    }
    list += (list.empty() ? "" : ", ") + name;
    previous_stem = stem;
  }
  return list;
}

void AddTuningFlags(CLI::App* app, TuningCommand command, std::initializer_list<TuningFlag> which,
                    TuningFlags* flags) {
  for (TuningFlag flag : which) AddTuningFlag(app, command, flag, flags);
}

}  // namespace autotune::cli
