// `autotune apply --config-file F [--print-env] -- CMD...`: validates a config file and runs a
// production command with the matching environment (what horovodrun --config-file would set).
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "formats/config_file.h"
#include "formats/nccl_tuner_csv.h"
#include "tools/command.h"
#include "tools/launch.h"
#include "tools/torch_python.h"
#include "traces/knob_table.h"

namespace autotune::cli {
namespace {

using Environment = std::vector<std::pair<std::string, std::string>>;

// The variables for a config, in knob-table order: every variable that has a value of the
// knobs of the config's framework and the backend knobs
// (Horovod's knobs always do, so the run gets exactly the validated setting; a backend knob
// at its library default has none), then horovodrun's own autotune section. Fails when a DDP
// config's Python side cannot be found (PythonPathWithSite).
Status EnvironmentFor(const ConfigFile& config, Environment* out) {
  Environment env;
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.environment == nullptr || !KnobInFramework(spec, config.framework)) continue;
    for (EnvVar& var : spec.environment(config.knobs)) {
      if (!var.second.empty()) env.push_back(std::move(var));
    }
  }
  // A DDP job reads its variables through autotune's sitecustomize, first on PYTHONPATH.
  if (config.framework == Framework::kDdp) {
    StatusOr<std::string> python_path = PythonPathWithSite();
    if (!python_path.ok()) return python_path.status().WithPrefix("apply");
    env.emplace_back("PYTHONPATH", *python_path);
  }
  const TunerSettings& t = config.autotune;
  // horovodrun's own autotune section, passed on as horovodrun would.
  if (config.framework == Framework::kHorovod && t.enabled) {
    env.emplace_back("HOROVOD_AUTOTUNE", "1");
    if (!t.log_file.empty()) env.emplace_back("HOROVOD_AUTOTUNE_LOG", t.log_file);
    env.emplace_back("HOROVOD_AUTOTUNE_WARMUP_SAMPLES", std::to_string(t.warmup_samples));
    env.emplace_back("HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE", std::to_string(t.steps_per_sample));
    env.emplace_back("HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES",
                     std::to_string(t.bayes_opt_max_samples));
    char noise[32];
    std::snprintf(noise, sizeof(noise), "%g", t.gaussian_process_noise);
    env.emplace_back("HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE", noise);
  }
  *out = std::move(env);
  return Status::Ok();
}

// The knob's value as a Python literal, as a training script passes it ("True", "25").
std::string PythonValue(const KnobSpec& spec, const Knobs& knobs) {
  if (spec.type == KnobType::kBool) return KnobNumber(spec, knobs) != 0 ? "True" : "False";
  return KnobText(spec, knobs);
}

// One line for each knob of the config that no variable carries and that is away from its
// default, so nothing in the file goes unapplied silently: where the training script takes it
// (the row's script_call), or that it is a setting of autotune's executor.
std::vector<std::string> UnappliedNotes(const ConfigFile& config) {
  std::vector<std::string> notes;
  const Knobs defaults;
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.environment != nullptr) continue;
    const std::string value = KnobText(spec, config.knobs);
    if (value == KnobText(spec, defaults)) continue;
    if (*spec.script_call != '\0') {
      notes.push_back(std::string(spec.name) + "=" + value + " must be passed to " +
                      spec.script_call + "(" + spec.script_keyword + "=" + value +
                      ") in the training script; apply cannot set it");
    } else {
      notes.push_back(std::string(spec.name) + "=" + value +
                      " is a setting of autotune's executor (autotune record); apply has no "
                      "variable for it");
    }
  }
  return notes;
}

// The same DDP setting for the frameworks that wrap DDP and take it as an argument: the
// Hugging Face Trainer (the rows' hf_trainer_argument) and Lightning's DDPStrategy (DDP's own
// keywords, the rows' script_keyword).
std::vector<std::string> DdpEquivalents(const ConfigFile& config) {
  if (config.framework != Framework::kDdp) return {};
  std::vector<std::string> lines;
  std::string lightning, keywords;
  for (const KnobSpec& spec : KnobTable()) {
    if (!KnobInFramework(spec, Framework::kDdp)) continue;
    const std::string value = PythonValue(spec, config.knobs);
    if (*spec.hf_trainer_argument != '\0') {
      const std::string argument = spec.hf_trainer_argument;
      lines.push_back("the same in HF Trainer: --" + argument + " " + value +
                      " (TrainingArguments(" + argument + "=" + value + "))");
    }
    if (*spec.script_keyword != '\0') {
      lightning += (lightning.empty() ? "" : ", ") + std::string(spec.script_keyword) + "=" + value;
      keywords += (keywords.empty() ? "" : " or ") + std::string(spec.script_keyword);
    }
  }
  if (lightning.empty()) return lines;
  lines.push_back("the same in Lightning: DDPStrategy(" + lightning + ")");
  lines.push_back("an explicit " + keywords +
                  " in the script wins over the config (the job prints one line when it does)");
  return lines;
}

// Open MPI's launchers pass only the variables named with -x to remote ranks.
bool IsMpiLauncher(const std::string& program) {
  const std::string base = std::filesystem::path(program).filename().string();
  return base == "mpirun" || base == "mpiexec" || base == "orterun";
}

