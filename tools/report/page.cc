#include "tools/report/page.h"

#include <cstdio>
#include <sstream>

#include "tools/report/scripts.h"

namespace autotune::cli {
namespace {

constexpr const char* kVegaLiteSchema = "https://vega.github.io/schema/vega-lite/v6.json";

constexpr const char* kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { margin-bottom: 0; } .subtitle { color: #666; margin-top: 4px; }
section { border-top: 1px solid #ddd; margin-top: 24px; }
.view { display: inline-block; vertical-align: top; margin: 8px 16px 16px 0; }
.caption { color: #444; font-size: 13px; max-width: 760px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f3f3f3; cursor: pointer; user-select: none; }
th[data-order="asc"]::after { content: " \25B2"; }
th[data-order="desc"]::after { content: " \25BC"; }
#page-errors { color: #b00; white-space: pre-wrap; }
#render-summary { color: #666; font-size: 12px; }
)css";

// Installed before the libraries load: every error and console.error lands in #page-errors.
constexpr const char* kErrorHook = R"js(
(function () {
  function report(text) {
    var box = document.getElementById('page-errors');
    if (box) { box.textContent += text + '\n'; } else { window.__pendingErrors.push(text); }
  }
  window.__pendingErrors = [];
  window.__reportError = report;
  window.addEventListener('error', function (e) { report('error: ' + e.message); });
  window.addEventListener('unhandledrejection', function (e) {
    report('unhandled rejection: ' + (e.reason && e.reason.message ? e.reason.message : e.reason));
  });
  var original = console.error;
  console.error = function () {
    report('console.error: ' + Array.prototype.join.call(arguments, ' '));
    original.apply(console, arguments);
  };
})();
)js";

// Sorts a table on a header click: numbers (data-value) as numbers, text as text.
constexpr const char* kTableSort = R"js(
document.querySelectorAll('table.sortable th').forEach(function (th, column) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
    var order = th.getAttribute('data-order') === 'asc' ? 'desc' : 'asc';
    th.parentNode.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-order'); });
    th.setAttribute('data-order', order);
    var key = function (row) {
      var cell = row.cells[column];
      var v = cell.getAttribute('data-value');
      return v === null ? cell.textContent : parseFloat(v);
    };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      var c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(y);
      return order === 'asc' ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
)js";

// Renders every plot, then writes how many drew marks into #render-summary.
constexpr const char* kRender = R"js(
(function () {
  var errors = document.getElementById('page-errors');
  window.__pendingErrors.forEach(function (t) { errors.textContent += t + '\n'; });
  function dataMarks(mark) {
    var n = 0;
    (mark.items || []).forEach(function (item) {
      if (mark.marktype === 'group') {
        (item.items || []).forEach(function (child) { n += dataMarks(child); });
      } else if (!/^(axis|legend|title|frame)/.test(mark.role || '')) {
        n += 1;
      }
    });
    return n;
  }
  var views = JSON.parse(document.getElementById('report-views').textContent);
  var jobs = views.map(function (v) {
    var el = document.getElementById(v.id);
    return vegaEmbed(el, v.spec, {actions: false, renderer: 'svg'}).then(function (result) {
      var marks = dataMarks(result.view.scenegraph().root);
      el.setAttribute('data-marks', String(marks));
      el.setAttribute('data-rendered', marks > 0 ? 'yes' : 'empty');
    }, function (e) {
      el.setAttribute('data-rendered', 'failed');
      window.__reportError(v.id + ': ' + (e && e.message ? e.message : e));
    });
  });
  Promise.all(jobs).then(function () {
    var ok = document.querySelectorAll('.plot[data-rendered="yes"]').length;
    var summary = document.getElementById('render-summary');
    summary.setAttribute('data-plots', String(views.length));
    summary.setAttribute('data-rendered', String(ok));
    summary.textContent = ok + ' of ' + views.length + ' plots rendered';
  });
})();
)js";

void WriteTable(const ReportTable& table, std::ostream& out) {
  out << "<table class=\"sortable\"><thead><tr>";
  for (const std::string& c : table.columns) out << "<th>" << HtmlEscape(c) << "</th>";
  out << "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    out << "<tr>";
    for (const nlohmann::json& cell : row) {
      if (cell.is_number()) {
        out << "<td data-value=\"" << cell.dump() << "\">" << cell.dump() << "</td>";
      } else {
        out << "<td>" << HtmlEscape(cell.is_string() ? cell.get<std::string>() : cell.dump())
            << "</td>";
      }
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

// Writes the section's text and placeholders; appends its plots to `views` (id, spec).
void WriteSection(const ReportSection& section, std::ostream& out, nlohmann::json* views) {
  out << "<section><h2>" << HtmlEscape(section.title) << "</h2>\n";
  for (const std::string& note : section.notes) out << "<p>" << HtmlEscape(note) << "</p>\n";
  if (!section.table.columns.empty()) WriteTable(section.table, out);
  for (const ReportView& view : section.views) {
    const std::string id = "plot-" + std::to_string(views->size() + 1);
    nlohmann::json spec = view.spec;
    if (!spec.contains("$schema")) spec["$schema"] = kVegaLiteSchema;
    views->push_back({{"id", id}, {"spec", spec}});
    out << "<div class=\"view\"><h3>" << HtmlEscape(view.title) << "</h3><div class=\"plot\" id=\""
        << id << "\"></div><p class=\"caption\">" << HtmlEscape(view.caption) << "</p></div>\n";
  }
  out << "</section>\n";
}

void WriteScripts(std::ostream& out) {
  for (const ReportScript& script : ReportScripts()) {
    out << "<script>/* " << script.path << " */\n" << script.text << "\n</script>\n";
  }
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string JsonForScript(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderReportHtml(const ReportPage& page) {
  std::ostringstream body;
  nlohmann::json views = nlohmann::json::array();
  for (const ReportSection& section : page.sections) WriteSection(section, body, &views);
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
      << HtmlEscape(page.title) << "</title>\n<style>" << kStyle << "</style>\n<script>"
      << kErrorHook << "</script>\n";
  WriteScripts(out);
  out << "</head><body>\n<h1>" << HtmlEscape(page.title) << "</h1><p class=\"subtitle\">"
      << HtmlEscape(page.subtitle) << "</p>\n<p id=\"render-summary\"></p>"
      << "<pre id=\"page-errors\"></pre>\n"
      << body.str() << "<script type=\"application/json\" id=\"report-views\">"
      << JsonForScript(views) << "</script>\n<script>" << kTableSort << kRender
      << "</script>\n</body></html>\n";
  return out.str();
}

std::string FormatNumber(const char* format, double value) {
  char buffer[96];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

int ViewCount(const ReportPage& page) {
  int n = 0;
  for (const ReportSection& section : page.sections) n += static_cast<int>(section.views.size());
  return n;
}

}  // namespace autotune::cli
