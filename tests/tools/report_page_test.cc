// The report's page writer and its printed statistics (tools/report/page.h,
// tools/report/stats.h), on values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/report/page.h"
#include "tools/report/scripts.h"
#include "tools/report/stats.h"

namespace {

using autotune::cli::HtmlEscape;
using autotune::cli::JsonForScript;
using autotune::cli::MeanAbsolutePercentError;
using autotune::cli::RenderReportHtml;
using autotune::cli::ReportPage;
using autotune::cli::ReportScripts;
using autotune::cli::ReportSection;
using autotune::cli::SpearmanRankCorrelation;

TEST(ReportStats, MeanAbsolutePercentError) {
  // |110-100|/100 = 0.1, |180-200|/200 = 0.1.
  EXPECT_DOUBLE_EQ(*MeanAbsolutePercentError({100, 200}, {110, 180}), 0.1);
  EXPECT_FALSE(MeanAbsolutePercentError({}, {}));
  EXPECT_FALSE(MeanAbsolutePercentError({1, 2}, {1}));
  EXPECT_FALSE(MeanAbsolutePercentError({0, 2}, {1, 2}));
}

TEST(ReportStats, SpearmanRankCorrelation) {
  EXPECT_DOUBLE_EQ(*SpearmanRankCorrelation({1, 2, 3, 4}, {10, 20, 30, 400}), 1.0);
  EXPECT_DOUBLE_EQ(*SpearmanRankCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ties share their mean rank: ranks (1, 2.5, 2.5, 4) and (1, 3, 2, 4); deviations from 2.5:
  // (-1.5, 0, 0, 1.5) and (-1.5, 0.5, -0.5, 1.5); 4.5 / sqrt(4.5 * 5).
  EXPECT_NEAR(*SpearmanRankCorrelation({1, 2, 2, 3}, {1, 3, 2, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  EXPECT_FALSE(SpearmanRankCorrelation({1}, {1}));
  EXPECT_FALSE(SpearmanRankCorrelation({2, 2, 2}, {1, 2, 3}));
}

TEST(ReportPage, EscapesTextAndScriptJson) {
  EXPECT_EQ(HtmlEscape("<a href='x'>&\""), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
  const nlohmann::json j = {{"label", "</script><b>"}};
  const std::string text = JsonForScript(j);
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(text), j);
}

TEST(ReportPage, InlinesTheScriptsAndEveryView) {
  ASSERT_EQ(ReportScripts().size(), 3u);
  for (const auto& script : ReportScripts()) EXPECT_GT(script.text.size(), 10000u) << script.path;
  ReportPage page;
  page.title = "t<1>";
  ReportSection section;
  section.title = "s";
  section.table.columns = {"id", "name"};
  section.table.rows = {{7, "a&b"}};
  section.views.push_back({"v", "c", {{"mark", "point"}}});
  section.views.push_back({"w", "d", {{"mark", "bar"}}});
  page.sections.push_back(section);
  const std::string html = RenderReportHtml(page);
  EXPECT_NE(html.find("<title>t&lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<td data-value=\"7\">7</td><td>a&amp;b</td>"), std::string::npos);
  EXPECT_NE(html.find("id=\"plot-1\""), std::string::npos);
  EXPECT_NE(html.find("id=\"plot-2\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"plot-3\""), std::string::npos);
  for (const auto& script : ReportScripts()) {
    EXPECT_NE(html.find(script.text.substr(0, 200)), std::string::npos) << script.path;
  }
  // The views' JSON: each spec with the Vega-Lite schema added.
  const size_t start = html.find("id=\"report-views\">") + 18;
  const nlohmann::json views =
      nlohmann::json::parse(html.substr(start, html.find("</script>", start) - start));
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[1]["id"], "plot-2");
  EXPECT_EQ(views[1]["spec"]["mark"], "bar");
  EXPECT_EQ(views[0]["spec"]["$schema"], "https://vega.github.io/schema/vega-lite/v6.json");
}

}  // namespace
