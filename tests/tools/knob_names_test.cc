// Knob facts live in the knob table only: no source file outside traces/knob_table.{h,cc}
// spells a knob's name in a string literal ("num_groups", "... num_groups=", a help text
// listing knobs). Code that needs a knob reaches its row (KnobTable(), KnobOfField(), a column)
// instead. Tests, benchmarks and fuzz seeds may name knobs: they check the table from outside.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "traces/knob_table.h"

namespace autotune {
namespace {

namespace fs = std::filesystem;

struct Literal {
  int line = 0;
  std::string text;
};

// The string literals of C++ source text (ordinary and raw), comments and character literals
// skipped.
std::vector<Literal> StringLiterals(const std::string& source) {
  std::vector<Literal> out;
  int line = 1;
  size_t i = 0;
  auto advance = [&](size_t to) {
    for (; i < to && i < source.size(); ++i) line += source[i] == '\n';
  };
  while (i < source.size()) {
    const char c = source[i];
    if (source.compare(i, 2, "//") == 0) {
      advance(source.find('\n', i));
    } else if (source.compare(i, 2, "/*") == 0) {
      const size_t end = source.find("*/", i + 2);
      advance(end == std::string::npos ? source.size() : end + 2);
    } else if (c == 'R' && source.compare(i + 1, 1, "\"") == 0 &&
               (i == 0 ||
                !(std::isalnum(static_cast<unsigned char>(source[i - 1])) ||
                  source[i - 1] == '_') ||
                source[i - 1] == '8' || source[i - 1] == 'u' || source[i - 1] == 'U' ||
                source[i - 1] == 'L')) {
      const size_t open = source.find('(', i + 2);
      const std::string close = ")" + source.substr(i + 2, open - (i + 2)) + "\"";
      const size_t end = source.find(close, open);
      Literal literal{line, source.substr(open + 1, end - open - 1)};
      out.push_back(literal);
      advance(end == std::string::npos ? source.size() : end + close.size());
    } else if (c == '"' || c == '\'') {
      Literal literal{line, ""};
      size_t j = i + 1;
      for (; j < source.size() && source[j] != c && source[j] != '\n'; ++j) {
        if (source[j] == '\\') ++j;
        if (j < source.size()) literal.text += source[j];
      }
      if (c == '"') out.push_back(literal);
      advance(j + 1);
    } else {
      advance(i + 1);
    }
  }
  return out;
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The knob names that occur in `text` as whole words.
std::vector<std::string> KnobNamesIn(const std::string& text) {
  std::vector<std::string> found;
  for (const KnobSpec& spec : KnobTable()) {
    const std::string name = spec.name;
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
      const bool starts = at == 0 || !IsIdentifierChar(text[at - 1]);
      const size_t end = at + name.size();
      const bool ends = end == text.size() || !IsIdentifierChar(text[end]);
      if (starts && ends) {
        found.push_back(name);
        break;
      }
    }
  }
  return found;
}

// An SQL statement: its column names are the database's schema (store/, fixed by migrations),
// which keeps them whatever the knob table calls its knobs.
bool IsSql(const std::string& text) {
  const size_t start = text.find_first_not_of(" \n");
  if (start == std::string::npos) return false;
  for (const char* verb : {"SELECT ", "INSERT ", "UPDATE ", "CREATE ", "ALTER "}) {
    if (text.compare(start, std::string(verb).size(), verb) == 0) return true;
  }
  return false;
}

// "path:line: knob NAME in \"literal\"" for every knob name in a literal of `source` that is
// not an SQL statement.
std::vector<std::string> Findings(const std::string& path, const std::string& source) {
  std::vector<std::string> out;
  for (const Literal& literal : StringLiterals(source)) {
    if (IsSql(literal.text)) continue;
    for (const std::string& name : KnobNamesIn(literal.text)) {
      out.push_back(path + ":" + std::to_string(literal.line) + ": knob " + name + " in \"" +
                    literal.text + "\"");
    }
  }
  return out;
}

TEST(KnobNames, TheScannerFindsNamesInLiteralsOnly) {
  const std::string source =
      "// \"num_groups\" in a comment\n"
      "const char* a = \"fusion_threshold_mb\";\n"
      "/* \"cycle_time_ms\" */ char b = '\"';\n"
      "std::string c = \"a x=\" + std::string(\"must be num_groups=\");\n"
      "auto d = R\"x(cache_capacity \"quoted\")x\";\n"
      "auto e = \"my_num_groups_count\";\n"
      "auto f = R\"(\n  SELECT num_groups FROM runs)\";\n";
  const std::vector<std::string> found = Findings("f.cc", source);
  const std::vector<std::string> expected = {
      "f.cc:2: knob fusion_threshold_mb in \"fusion_threshold_mb\"",
      "f.cc:4: knob num_groups in \"must be num_groups=\"",
      "f.cc:5: knob cache_capacity in \"cache_capacity \"quoted\"\""};
  EXPECT_EQ(found, expected);
}

TEST(KnobNames, NoSourceOutsideTheKnobTableSpellsAKnobName) {
  const fs::path root = AUTOTUNE_SOURCE_DIR;
  const std::set<std::string> skipped_folders = {"tests", "bench", "fuzz", "node_modules"};
  const std::set<std::string> allowed = {"traces/knob_table.h", "traces/knob_table.cc"};
  const std::set<std::string> extensions = {".cc", ".h", ".cu", ".cuh", ".cpp", ".hpp"};
  std::vector<std::string> findings;
  int scanned = 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory()) {
      const bool build = fs::exists(it->path() / "CMakeCache.txt");
      if (name[0] == '.' || build || skipped_folders.count(name) > 0) {
        it.disable_recursion_pending();
      }
      continue;
    }
    const std::string relative = fs::relative(it->path(), root).generic_string();
    if (!extensions.count(it->path().extension().string()) || allowed.count(relative)) continue;
    std::ifstream in(it->path());
    std::stringstream text;
    text << in.rdbuf();
    for (std::string& f : Findings(relative, text.str())) findings.push_back(std::move(f));
    ++scanned;
  }
  EXPECT_GT(scanned, 100) << "the source tree at " << root;
  std::string listing;
  for (const std::string& f : findings) listing += f + "\n";
  EXPECT_TRUE(findings.empty()) << findings.size() << " knob names outside the knob table:\n"
                                << listing;
}

}  // namespace
}  // namespace autotune
