// `autotune workloads [NAME]`: lists the built-in workloads or prints one as a file.
#include <cstdio>
#include <iostream>
#include <memory>

#include "tools/command.h"
#include "traces/workload.h"

namespace autotune::cli {

void AddWorkloadsCommand(CLI::App& root, Action* action) {
  auto name = std::make_shared<std::string>();
  CLI::App* app = root.add_subcommand(
      "workloads",
      "List the built-in workloads, or print one (NAME) in the workload file format: a "
      "starting point for your own FILE.json");
  app->add_option("name", *name, "Built-in workload to print (resnet50, vgg16, bert-large, gpt2)");
  app->callback([name, action] {
    *action = [name]() -> int {
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
