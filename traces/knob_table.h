// The knob table: every fact about every knob, once (DESIGN.md, "Knobs"). Validation, text,
// JSON and YAML I/O, CLI flags and their help, the tuner's search space, the set of knobs
// that can change inside a run, the environment that `apply` exports and the executor sets,
// log columns and the MPI broadcast of a setting are all derived from it. Adding a knob is
// one field in Knobs (traces/knobs.h), one row in kKnobTable (knob_table.cc) and the code
// that uses it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "traces/framework.h"
#include "traces/status.h"

namespace autotune {

struct Knobs;

enum class KnobType { kReal, kInteger, kBool, kChoice };

// Runtime knobs can change between samples inside one run; per-launch knobs are read once
// (library environment at init, a training-script argument) and change only between runs.
enum class KnobLifetime { kRuntime, kPerLaunch };

// How the tuner spaces a numeric knob: linear, log, log(1 + x) (a range that includes 0), or
// as unordered categories (ids such as Open MPI's algorithm numbers).
enum class KnobScale { kLinear, kLog, kLog1p, kCategorical };

// Which runs a knob exists for: every run, or only runs of one backend.
enum class KnobBackendScope { kAll, kMpi, kNccl };

// Whether a search moves a knob unless told otherwise, or only when asked (a knob `apply`
// cannot set, such as a training-script argument: `search --tune-groups`); a knob not moved
// is held at the run's value.
enum class KnobSearched { kByDefault, kOnRequest };

// Which frameworks a knob exists for: every one (the collective libraries' knobs), or one.
enum class KnobFrameworkScope { kAll, kHorovod, kDdp };

// The library that reads a knob's environment variable(s); kTorch: autotune's sitecustomize,
// which hands them to DistributedDataParallel (python/).
enum class KnobLibrary { kNone, kHorovod, kNccl, kOpenMpi, kTorch };

// A pointer to the Knobs field that holds the knob's value.
using KnobField =
    std::variant<double Knobs::*, int Knobs::*, bool Knobs::*, std::string Knobs::*>;

// One environment variable and its value; value "" means "unset: the library's default".
using EnvVar = std::pair<std::string, std::string>;

struct KnobSpec {
  const char* name = "";  // "fusion_threshold_mb": the key in JSON, CSV and the tuner's space
  KnobType type = KnobType::kReal;
  KnobField field{};
  const char* unit = "";  // "MB", "ms", "entries", "" (none)
  double min = 0;      // numeric range, inclusive (kReal, kInteger)
  double max = 0;
  std::vector<std::string> choices = {};  // accepted values (kChoice); "" = the library's default
  // The text that means "leave the library's own default" (not exported, not written to
  // YAML, not shown in summaries); nullptr when every value is set explicitly.
  const char* unset_value = nullptr;
  KnobLifetime lifetime = KnobLifetime::kRuntime;
  KnobBackendScope scope = KnobBackendScope::kAll;
  const char* flag = "";  // "--fusion-threshold-mb" (a boolean also gets --no-...)
  const char* help = "";  // what the knob does; range and default are appended from the row
  const char* flag_group = "Knobs";  // the --help section: "Knobs" or "Backend knobs"
  const char* yaml_section = "";  // "params", "autotune_extra", "autotune_extra.nccl", ...
  const char* yaml_key = "";  // the key inside that section
  KnobFrameworkScope framework = KnobFrameworkScope::kAll;  // the runs the knob exists for
  KnobLibrary library = KnobLibrary::kNone;
  // The variables the knob becomes, from its value (empty: none; value "": unset).
  std::vector<EnvVar> (*environment)(const Knobs&) = nullptr;
  const char* environment_help = "";  // how the value is encoded, for `apply --help`
  // Where a training script takes the knob, for what `apply` prints: `script_keyword` is the
  // keyword argument that takes the value ("" when none); a knob that no variable carries
  // names the call that takes it in `script_call` ("hvd.DistributedOptimizer"), and DDP's
  // keywords are DistributedDataParallel's (Lightning's DDPStrategy passes them on).
  const char* script_call = "";
  const char* script_keyword = "";
  // The Hugging Face Trainer's argument for the same setting (a TrainingArguments field and
  // its --flag); "" when it has none.
  const char* hf_trainer_argument = "";
  const char* summary_label = nullptr;  // "threshold" in KnobsShort; nullptr: not shown
  const char* summary_unit = "";        // "MB" in "threshold=128MB"
  // Its column in Horovod's autotune log (formats/horovod_autotune_log.h), 0-5; -1: none.
  // Column 2, torus_allreduce, is no knob's (autotune has no torus allreduce).
  int horovod_log_column = -1;
  const char* horovod_log_name = nullptr;  // that column's name ("tensor_fusion_threshold")
  // The column holds whether the value is above 0, as 0/1 (Horovod's cache_enabled), not
  // the value itself.
  bool horovod_log_as_enabled = false;
  // How the tuner's search space holds the knob (every knob of the run's backend is in it).
  KnobScale scale = KnobScale::kLinear;
  std::vector<std::string> search_choices = {};  // kChoice: the subset searched ({} = all)
  // The values `simulate --grid` sweeps ({} = the knob keeps the base setting's value).
  std::vector<std::string> grid_values = {};
  // Hierarchical knobs: only meaningful with more than one node and more than one rank per
  // node (and, for allgather, when the workload has allgather tensors).
  bool needs_hierarchy = false;
  bool needs_allgather = false;
  KnobSearched searched = KnobSearched::kByDefault;  // by default, or only on request
  // Not a dimension of any search space: a search sets it from the setting of the others
  // (tuner::WithCompanionKnobs), and samples are matched without it.
  bool set_with_others = false;
};

// Every knob, in the order tables, CSV files and the search space show them.
std::span<const KnobSpec> KnobTable();
// The row of `name`; nullptr when no knob has that name.
const KnobSpec* FindKnob(const std::string& name);

// True when a search moves the knob only on request (its row's `searched` column).
bool KnobSearchedOnRequest(const KnobSpec& spec);

// True when the knob exists for runs of `framework` (its row's framework scope).
bool KnobInFramework(const KnobSpec& spec, Framework framework);

// Open MPI's TCP BTL eager limit when none is set (btl_tcp_eager_limit; the knob
// mpi_tcp_eager_limit at 0), bytes, header included.
inline constexpr int64_t kOpenMpiTcpEagerLimit = 64 * 1024;
// The limit a value of the knob mpi_tcp_eager_limit puts in effect (0: Open MPI's own).
inline int64_t EffectiveTcpEagerLimit(int64_t knob) {
  return knob > 0 ? knob : kOpenMpiTcpEagerLimit;
}

// The row whose value lives in `field` (e.g. &Knobs::nccl_algo): code that needs a knob's
// name or facts reaches its row through the field, never through a spelled-out name.
// REQUIRES: field is the field of a row (every Knobs field is).
const KnobSpec& KnobOfField(KnobField field);

// Parses `text` for the knob (type checked, range NOT checked) into knobs.
Status SetKnobText(const KnobSpec& spec, const std::string& text, Knobs* knobs);
// The boolean spellings every parser of a knob value accepts: 1, true, True, on, yes and 0,
// false, False, off, no. Returns false (and leaves *value) for any other text.
bool ParseBoolText(const std::string& text, bool* value);
// A real knob's value at the precision its text carries (KnobText, the environment, logs and
// the config files a search writes): 6 significant digits. Settings the tuner proposes are
// rounded to it so that the job runs exactly the setting that is stored and reported.
double RoundToKnobPrecision(double value);
// Sets the knob from its numeric value, the inverse of KnobNumber (kReal: as is; kInteger:
// rounded; kBool: value != 0; kChoice: choices[value]). Range NOT checked. REQUIRES for kChoice
// an index of choices.
void SetKnobNumber(const KnobSpec& spec, double value, Knobs* knobs);
// The knob's value as text ("128", "0.5", "true", "ring").
std::string KnobText(const KnobSpec& spec, const Knobs& knobs);
// The knob's numeric value (bool: 0/1; kChoice: the index in choices). REQUIRES a known value.
double KnobNumber(const KnobSpec& spec, const Knobs& knobs);
// OK when the knob's value is inside its range / choices, else names knob, value and range.
Status ValidateKnob(const KnobSpec& spec, const Knobs& knobs);
// True when the knob's value is its unset_value (the library decides).
bool KnobIsUnset(const KnobSpec& spec, const Knobs& knobs);
// The range, choices and lifetime: "Range 0-64. Per launch."; "" for a runtime boolean.
std::string KnobLimitsText(const KnobSpec& spec);
// The default from Knobs' initializers: "Default 128", "Default off", "Default: the library's"
// (the knob flags' help is the row's help, KnobLimitsText, then this).
std::string KnobDefaultText(const KnobSpec& spec);

// The environment of a setting for one library (kNone: every library), in table order. A
// knob at its unset_value gives its variable(s) with value "" (unset). `apply` exports the
// variables with a value; the executor sets them all (unsetting the "" ones, so a run really
// uses the library's default it records).
std::vector<EnvVar> KnobEnvironment(const Knobs& knobs, KnobLibrary library = KnobLibrary::kNone);

// The runtime knobs as numbers, in table order: what rank 0 broadcasts when a run's setting
// changes inside the run (record --autotune).
std::vector<double> EncodeRuntimeKnobs(const Knobs& knobs);
// The inverse of EncodeRuntimeKnobs over `base` (per-launch knobs kept). REQUIRES
// values.size() == the number of runtime knobs.
Knobs DecodeRuntimeKnobs(std::span<const double> values, const Knobs& base);

// True when a and b differ at most in runtime knobs (those that may change inside one run).
bool SameExceptRuntimeKnobs(const Knobs& a, const Knobs& b);

}  // namespace autotune
