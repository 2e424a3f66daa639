// The hostile-input suite: the real `autotune` binary run as a careless or hostile user would,
// one table row per invocation, every command and every input format (Horovod timelines, DDP
// traces, config files, workloads, databases, flags, output paths). Each row states the exit
// code and the phrase of the one stderr line it must print; after every row the database
// passes PRAGMA integrity_check, `runs --json` still lists every run stored before it, and a
// refused write left the database's rows as they were.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"

namespace autotune::testing {
namespace {

using Json = nlohmann::json;

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Horovod's autotune log header (horovod/common/parameter_manager.cc), with its newline.
constexpr const char* kHorovodLogHeader =
    "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
    "tensor_fusion_threshold,score\n";

std::string FixtureTimeline() {
  return std::string(AUTOTUNE_FIXTURES_DIR) + "/horovod/resnet50_default.json";
}

// A DDP trace rank file of a 2-parameter model: `steps` steps, rank `rank` of `world`.
Json DdpRank(int rank, int world, int steps) {
  Json j = {{"format", "autotune-ddp-trace"},
            {"version", 1},
            {"rank", rank},
            {"world_size", world},
            {"hostname", "node0"},
            {"bucket_cap_mb", 25},
            {"first_bucket_mb", 1},
            {"gradient_as_bucket_view", false},
            {"parameters",
             {{{"name", "fc.weight"}, {"shape", {256, 256}}, {"dtype", "float32"}},
              {{"name", "fc.bias"}, {"shape", {256}}, {"dtype", "float32"}}}},
            {"steps", Json::array()}};
  for (int k = 0; k < steps; ++k) {
    j["steps"].push_back(
        {{"forward_end_us", 1000.0 + k},
         {"end_us", 5000.0 + 10 * k},
         {"ready_us", {2000.0, 1500.0}},
         {"buckets",
          {{{"index", 0}, {"parameters", {0, 1}}, {"start_us", 2100.0}, {"end_us", 3000.0}}}}});
  }
  return j;
}

// Counts of every table's rows: what "the database's rows as they were" compares.
std::string RowCounts(const std::string& db) {
  std::string out;
  for (const char* table : {"runs", "tensors", "steps", "tensor_events", "cycles", "collectives",
                            "calibrations", "samples"}) {
    out += std::string(table) + "=" +
           std::to_string(QueryInt(db, std::string("SELECT count(*) FROM ") + table)) + " ";
  }
  return out;
}

// One case's world: a temporary folder holding a copy of the suite's database.
class Env {
 public:
  explicit Env(const std::string& template_db) : db(dir.File("runs.db")) {
    std::filesystem::copy_file(template_db, db);
  }
  std::string File(const std::string& name, const std::string& text) const {
    const std::string path = dir.File(name);
    WriteFile(path, text);
    return path;
  }
  std::string Folder(const std::string& name) const {
    const std::string path = dir.File(name);
    std::filesystem::create_directories(path);
    return path;
  }
  // A character device node made here (as root), never the machine's /dev entry.
  std::string Device(const std::string& name, unsigned major_number, unsigned minor_number) const {
    const std::string path = dir.File(name);
    if (mknod(path.c_str(), S_IFCHR | 0666, makedev(major_number, minor_number)) != 0) return "";
    return path;
  }
  std::string Full() const { return Device("full", 1, 7); }
  std::string Zero() const { return Device("zero", 1, 5); }
  // A DDP trace folder of `world` ranks; `edit` changes each rank's file before it is written.
  std::string Ddp(const std::string& name, int world = 2, int steps = 4,
                  const std::function<void(Json&, int)>& edit = nullptr) const {
    const std::string folder = Folder(name);
    for (int r = 0; r < world; ++r) {
      Json j = DdpRank(r, world, steps);
      if (edit) edit(j, r);
      WriteFile(folder + "/rank" + std::to_string(r) + ".json", j.dump());
    }
    return folder;
  }
  // The fixture timeline with every event passed through `edit`.
  std::string Timeline(const std::string& name, const std::function<void(Json&)>& edit) const {
    Json events = Json::parse(ReadFile(FixtureTimeline()));
    for (Json& e : events) edit(e);
    return File(name, events.dump());
  }
  std::string Config(const std::string& name, const std::string& yaml) const {
    return File(name, yaml);
  }

