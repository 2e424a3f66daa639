// Progress on long work: on stderr only, redrawn in place for a terminal (here the launcher
// is told its stderr is one through AUTOTUNE_PROGRESS_TTY=1, as it tells its ranks), never on
// stdout under --json, and nothing with --quiet.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/support/cli.h"

namespace autotune::testing {
namespace {

CommandResult RecordWith(const TempDir& dir, const std::string& extra) {
  return RunCommand({"env", "AUTOTUNE_PROGRESS_TTY=1", AutotuneBinary(), "record", "--np", "2",
                     "--scale", "0.02", "--steps", "6", "--json", "--db", dir.File("p.db"), extra},
                    dir.path());
}

TEST(ProgressTest, RecordRedrawsStepsOnStderrAndKeepsStdoutJson) {
  TempDir dir;
  const CommandResult r = RecordWith(dir, "--stall-check-s=60");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The first step shows at once, later ones at most every 0.1 s, each redrawn over the
  // last (carriage return, clear to the end), the final one always, then the line is ended.
  EXPECT_EQ(r.err.rfind("\rrecord: step 1/6, last ", 0), 0u) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("\rrecord: step 6/6, last [0-9.]+ ms, 0 s left\x1b\\[K\n$")))
      << r.err;
  int shown = 0;
  for (size_t at = r.err.find('\r'); at != std::string::npos; at = r.err.find('\r', at + 1)) {
    ++shown;
  }
  EXPECT_GE(shown, 2);
  EXPECT_LE(shown, 6);
  const nlohmann::json j = nlohmann::json::parse(r.out);  // stdout: the JSON object alone
  EXPECT_EQ(j["steps"], 6);
}

TEST(ProgressTest, QuietSilencesIt) {
  TempDir dir;
  const CommandResult r = RecordWith(dir, "--quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(nlohmann::json::parse(r.out)["steps"], 6);
}

}  // namespace
}  // namespace autotune::testing