// apply --help's list of the variables, from the knob table.
std::string EnvironmentHelp() {
  std::string out = "Exports, for each knob (backend knobs only when the file sets them):\n";
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.environment == nullptr) continue;
    std::string names;
    for (const EnvVar& var : spec.environment(Knobs{})) {
      names += (names.empty() ? "" : ", ") + var.first;
    }
    out += "  " + std::string(spec.name) + ": " + names + " (" + spec.environment_help + ")\n";
  }
  return out +
         "A config with a ddp: section (PyTorch DDP) also puts autotune's sitecustomize first "
         "on PYTHONPATH: it hands the AUTOTUNE_DDP_* values to DistributedDataParallel unless "
         "the script passes them itself. Under mpirun/mpiexec/orterun every variable is also "
         "passed with -x.\n"
         "Example: autotune apply --config-file best.yaml -- horovodrun -np 16 python train.py";
}

// Writes the NCCL example tuner plugin's CSV for the config's NCCL knobs (allreduce and
// allgather, every size, any topology) and adds NCCL_TUNER_CONFIG_FILE to env.
Status WriteTunerCsv(const ConfigFile& config, const std::string& path, Environment* env) {
  std::vector<NcclTunerRule> rules;
  const std::vector<std::string> collectives = {"allreduce", "allgather"};
  Status s = NcclTunerRulesFromKnobs(config.knobs, collectives, -1, -1, &rules);
  if (!s.ok()) return s.WithPrefix("--nccl-tuner-csv");
  AUTOTUNE_RETURN_IF_ERROR(WriteNcclTunerCsvFile(
      path, rules, "written by autotune apply from its --config-file"));
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  env->emplace_back("NCCL_TUNER_CONFIG_FILE", ec ? path : absolute.string());
  return Status::Ok();
}

}  // namespace

void AddApplyCommand(CLI::App& root, Action* action) {
  struct Options {
    std::string config_file;
    bool print_env = false;
    std::string tuner_csv;
    std::vector<std::string> command;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "apply",
      "Run a production command with a config file's knobs as environment variables "
      "(HOROVOD_*, NCCL_*, OMPI_MCA_*)");
  app->footer(EnvironmentHelp());
  app->add_option("--config-file", opts->config_file,
                  "Config file (YAML of DESIGN.md, horovodrun's --config-file superset); "
                  "validated before anything runs")
      ->required();
  app->add_flag("--print-env", opts->print_env,
                "Print the variables as `export K=V` lines instead of running a command");
  app->add_option("--nccl-tuner-csv", opts->tuner_csv,
                  "Also write the config's NCCL algorithm/protocol/channels as the CSV that "
                  "NCCL's example tuner plugin reads, and export NCCL_TUNER_CONFIG_FILE (set "
                  "NCCL_TUNER_PLUGIN to the built plugin yourself). Needs nccl algo and proto");
  app->add_option("command", opts->command,
                  "The command to run after `--`; its exit code is apply's exit code");
  app->callback([opts, action] {
    *action = [opts]() -> int {
      ConfigFile config;
      Status status = LoadConfigFile(opts->config_file, &config);
      if (!status.ok()) return Fail(status);
      Environment env;
      status = EnvironmentFor(config, &env);
      if (!status.ok()) return Fail(status);
      if (!opts->tuner_csv.empty()) {
        status = WriteTunerCsv(config, opts->tuner_csv, &env);
        if (!status.ok()) return Fail(status);
      }
      if (opts->print_env) {
        if (!opts->command.empty()) {
          return Fail("apply: give either --print-env or a command after --, not both");
        }
        for (const auto& [key, value] : env) {
          std::cout << "export " << key << "=" << ShellQuote(value) << "\n";
        }
        for (const std::string& note : UnappliedNotes(config)) std::cout << "# " << note << "\n";
        for (const std::string& line : DdpEquivalents(config)) std::cout << "# " << line << "\n";
        return 0;
      }
      if (opts->command.empty()) {
        return Fail("apply: no command to run; put it after `--`, or use --print-env");
      }
      for (const auto& [key, value] : env) {
        if (setenv(key.c_str(), value.c_str(), 1) != 0) {
          return Fail("apply: cannot set " + key + ": " + std::strerror(errno));
        }
      }
      for (const std::string& note : UnappliedNotes(config)) {
        std::cerr << "autotune: note: " << note << "\n";
      }
      for (const std::string& line : DdpEquivalents(config)) {
        std::cerr << "autotune: note: " << line << "\n";
      }
      std::vector<std::string> command = opts->command;
      if (IsMpiLauncher(command[0])) {  // every rank gets the variables, on every host
        std::vector<std::string> forward;
        for (const auto& [key, value] : env) {
          forward.push_back("-x");
          forward.push_back(key);
        }
        command.insert(command.begin() + 1, forward.begin(), forward.end());
      }
      std::vector<char*> argv;
      for (std::string& arg : command) argv.push_back(arg.data());
      argv.push_back(nullptr);
      std::cout.flush();
      execvp(argv[0], argv.data());
      // Only reached when the command could not be started.
      int error = errno;
      Fail("apply: cannot run " + command[0] + ": " + std::strerror(error));
      return error == ENOENT ? 127 : 126;
    };
  });
}

}  // namespace autotune::cli
