// traces/stall_settings: Horovod's names for the stall check, from the environment and
// horovodrun's config-file section, and the values refused.
#include "traces/stall_settings.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "formats/config_file.h"

namespace autotune {
namespace {

class StallSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override { Clear(); }
  void TearDown() override { Clear(); }
  static void Clear() {
    for (const char* v : {"HOROVOD_STALL_CHECK_DISABLE", "HOROVOD_STALL_CHECK_TIME_SECONDS",
                          "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS"}) {
      unsetenv(v);
    }
  }
};

TEST_F(StallSettingsTest, DefaultsAreHorovods) {
  StallSettings s;
  ASSERT_TRUE(ApplyStallEnvironment(&s).ok());
  EXPECT_EQ(s.check_s, 60.0);
  EXPECT_EQ(s.shutdown_s, 0.0);
  EXPECT_TRUE(ValidateStallSettings(s).ok());
}

TEST_F(StallSettingsTest, EnvironmentThenConfigSectionOverride) {
  setenv("HOROVOD_STALL_CHECK_TIME_SECONDS", "20", 1);
  setenv("HOROVOD_STALL_SHUTDOWN_TIME_SECONDS", "90", 1);
  StallSettings s;
  ASSERT_TRUE(ApplyStallEnvironment(&s).ok());
  EXPECT_EQ(s.check_s, 20.0);
  EXPECT_EQ(s.shutdown_s, 90.0);
  ConfigFile config;
  ASSERT_TRUE(
      ParseConfigYaml("stall_check:\n  warning_time_seconds: 30\n", "c.yaml", &config).ok());
  ApplyStallSection(config.stall_check, &s);
  EXPECT_EQ(s.check_s, 30.0);
  EXPECT_EQ(s.shutdown_s, 90.0);  // the section did not set it
  ASSERT_TRUE(ParseConfigYaml("stall_check:\n  enabled: false\n", "c.yaml", &config).ok());
  ApplyStallSection(config.stall_check, &s);
  EXPECT_EQ(s.check_s, 0.0);
  setenv("HOROVOD_STALL_CHECK_DISABLE", "1", 1);
  StallSettings off;
  ASSERT_TRUE(ApplyStallEnvironment(&off).ok());
  EXPECT_EQ(off.check_s, 0.0);
}

TEST_F(StallSettingsTest, BadValuesAreOneLineNamingTheirSource) {
  StallSettings s;
  setenv("HOROVOD_STALL_CHECK_TIME_SECONDS", "-1", 1);
  Status st = ApplyStallEnvironment(&s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("HOROVOD_STALL_CHECK_TIME_SECONDS=-1"), std::string::npos);
  Clear();
  setenv("HOROVOD_STALL_CHECK_DISABLE", "yes", 1);
  EXPECT_FALSE(ApplyStallEnvironment(&s).ok());
  ConfigFile config;
  st = ParseConfigYaml("stall_check:\n  warning_time_seconds: [1]\n", "c.yaml", &config);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("c.yaml: stall_check.warning_time_seconds"), std::string::npos);
  st = ParseConfigYaml("stall_check:\n  shutdown_time_seconds: -3\n", "c.yaml", &config);
  EXPECT_FALSE(st.ok());
  st = ParseConfigYaml("stall_check:\n  warn: 3\n", "c.yaml", &config);
  EXPECT_NE(st.message().find("stall_check.warn: unknown key"), std::string::npos);
  // A shutdown before the warning, or without the check, is refused.
  EXPECT_FALSE(ValidateStallSettings({60.0, 30.0}).ok());
  EXPECT_FALSE(ValidateStallSettings({0.0, 30.0}).ok());
  EXPECT_TRUE(ValidateStallSettings({60.0, 60.0}).ok());
  EXPECT_TRUE(ValidateStallSettings({0.0, 0.0}).ok());
}

}  // namespace
}  // namespace autotune