  TempDir dir;
  std::string db;
};

struct Case {
  std::string name;
  std::function<std::string(Env&)> args;  // after `autotune `, shell-quoted; may redirect
  int exit_code;
  std::string phrase;  // in the one stderr line; "" = stderr stays empty (exit 0)
  std::function<void(Env&)> check = nullptr;  // more to assert afterwards
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// Runs sql on the database at db with the sqlite3 shell (to make a newer or damaged copy).
void Sql(Env& e, const std::string& db, const std::string& sql) {
  const CommandResult r = RunCommand({"sqlite3", db, sql}, e.dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

std::string Db(Env& e) { return " --db " + Quote(e.db); }

std::string GoodConfig(Env& e) {
  return e.Config("good.yaml",
                  "params:\n  fusion_threshold_mb: 32\n  cycle_time_ms: 2\n"
                  "autotune_extra:\n  nccl:\n    algo: ring\n    proto: simple\n");
}

// stderr's lines less the notes (`search: note: ...`), which inform and refuse nothing.
std::string WithoutNotes(const std::string& err) {
  std::string out, line;
  std::istringstream in(err);
  while (std::getline(in, line)) {
    if (line.find(": note: ") == std::string::npos) out += line + "\n";
  }
  return out;
}

// Every case of the suite.
std::vector<Case> Cases() {
  std::vector<Case> c;
  const auto add = [&](std::string name, std::function<std::string(Env&)> args, int code,
                       std::string phrase, std::function<void(Env&)> check = nullptr) {
    c.push_back({std::move(name), std::move(args), code, std::move(phrase), std::move(check)});
  };
  const std::string tl = FixtureTimeline();
  // One row per case, kept on one line each so that the table reads as a table.
  // clang-format off

  // --- flags and commands -------------------------------------------------------------
  add("unknown_command", [](Env&) { return "frobnicate"; }, 2, "unknown command 'frobnicate'");
  add("unknown_command_control_bytes", [](Env&) { return "$(printf 'frob\\001\\377')"; }, 2,
      "unknown command 'frob\\x01\\xff'");
  add("no_command", [](Env&) { return ""; }, 2, "subcommand");
  add("record_np_zero", [](Env& e) { return "record --np 0" + Db(e); }, 2, "--np must be at least 1");
  add("record_np_negative", [](Env& e) { return "record --np -4" + Db(e); }, 2, "--np must be at least 1");
  add("record_np_text", [](Env& e) { return "record --np four" + Db(e); }, 2, "--np");
  add("calibrate_np_zero", [](Env& e) { return "calibrate --np 0" + Db(e); }, 2, "--np must be at least 1");
  add("import_nodes_zero", [tl](Env& e) { return "import --horovod-timeline " + tl + " --nodes 0" + Db(e); }, 2, "--nodes must be at least 1");
  add("import_host_cores_zero", [tl](Env& e) { return "import --horovod-timeline " + tl + " --host-cores 0" + Db(e); }, 2, "--host-cores must be at least 1");
  add("import_untraced_zero", [tl](Env& e) { return "import --horovod-timeline " + tl + " --untraced-step-ms 0" + Db(e); }, 2, "--untraced-step-ms must be greater than 0");
  add("import_step_log_no_json", [tl](Env& e) { return "import --horovod-timeline " + tl + " --step-log " + tl + Db(e); }, 1, "--step-log");
  add("import_traced_zero", [tl](Env& e) { return "import --horovod-timeline " + tl + " --traced-step-ms 0" + Db(e); }, 2, "--traced-step-ms must be greater than 0");
  add("import_traced_step_log_no_json", [tl](Env& e) { return "import --horovod-timeline " + tl + " --traced-step-log " + tl + Db(e); }, 1, "--traced-step-log " + tl + " line ");
  add("import_traced_step_ms_and_log", [tl](Env& e) { return "import --horovod-timeline " + tl + " --traced-step-ms 5 --traced-step-log " + tl + Db(e); }, 1, "give --traced-step-ms or --traced-step-log, not both");
  add("import_warmup_negative", [tl](Env& e) { return "import --horovod-timeline " + tl + " --warmup-steps -1" + Db(e); }, 2, "--warmup-steps must be at least 0");
  add("import_max_steps_negative", [tl](Env& e) { return "import --horovod-timeline " + tl + " --max-steps -2" + Db(e); }, 2, "--max-steps must be at least 0");
  add("import_neither_source", [](Env& e) { return "import" + Db(e); }, 1, "give one of --horovod-timeline");
  add("autotune_log_bad_cell", [](Env& e) { return "import --horovod-autotune-log " + e.File("hvd.csv", std::string(kHorovodLogHeader) + "0,0,0, 1,5,4,310\n0,0,0, 1,x,4,300\n") + " --run 1" + Db(e); }, 1, "hvd.csv line 3: cycle_time_ms \"x\" is not a number");
  add("autotune_log_without_run", [](Env& e) { return "import --horovod-autotune-log " + e.File("hvd.csv", std::string(kHorovodLogHeader) + "0,0,0, 1,5,4,310\n") + Db(e); }, 1, "needs --run N");
  add("autotune_log_of_a_ddp_run", [](Env& e) { return "import --horovod-autotune-log " + e.File("hvd.csv", std::string(kHorovodLogHeader) + "0,0,0, 1,5,4,310\n") + " --run 2" + Db(e); }, 1, "a Horovod autotune log belongs to a Horovod job");
  add("autotune_log_with_nodes", [](Env& e) { return "import --horovod-autotune-log " + e.File("hvd.csv", std::string(kHorovodLogHeader) + "0,0,0, 1,5,4,310\n") + " --run 1 --nodes 2" + Db(e); }, 2, "excludes");
  add("autotune_log_is_a_timeline", [tl](Env& e) { return "import --horovod-autotune-log " + tl + " --run 1" + Db(e); }, 1, "not a Horovod autotune log");
  add("autotune_log_torus_row_is_a_note", [](Env& e) { return "import --horovod-autotune-log " + e.File("hvd.csv", std::string(kHorovodLogHeader) + "0,0,1, 1,5,4,310\n0,0,0, 1,5,4,300\n") + " --run 1" + Db(e); }, 0, "", [](Env& e) {
        EXPECT_EQ(QueryInt(e.db, "SELECT count(*) FROM samples WHERE run_id = 3"), 1); });
  add("import_both_sources", [tl](Env& e) { return "import --horovod-timeline " + tl + " --ddp-trace " + e.Ddp("t") + Db(e); }, 1, "give one of");
  add("timeline_run_zero", [](Env& e) { return "timeline --run 0 --out x.json" + Db(e); }, 2, "--run must be at least 1");
  add("simulate_nodes_huge", [](Env& e) { return "simulate --run 1 --nodes 70000" + Db(e); }, 2, "--nodes must be between 1 and 65536");
  add("compare_confidence_out_of_range", [](Env& e) { return "compare 1 2 --confidence 2" + Db(e); }, 2, "--confidence must be between 0.5 and 0.999");
  add("search_sim_budget_negative", [](Env& e) { return "search --run 1 --sim-budget -1 --out b.yaml" + Db(e); }, 2, "--sim-budget must be at least 0");
  add("workloads_batch_zero", [](Env&) { return "workloads --from-torch torchvision:resnet18 --batch 0"; }, 2, "--batch must be at least 1");
  add("runs_unknown_flag", [](Env& e) { return "runs --bogus" + Db(e); }, 2, "--bogus");
  add("compare_missing_run_id", [](Env& e) { return "compare 1" + Db(e); }, 2, "B");
  add("knob_out_of_range", [](Env& e) { return "simulate --run 1 --cycle-time-ms 0" + Db(e); }, 1, "cycle_time_ms");
  add("knob_not_a_number", [](Env& e) { return "simulate --run 1 --fusion-threshold-mb lots" + Db(e); }, 2, "--fusion-threshold-mb");

  // --- Horovod timelines ----------------------------------------------------------------
  add("timeline_is_directory", [](Env& e) { return "import --horovod-timeline " + e.Folder("dir") + Db(e); }, 1, "it is a directory, not a file");
  add("timeline_is_device", [](Env& e) { return "import --horovod-timeline " + e.Zero() + Db(e); }, 1, "it is a character device, not a file");
  add("timeline_missing", [](Env& e) { return "import --horovod-timeline " + e.dir.File("nope.json") + Db(e); }, 1, "No such file or directory");
  add("timeline_empty", [](Env& e) { return "import --horovod-timeline " + e.File("empty.json", "") + Db(e); }, 1, "empty.json");
  add("timeline_not_json", [](Env& e) { return "import --horovod-timeline " + e.File("t.json", "hello world") + Db(e); }, 1, "t.json");
  add("timeline_object", [](Env& e) { return "import --horovod-timeline " + e.File("t.json", "{\"a\": 1}") + Db(e); }, 1, "t.json");
  add("timeline_empty_array", [](Env& e) { return "import --horovod-timeline " + e.File("t.json", "[]") + Db(e); }, 1, "no recurring allreduce/allgather tensors");
  add("timeline_binary_garbage", [](Env& e) { return "import --horovod-timeline " + e.File("t.json", std::string("\x00\xff\xfe[\x01", 5)) + Db(e); }, 1, "t.json");
  add("timeline_times_1e300", [](Env& e) {
        return "import --horovod-timeline " + e.Timeline("big.json", [](Json& ev) {
                 if (ev.contains("ts")) ev["ts"] = ev["ts"].get<double>() * 1e300;
               }) + Db(e);
      }, 1, "outside (0, 86400000] ms");
  add("timeline_ranks_mismatch", [tl](Env& e) { return "import --horovod-timeline " + tl + " --nodes 4 --ranks-per-node 4" + Db(e); }, 1, "the rank ticks name 4 ranks, but --nodes x --ranks-per-node is 4x4");
  add("timeline_ranks_not_multiple", [tl](Env& e) { return "import --horovod-timeline " + tl + " --nodes 3" + Db(e); }, 1, "not a multiple of 3");
  add("timeline_workload_newline", [tl](Env& e) { return "import --horovod-timeline " + tl + " --workload \"$(printf 'a\\nb')\"" + Db(e); }, 1, "control character");
  add("timeline_workload_5000_bytes", [tl](Env& e) { return "import --horovod-timeline " + tl + " --workload " + std::string(5000, 'w') + Db(e); }, 1, "more than 4096");
  add("timeline_workload_not_utf8", [tl](Env& e) { return "import --horovod-timeline " + tl + " --workload \"$(printf 'a\\377b')\"" + Db(e); }, 1, "not UTF-8");
  add("timeline_workload_empty", [tl](Env& e) { return "import --horovod-timeline " + tl + " --workload ''" + Db(e); }, 0, "");
  add("timeline_warmup_too_many", [tl](Env& e) { return "import --horovod-timeline " + tl + " --warmup-steps 1000" + Db(e); }, 1, "warm-up");
  add("timeline_symlink_loop", [](Env& e) {
        const std::string a = e.dir.File("a.json"), b = e.dir.File("b.json");
        (void)!symlink(b.c_str(), a.c_str());
        (void)!symlink(a.c_str(), b.c_str());
        return "import --horovod-timeline " + a + Db(e);
      }, 1, "Too many levels of symbolic links");
  add("timeline_name_control_bytes", [](Env& e) { return "import --horovod-timeline " + Quote(e.File("t\x01\x1b[31m.json", "[]")) + Db(e); }, 1, "t\\x01\\x1b[31m.json");
  add("timeline_config_dir", [tl](Env& e) { return "import --horovod-timeline " + tl + " --config-file " + e.Folder("conf") + Db(e); }, 1, "cannot read config file");
  add("timeline_truncated_head", [](Env& e) { return "import --horovod-timeline " + e.File("cut.json", ReadFile(FixtureTimeline()).substr(0, 300)) + Db(e); }, 1, "cut.json");

  add("timeline_reimport_reuses_the_run", [tl](Env& e) { return "import --horovod-timeline " + tl + " --nodes 2 --ranks-per-node 2" + Db(e); }, 0, "", [](Env& e) {
        EXPECT_EQ(QueryInt(e.db, "SELECT count(*) FROM runs"), 2) << "a second run of one file";
      });
  add("timeline_reimport_again_adds_a_run", [tl](Env& e) { return "import --again --horovod-timeline " + tl + " --nodes 2 --ranks-per-node 2" + Db(e); }, 0, "", [](Env& e) {
        EXPECT_EQ(QueryInt(e.db, "SELECT count(*) FROM runs"), 3);
        EXPECT_EQ(QueryText(e.db, "SELECT source_hash FROM runs WHERE id = 3"),
                  QueryText(e.db, "SELECT source_hash FROM runs WHERE id = 1"));
      });
  add("timeline_reimport_other_options_adds_a_run", [tl](Env& e) { return "import --horovod-timeline " + tl + " --nodes 2 --ranks-per-node 2 --warmup-steps 2" + Db(e); }, 0, "", [](Env& e) {
        EXPECT_EQ(QueryInt(e.db, "SELECT count(*) FROM runs"), 3);
      });
  add("ddp_reimport_reuses_the_run", [](Env& e) { return "import --ddp-trace " + e.Ddp("ddp") + Db(e); }, 0, "", [](Env& e) {
        EXPECT_EQ(QueryInt(e.db, "SELECT count(*) FROM runs"), 2);
      });

  // --- DDP traces -------------------------------------------------------------------------
  add("ddp_missing_folder", [](Env& e) { return "import --ddp-trace " + e.dir.File("none") + Db(e); }, 1, "no such folder");
  add("ddp_file_not_folder", [](Env& e) { return "import --ddp-trace " + e.File("f.json", "{}") + Db(e); }, 1, "not a folder");
  add("ddp_rank_file_is_folder", [](Env& e) { const std::string d = e.Folder("t"); e.Folder("t/rank0.json"); return "import --ddp-trace " + d + Db(e); }, 1, "it is a directory, not a file");
  add("ddp_rank_file_is_device", [](Env& e) { const std::string d = e.Folder("t"); mknod((d + "/rank0.json").c_str(), S_IFCHR | 0666, makedev(1, 5)); return "import --ddp-trace " + d + Db(e); }, 1, "character device");
  add("ddp_missing_rank", [](Env& e) { const std::string d = e.Ddp("t", 2); std::filesystem::remove(d + "/rank1.json"); return "import --ddp-trace " + d + Db(e); }, 1, "rank1.json");
  add("ddp_ready_all_null", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { for (Json& s : j["steps"]) s["ready_us"] = {nullptr, nullptr}; }) + Db(e); }, 1, "no parameter got a gradient");
  add("ddp_bucket_cap_text", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["bucket_cap_mb"] = "lots"; }) + Db(e); }, 1, "key 'bucket_cap_mb' must be a number");
  add("ddp_view_not_bool", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["gradient_as_bucket_view"] = 3; }) + Db(e); }, 1, "key 'gradient_as_bucket_view' must be true or false");
  add("ddp_bucket_cap_negative", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["bucket_cap_mb"] = -5; }) + Db(e); }, 1, "ddp_bucket_cap_mb");
  add("ddp_world_fraction", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["world_size"] = 2.7; }) + Db(e); }, 1, "\"world_size\" must be an integer");
  add("ddp_world_zero", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["world_size"] = 0; }) + Db(e); }, 1, "\"world_size\" must be between 1 and 65536");
  add("ddp_world_huge", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["world_size"] = 1e12; }) + Db(e); }, 1, "\"world_size\" must be between 1 and 65536");
  add("ddp_rank_mismatch", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int r) { j["rank"] = 1 - r; }) + Db(e); }, 1, "\"rank\" is 1, not 0");
  add("ddp_wrong_format", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["format"] = "other"; }) + Db(e); }, 1, "not an autotune DDP trace");
  add("ddp_not_json", [](Env& e) { const std::string d = e.Folder("t"); WriteFile(d + "/rank0.json", "{{{"); return "import --ddp-trace " + d + Db(e); }, 1, "not an autotune DDP trace");
  add("ddp_shape_over_limit", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["parameters"][0]["shape"] = {int64_t{1} << 40, int64_t{1} << 40}; }) + Db(e); }, 1, "fc.weight");
  add("ddp_shape_too_many_dims", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["parameters"][0]["shape"] = std::vector<int>(100, 1); }) + Db(e); }, 1, "dimensions");
  add("ddp_shape_negative", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["parameters"][0]["shape"] = {-1}; }) + Db(e); }, 1, "non-negative integers");
  add("ddp_dtype_unknown", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["parameters"][0]["dtype"] = "complex128"; }) + Db(e); }, 1, "complex128");
  add("ddp_param_name_control", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["parameters"][0]["name"] = "fc\nweight"; }) + Db(e); }, 1, "control character");
  add("ddp_no_parameters", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["parameters"] = Json::array(); }) + Db(e); }, 1, "\"parameters\" must be a non-empty list");
  add("ddp_steps_not_list", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["steps"] = 5; }) + Db(e); }, 1, "\"steps\" must be a list");
  add("ddp_too_few_steps", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 1) + Db(e); }, 1, "warm-up");
  add("ddp_times_1e300", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { for (Json& s : j["steps"]) s["end_us"] = 1e300; }) + Db(e); }, 1, "outside (0, 86400000] ms");
  add("ddp_end_negative", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { for (Json& s : j["steps"]) s["end_us"] = -5; }) + Db(e); }, 1, "no positive duration");
  add("ddp_ready_time_huge", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { for (Json& s : j["steps"]) s["ready_us"][0] = 1e200; }) + Db(e); }, 1, "more than a day");
  add("ddp_ready_text", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["steps"][0]["forward_end_us"] = "soon"; }) + Db(e); }, 1, "\"forward_end_us\" must be a number");
  add("ddp_bucket_param_out_of_range", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int) { j["steps"][1]["buckets"][0]["parameters"] = {7}; }) + Db(e); }, 1, "bucket 0");
  add("ddp_topology_mismatch", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2) + " --nodes 3" + Db(e); }, 1, "--nodes x --ranks-per-node is 3 ranks; the trace has 2");
  add("ddp_other_job_rank", [](Env& e) { return "import --ddp-trace " + e.Ddp("t", 2, 4, [](Json& j, int r) { if (r == 1) j["bucket_cap_mb"] = 50; }) + Db(e); }, 1, "another job's file");
  add("ddp_workload_newline", [](Env& e) { return "import --ddp-trace " + e.Ddp("t") + " --workload \"$(printf 'x\\ny')\"" + Db(e); }, 1, "control character");
  add("ddp_workload_5000_bytes", [](Env& e) { return "import --ddp-trace " + e.Ddp("t") + " --workload " + std::string(5000, 'd') + Db(e); }, 1, "more than 4096");

  // --- config files -------------------------------------------------------------------------
  add("config_is_directory", [](Env& e) { return "apply --print-env --config-file " + e.Folder("c"); }, 1, "cannot read config file");
  add("config_is_device", [](Env& e) { return "apply --print-env --config-file " + e.Zero(); }, 1, "it is a character device, not a file");
  add("config_missing", [](Env& e) { return "apply --print-env --config-file " + e.dir.File("none.yaml"); }, 1, "No such file or directory");
  add("config_empty", [](Env& e) { return "apply --print-env --config-file " + e.Config("e.yaml", ""); }, 1, "is empty");
  add("config_too_large", [](Env& e) { return "apply --print-env --config-file " + e.Config("big.yaml", "# " + std::string(2 << 20, 'x') + "\n"); }, 1, "larger than the limit of 1 MiB");
  add("config_bad_yaml", [](Env& e) { return "apply --print-env --config-file " + e.Config("b.yaml", "params:\n  fusion_threshold_mb: [1, 2\n"); }, 1, "b.yaml");
  add("config_value_text", [](Env& e) { return "apply --print-env --config-file " + e.Config("b.yaml", "params:\n  fusion_threshold_mb: lots\n"); }, 1, "fusion_threshold_mb");
  add("config_value_nan", [](Env& e) { return "apply --print-env --config-file " + e.Config("b.yaml", "params:\n  cycle_time_ms: .nan\n"); }, 1, "cycle_time_ms");
  add("config_key_twice", [](Env& e) { return "apply --print-env --config-file " + e.Config("b.yaml", "params:\n  cycle_time_ms: 1\n  cycle_time_ms: 2\n"); }, 1, "cycle_time_ms");
  add("config_bool_two", [](Env& e) { return "apply --print-env --config-file " + e.Config("b.yaml", "params:\n  hierarchical_allreduce: 2\n"); }, 1, "hierarchical_allreduce");
  add("record_config_directory", [](Env& e) { return "record --np 2 --workload resnet50 --config-file " + e.Folder("c") + Db(e); }, 1, "cannot read config file");
  add("simulate_ddp_knob_on_horovod_run", [](Env& e) { return "simulate --run 1 --ddp-bucket-cap-mb 10" + Db(e); }, 1, "--ddp-bucket-cap-mb is a knob of PyTorch DDP; run 1 is a horovod run");
  add("simulate_horovod_knob_on_ddp_run", [](Env& e) { return "simulate --run 2 --fusion-threshold-mb 8" + Db(e); }, 1, "--fusion-threshold-mb is a knob of Horovod; run 2 is a ddp run");

  // --- workloads ------------------------------------------------------------------------------
  add("workload_is_directory", [](Env& e) { return "record --np 2 --workload " + e.Folder("w") + "/" + Db(e); }, 1, "directory");
  add("workload_is_device", [](Env& e) { return "record --np 2 --workload " + e.Zero() + Db(e); }, 1, "character device");
  add("workload_bad_json", [](Env& e) { return "record --np 2 --workload " + e.File("w.json", "{\"name\": ") + Db(e); }, 1, "w.json");
  add("workload_name_newline", [](Env& e) { return "record --np 2 --workload " + e.File("w.json", R"({"name": "a\nb", "forward_ms": 1, "backward_ms": 1, "optimizer_ms": 1, "tensors": [{"name": "t", "shape": [4], "ready_ms": 1}]})") + Db(e); }, 1, "control character");
  add("workload_unknown_builtin", [](Env&) { return "workloads resnet51"; }, 1, "resnet51");

  // --- databases --------------------------------------------------------------------------------
  add("db_is_directory", [](Env& e) { return "runs --db " + e.Folder("d.db"); }, 1, "d.db");
  add("db_is_text", [](Env& e) { return "runs --db " + e.File("t.db", "not a database at all, just text\n"); }, 1, "t.db");
  add("db_missing", [](Env& e) { return "runs --db " + e.dir.File("none.db"); }, 1, "no such database");
  add("db_empty_file_reads_empty", [](Env& e) { return "runs --db " + e.File("new.db", ""); }, 0, "");
  add("db_newer_user_version", [](Env& e) {
        const std::string db = e.dir.File("newer.db");
        std::filesystem::copy_file(e.db, db);
        Sql(e, db, "PRAGMA user_version = 99");
        return "runs --db " + db;
      }, 1, "PRAGMA user_version", [](Env& e) {
        EXPECT_EQ(QueryInt(e.dir.File("newer.db"), "SELECT count(*) FROM runs"), 2);
      });
  add("db_newer_user_version_import", [tl](Env& e) {
        const std::string db = e.dir.File("newer.db");
        std::filesystem::copy_file(e.db, db);
        Sql(e, db, "PRAGMA user_version = 99");
        return "import --horovod-timeline " + tl + " --db " + db;
      }, 1, "newer than this autotune's", [](Env& e) {
        EXPECT_EQ(QueryInt(e.dir.File("newer.db"), "SELECT count(*) FROM runs"), 2);
        EXPECT_EQ(QueryInt(e.dir.File("newer.db"), "PRAGMA user_version"), 99);
      });
  add("db_bad_row_runs", [](Env& e) {
        const std::string db = e.dir.File("bad.db");
        std::filesystem::copy_file(e.db, db);
        Sql(e, db, "UPDATE runs SET workload_json = '{' WHERE id = 1");
        return "runs --db " + db;
      }, 0, "run 1 workload_json", [](Env& e) {
        const CommandResult r = RunAutotune("runs --json --db " + e.dir.File("bad.db"));
        EXPECT_EQ(r.exit_code, 0);
        EXPECT_NE(r.out.find("\"run\":2"), std::string::npos) << r.out;
      });
  add("db_bad_row_report", [](Env& e) {
        const std::string db = e.dir.File("bad.db");
        std::filesystem::copy_file(e.db, db);
        Sql(e, db, "UPDATE runs SET hosts_json = 'x' WHERE id = 1");
        return "report --db " + db + " --out " + e.dir.File("r.html");
      }, 0, "run 1 hosts_json is not a list", [](Env& e) { EXPECT_FALSE(ReadFile(e.dir.File("r.html")).empty()); });
  add("compare_unknown_run", [](Env& e) { return "compare 1 999" + Db(e); }, 1, "run 999 not found");
  add("diagnose_unknown_run", [](Env& e) { return "diagnose --run 999" + Db(e); }, 1, "run 999 not found");
  add("timeline_unknown_run", [](Env& e) { return "timeline --run 999 --out " + e.dir.File("t.json") + Db(e); }, 1, "run 999 not found");

  // --- output files -----------------------------------------------------------------------------
  const auto still_device = [](Env& e) {
    struct stat st;
    ASSERT_EQ(stat(e.dir.File("full").c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced";
  };
  const auto no_report = [](Env& e) {  // neither a partial page nor a temporary file
    for (const auto& entry : std::filesystem::directory_iterator(e.dir.path())) {
      EXPECT_EQ(entry.path().filename().string().find("r.html"), std::string::npos)
          << entry.path() << " was left";
    }
  };
  add("timeline_out_full_device", [](Env& e) { return "timeline --run 1 --out " + e.Full() + Db(e); }, 1, "no space left on the device", still_device);
  add("timeline_out_directory", [](Env& e) { return "timeline --run 1 --out " + e.Folder("o") + Db(e); }, 1, "it is a directory, not a file");
  add("timeline_out_no_folder", [](Env& e) { return "timeline --run 1 --out " + e.dir.File("none/t.json") + Db(e); }, 1, "No such file or directory");
  add("timeline_out_file_size_limit", [](Env& e) { return "timeline --run 1 --out " + e.dir.File("t.json") + Db(e) + "; ulimit -f 200; exec '" + AutotuneBinary() + "' timeline --run 1 --out " + e.dir.File("t.json") + Db(e); }, 1, "file too large", [](Env& e) {
        // the first run wrote it whole; the second, limited, left it as it was
        EXPECT_GT(ReadFile(e.dir.File("t.json")).size(), size_t{200 * 1024});
        EXPECT_EQ(ReadFile(e.dir.File("t.json")).front(), '[');
      });
  add("timeline_out_symlink_kept", [](Env& e) {
        const std::string target = e.File("target.json", "old");
        (void)!symlink(target.c_str(), e.dir.File("link.json").c_str());
        return "timeline --run 1 --out " + e.dir.File("link.json") + Db(e);
      }, 0, "", [](Env& e) {
        struct stat st;
        ASSERT_EQ(lstat(e.dir.File("link.json").c_str(), &st), 0);
        EXPECT_TRUE(S_ISLNK(st.st_mode));
        EXPECT_EQ(ReadFile(e.dir.File("target.json")).front(), '[');
      });
  add("report_out_full_device", [](Env& e) { return "report --out " + e.Full() + Db(e); }, 1, "no space left on the device", still_device);
  add("report_out_file_size_limit", [](Env& e) { return "report --out " + e.dir.File("r.html") + Db(e) + " >/dev/null 2>&1; rm -f " + e.dir.File("r.html") + "; ulimit -f 200; exec '" + AutotuneBinary() + "' report --out " + e.dir.File("r.html") + Db(e); }, 1, "file too large", no_report);
  add("apply_csv_full_device", [](Env& e) { return "apply --config-file " + GoodConfig(e) + " --nccl-tuner-csv " + e.Full() + " --print-env"; }, 1, "no space left on the device", still_device);
  add("apply_csv_directory", [](Env& e) { return "apply --config-file " + GoodConfig(e) + " --nccl-tuner-csv " + e.Folder("csv") + " --print-env"; }, 1, "it is a directory, not a file");
  add("search_out_full_device", [](Env& e) { return "search --run 1 --sim-budget 0 --out " + e.Full() + Db(e); }, 1, "no space left on the device", still_device);
  add("search_out_directory", [](Env& e) { return "search --run 1 --sim-budget 0 --out " + e.Folder("o") + Db(e); }, 1, "it is a directory, not a file");
  add("search_out_no_folder", [](Env& e) { return "search --run 1 --sim-budget 0 --out " + e.dir.File("none/best.yaml") + Db(e); }, 1, "No such file or directory");
  add("runs_stdout_full", [](Env& e) { return "runs" + Db(e) + " > " + e.Full(); }, 1, "cannot write standard output");
  add("runs_json_stdout_full", [](Env& e) { return "runs --json" + Db(e) + " > " + e.Full(); }, 1, "cannot write standard output");
  add("compare_stdout_full", [](Env& e) { return "compare 1 1" + Db(e) + " > " + e.Full(); }, 1, "cannot write standard output");
  add("apply_print_env_stdout_full", [](Env& e) { return "apply --print-env --config-file " + GoodConfig(e) + " > " + e.Full(); }, 1, "cannot write standard output");
  add("workloads_stdout_full", [](Env& e) { return "workloads > " + e.Full(); }, 1, "cannot write standard output");
  add("workload_json_stdout_full", [](Env& e) { return "workloads resnet50 > " + e.Full(); }, 1, "cannot write standard output");
  add("diagnose_stdout_full", [](Env& e) { return "diagnose --run 1" + Db(e) + " > " + e.Full(); }, 1, "cannot write standard output");
  // clang-format on
  return c;
}

class HostileTest : public ::testing::TestWithParam<Case> {
 public:
  // The suite's database: a Horovod run (1, imported from a real timeline) and a DDP run (2).
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    template_db_ = dir_->File("template.db");
    CommandResult r = RunAutotune("import --horovod-timeline " + FixtureTimeline() +
                                  " --nodes 2 --ranks-per-node 2 --db " + template_db_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string ddp = dir_->File("ddp");
    std::filesystem::create_directories(ddp);
    for (int rank = 0; rank < 2; ++rank) {
      WriteFile(ddp + "/rank" + std::to_string(rank) + ".json", DdpRank(rank, 2, 4).dump());
    }
    r = RunAutotune("import --ddp-trace " + ddp + " --db " + template_db_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    template_rows_ = RowCounts(template_db_);
  }
  static void TearDownTestSuite() { delete dir_; }

 protected:
  static TempDir* dir_;
  static std::string template_db_;
  static std::string template_rows_;
};
TempDir* HostileTest::dir_ = nullptr;
std::string HostileTest::template_db_;
std::string HostileTest::template_rows_;

TEST_P(HostileTest, OneLineAndTheRunsKept) {
  const Case& c = GetParam();
  Env env(template_db_);
  const std::string args = c.args(env);
  ASSERT_FALSE(args.find("mknod-failed") != std::string::npos);
  CommandResult r = RunAutotune(args);
  r.err = WithoutNotes(r.err);
  EXPECT_EQ(r.exit_code, c.exit_code) << "autotune " << args << "\nstdout:\n"
                                      << r.out << "stderr:\n"
                                      << r.err;
  if (c.phrase.empty() && c.exit_code == 0) {
    EXPECT_EQ(r.err, "") << "autotune " << args;
  } else {
    EXPECT_EQ(LineCount(r.err), 1) << "autotune " << args << "\nstderr:\n" << r.err;
    EXPECT_NE(r.err.find(c.phrase), std::string::npos) << "autotune " << args << "\nstderr:\n"
                                                       << r.err;
  }
  EXPECT_EQ(QueryText(env.db, "PRAGMA integrity_check"), "ok");
  const CommandResult runs = RunAutotune("runs --json --db " + Quote(env.db));
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  const Json listed = Json::parse(runs.out);
  std::set<int64_t> ids;
  for (const Json& run : listed) ids.insert(run["run"].get<int64_t>());
  EXPECT_TRUE(ids.count(1) && ids.count(2)) << runs.out;
  if (c.exit_code != 0) {
    EXPECT_EQ(RowCounts(env.db), template_rows_) << "a refused command wrote";
  }
  if (c.check) c.check(env);
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(HostileSuite, HasEnoughCases) { EXPECT_GE(Cases().size(), size_t{80}); }

}  // namespace
}  // namespace autotune::testing
