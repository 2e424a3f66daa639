#include "tools/knob_flags.h"

namespace autotune::cli {

void KnobFlags::Add(CLI::App* app, bool with_config_file) {
  auto add = [&](const std::string& knob, CLI::Option* opt) { options_.push_back({knob, opt}); };
  add("fusion_threshold_mb",
      app->add_option("--fusion-threshold-mb", values_.fusion_threshold_mb,
                      "Tensor fusion buffer size in MB (1 MB = 1048576 bytes); 0 = no fusion. "
                      "Range 0-512. Default 128")
          ->group("Knobs"));
  add("cycle_time_ms", app->add_option("--cycle-time-ms", values_.cycle_time_ms,
                                       "Background cycle period in ms. Range 0.1-100. Default 1")
                           ->group("Knobs"));
  add("cache_capacity",
      app->add_option("--cache-capacity", values_.cache_capacity,
                      "Response cache capacity in entries; 0 = off. Range 0-4096. Default 1024")
          ->group("Knobs"));
  add("hierarchical_allreduce",
      app->add_flag("--hierarchical-allreduce,!--no-hierarchical-allreduce",
                    values_.hierarchical_allreduce,
                    "Hierarchical allreduce (intra reduce-scatter, cross allreduce, intra "
                    "allgather). Default off")
          ->group("Knobs"));
  add("hierarchical_allgather",
      app->add_flag("--hierarchical-allgather,!--no-hierarchical-allgather",
                    values_.hierarchical_allgather,
                    "Hierarchical allgather (intra gather, cross allgather, intra broadcast). "
                    "Default off")
          ->group("Knobs"));
  add("num_groups",
      app->add_option("--num-groups", values_.num_groups,
                      "Fusion groups; 0 = greedy fusion of all ready tensors. Range 0-64. "
                      "Default 0")
          ->group("Knobs"));
  add("nccl_algo", app->add_option("--nccl-algo", values_.nccl_algo,
                                   "NCCL_ALGO (ring, tree, ...; per launch). Default: NCCL's")
                       ->group("Backend knobs"));
  add("nccl_proto", app->add_option("--nccl-proto", values_.nccl_proto,
                                    "NCCL_PROTO (simple, ll, ll128; per launch). Default: NCCL's")
                        ->group("Backend knobs"));
  add("nccl_max_nchannels",
      app->add_option("--nccl-max-nchannels", values_.nccl_max_nchannels,
                      "NCCL_MAX_NCHANNELS, 1-64; 0 = NCCL's default (per launch). Default 0")
          ->group("Backend knobs"));
  add("nccl_cross",
      app->add_option("--nccl-cross", values_.nccl_cross,
                      "Hierarchical cross-node step on GPUs: nccl, or mpi with host staging. "
                      "Default nccl")
          ->group("Backend knobs"));
  add("mpi_allreduce_algorithm",
      app->add_option("--mpi-allreduce-algorithm", values_.mpi_allreduce_algorithm,
                      "Open MPI coll_tuned allreduce algorithm 1-6; 0 = Open MPI decides "
                      "(per launch). Default 0")
          ->group("Backend knobs"));
  if (with_config_file) {
    app->add_option("--config-file", config_file_,
                    "YAML config (horovodrun's --config-file format plus autotune_extra); "
                    "flags given override it");  // a missing file is reported by Resolve,
                                                 // once, not by every rank's parser
  }
}

Status KnobFlags::Resolve(Knobs* knobs, std::set<std::string>* constants,
                          ConfigFile* config) const {
  ConfigFile file;
  if (!config_file_.empty()) AUTOTUNE_RETURN_IF_ERROR(LoadConfigFile(config_file_, &file));
  Knobs result = file.knobs;
  std::set<std::string> set = file.set_knobs;
  for (const auto& [name, option] : options_) {
    if (option->count() == 0) continue;
    AUTOTUNE_RETURN_IF_ERROR(SetKnob(&result, name, KnobValue(values_, name)));
    set.insert(name);
  }
  AUTOTUNE_RETURN_IF_ERROR(result.Validate());
  *knobs = result;
  if (constants) *constants = set;
  if (config) *config = file;
  return Status::Ok();
}

}  // namespace autotune::cli
