// The page `autotune report` writes: a model of its sections (text, a sortable table, Vega-Lite
// plots) and the one function that turns it into a self-contained HTML file. The plotting
// scripts are inlined (tools/report/scripts.h); nothing is fetched when the page opens.
//
// When the page has rendered every plot, the element #render-summary carries data-plots (how
// many), data-rendered (how many drew at least one mark) and each plot's element data-rendered
// ("yes", "empty" or "failed") and data-marks; #page-errors holds every script error and
// console.error the page saw. The browser test reads them from the rendered DOM.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace autotune::cli {

// One plot: a Vega-Lite spec with its data inline.
struct ReportView {
  std::string title;
  std::string caption;  // plain text under the plot: what it shows, the statistics printed
  nlohmann::json spec;  // Vega-Lite v6 spec; "$schema" is added when missing
};

// A table whose columns sort on a click. Cells are strings or numbers (numbers sort as such).
struct ReportTable {
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;
};

struct ReportSection {
  std::string title;
  std::vector<std::string> notes;  // plain-text paragraphs before the plots
  ReportTable table;               // shown when it has columns
  std::vector<ReportView> views;
};

struct ReportPage {
  std::string title;
  std::string subtitle;  // e.g. the database and when the page was made
  std::vector<ReportSection> sections;
  // One line per run left out because its row cannot be read (the page shows the rest).
  std::vector<std::string> unreadable_runs;
};

// `text` with &, <, >, " and ' written as HTML entities.
std::string HtmlEscape(std::string_view text);

// j serialized for a <script type="application/json"> element: every '<' written as \u003c
// (valid JSON, and no "</script>" can end the element early).
std::string JsonForScript(const nlohmann::json& j);

// The whole page as one HTML document (scripts inlined).
std::string RenderReportHtml(const ReportPage& page);

// One number formatted printf-style for the page's text, e.g. FormatNumber("%.3f ms", x).
std::string FormatNumber(const char* format, double value);

// How many plots the page holds.
int ViewCount(const ReportPage& page);

}  // namespace autotune::cli
