// `autotune workloads [NAME]`: lists the built-in workloads or prints one as a file;
// `--from-torch MODEL` measures a real PyTorch model's (autotune_torch.workload).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tools/command.h"
#include "tools/flag_checks.h"
#include "tools/help_defaults.h"
#include "tools/launch.h"
#include "tools/torch_python.h"
#include "traces/workload.h"

namespace autotune::cli {
namespace {

struct FromTorch {
  std::string model;  // torchvision:NAME or package.module:callable
  int batch = 8;
  std::string input = "3,224,224";
  int steps = 5;
};

// Runs the helper under TorchPython() and parses what it prints as a workload.
int RunFromTorch(const FromTorch& f) {
  TorchHelperOutput helper;
  const Status started = RunTorchHelper(
      "autotune_torch.workload",
      {"--model", f.model, "--batch", std::to_string(f.batch), "--input", f.input, "--steps",
       std::to_string(f.steps)},
      {}, &helper);
  if (!started.ok()) return Fail(started.WithPrefix("workloads --from-torch"));
  if (helper.exit_status != 0) {
    if (TorchMissing(helper.last_err_line)) {
      return Fail("--from-torch needs PyTorch for " + TorchPython() +
                  " (apt-get install python3-torch python3-torchvision)");
    }
    return Fail("--from-torch " + f.model + ": " +
                (helper.last_err_line.empty() ? "the helper failed" : helper.last_err_line));
  }
  const std::string& out = helper.out;
  Workload w;
  Status s = ParseWorkloadJson(out, "--from-torch " + f.model, &w);
  if (!s.ok()) return Fail(s);
  // The helper's own last note (e.g. parameters without a gradient), not the model's prints.
  const std::string& note = helper.last_err_line;
  if (note.rfind("autotune_torch.workload: ", 0) == 0) std::cerr << EscapeForTerminal(note) << "\n";
  std::cout << WorkloadToJson(w).dump(1) << "\n";
  return 0;
}

}  // namespace

void AddWorkloadsCommand(CLI::App& root, Action* action) {
  auto name = std::make_shared<std::string>();
  auto torch = std::make_shared<FromTorch>();
  CLI::App* app = root.add_subcommand(
      "workloads",
      "List the built-in workloads, or print one (NAME) in the workload file format: a "
      "starting point for your own FILE.json");
  PrintDefaultsInDescriptions(app);
  std::string builtin;
  for (const std::string& n : BuiltinWorkloadNames()) builtin += (builtin.empty() ? "" : ", ") + n;
  app->add_option("name", *name, "Built-in workload to print (" + builtin + ")");
  app->add_option("--from-torch", torch->model,
                  "Measure a real PyTorch model instead: torchvision:NAME or "
                  "package.module:callable (returning an nn.Module; the current folder is "
                  "importable). Runs a few forward/backward/SGD steps with the interpreter of "
                  "AUTOTUNE_PYTHON (default /usr/bin/python3) and prints its workload: every "
                  "parameter in gradient-ready order with its measured ready time");
  app->add_option("--batch", torch->batch, "--from-torch: samples per step.")
      ->capture_default_str()
      ->check(AtLeast(1));
  app->add_option("--input", torch->input, "--from-torch: one sample's shape.")
      ->capture_default_str();
  app->add_option("--steps", torch->steps, "--from-torch: measured steps.")
      ->capture_default_str()
      ->check(AtLeast(1));
  app->callback([name, torch, action] {
    *action = [name, torch]() -> int {
      if (!torch->model.empty()) {
        if (!name->empty()) return Fail("workloads: give either NAME or --from-torch, not both");
        return RunFromTorch(*torch);
      }
      if (!name->empty()) {
        Workload w;
        Status s = BuiltinWorkload(*name, &w);
        if (!s.ok()) return Fail(s);
        std::cout << WorkloadToJson(w).dump(1) << "\n";
        return 0;
      }
      std::printf("%-12s %8s %14s %10s %12s %12s\n", "name", "tensors", "parameters", "MiB",
                  "forward ms", "backward ms");
      for (const std::string& n : BuiltinWorkloadNames()) {
        Workload w;
        Status s = BuiltinWorkload(n, &w);
        if (!s.ok()) return Fail(s);
        std::printf("%-12s %8zu %14lld %10.1f %12.1f %12.1f\n", n.c_str(), w.tensors.size(),
                    static_cast<long long>(w.total_elements()),
                    static_cast<double>(w.total_bytes()) / (1 << 20), w.forward_ms,
                    w.backward_ms);
      }
      return 0;
    };
  });
}

}  // namespace autotune::cli
