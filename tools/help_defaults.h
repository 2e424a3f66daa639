// Help that states each option's default once: CLI11 captures it from the variable the option
// is bound to (the struct initializer, `->capture_default_str()`), and the help prints it at
// the end of the option's description ("..., >= 1. Default 20"), where autotune's help has
// always said it, instead of after the type ("INT=20").
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace autotune::cli {

class DefaultInDescription : public CLI::Formatter {
 public:
  // CLI11's text, less the "=DEFAULT" after the type.
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string out = CLI::Formatter::make_option_opts(opt);
    const std::string shown = "=" + opt->get_default_str();
    if (opt->get_default_str().empty()) return out;
    const size_t at = out.find(shown);
    if (at != std::string::npos) out.erase(at, shown.size());
    return out;
  }
  // The description, then "Default D" when a default was captured.
  std::string make_option_desc(const CLI::Option* opt) const override {
    const std::string description = opt->get_description();
    if (opt->get_default_str().empty()) return description;
    return description + (description.empty() ? "" : " ") + "Default " + opt->get_default_str();
  }
};

// Makes app's help (a subcommand's) print captured defaults with DefaultInDescription.
inline void PrintDefaultsInDescriptions(CLI::App* app) {
  app->formatter(std::make_shared<DefaultInDescription>());
}

}  // namespace autotune::cli
