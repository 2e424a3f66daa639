#include "tools/knob_flags.h"

namespace autotune::cli {

void KnobFlags::Add(CLI::App* app, bool with_config_file, const KnobDefaultHelp& default_help) {
  for (const KnobSpec& spec : KnobTable()) {
    const std::string limits = KnobLimitsText(spec);
    const std::string help = std::string(spec.help) + " " + limits + (limits.empty() ? "" : " ") +
                             (default_help ? default_help(spec) : KnobDefaultText(spec));
    CLI::Option* option = std::visit(
        [&](auto member) -> CLI::Option* {
          auto& value = values_.*member;
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, bool>) {
            const std::string flag = spec.flag;
            return app->add_flag(flag + ",!--no-" + flag.substr(2), value, help);
          } else {
            return app->add_option(spec.flag, value, help);
          }
        },
        spec.field);
    options_.push_back({spec.name, option->group(spec.flag_group)});
  }
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
