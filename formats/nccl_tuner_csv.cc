#include "formats/nccl_tuner_csv.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "traces/files.h"
#include "traces/knob_table.h"

namespace autotune {

namespace {

constexpr size_t kMaxLineChars = 255;  // the plugin reads lines into a 256-byte buffer

const std::vector<std::string>& Collectives() {
  static const std::vector<std::string> k = {"broadcast", "reduce", "allgather", "reducescatter",
                                             "allreduce"};
  return k;
}
const std::vector<std::string>& Algorithms() {
  static const std::vector<std::string> k = {
      "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
  return k;
}
const std::vector<std::string>& Protocols() {
  static const std::vector<std::string> k = {"ll", "ll128", "simple"};
  return k;
}

bool Contains(const std::vector<std::string>& names, const std::string& s) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return "{" + out + "}";
}

Status Bad(const std::string& field, const std::string& value, const std::string& allowed) {
  return Status::InvalidArgument("tuner rule: " + field + " '" + value + "' is not in " + allowed);
}

std::string RuleLine(const NcclTunerRule& r) {
  std::ostringstream line;
  line << r.collective << ',' << r.min_bytes << ',' << r.max_bytes << ',' << r.algorithm << ','
       << r.protocol << ',' << r.channels << ',' << r.nodes << ',' << r.ranks << ',' << r.pipe_ops
       << ',' << r.reg_buff;
  return line.str();
}

bool SameMatchKey(const NcclTunerRule& a, const NcclTunerRule& b) {
  return a.collective == b.collective && a.nodes == b.nodes && a.ranks == b.ranks &&
         a.pipe_ops == b.pipe_ops && a.reg_buff == b.reg_buff;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

Status ParseInteger(const std::string& text, const std::string& field, int64_t* out) {
  if (text.empty()) return Status::InvalidArgument(field + ": empty");
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) {
    return Status::InvalidArgument(field + " '" + text + "' is not an integer");
  }
  *out = v;
  return Status::Ok();
}

Status ParseSmallInt(const std::string& text, const std::string& field, int* out) {
  int64_t v = 0;
  AUTOTUNE_RETURN_IF_ERROR(ParseInteger(text, field, &v));
  if (v < INT32_MIN || v > INT32_MAX) {
    return Status::InvalidArgument(field + " '" + text + "' is out of range");
  }
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status ParseRuleFields(const std::vector<std::string>& f, NcclTunerRule* r) {
  r->collective = f[0];
  AUTOTUNE_RETURN_IF_ERROR(ParseInteger(f[1], "min_bytes", &r->min_bytes));
  AUTOTUNE_RETURN_IF_ERROR(ParseInteger(f[2], "max_bytes", &r->max_bytes));
  r->algorithm = f[3];
  r->protocol = f[4];
  AUTOTUNE_RETURN_IF_ERROR(ParseSmallInt(f[5], "channels", &r->channels));
  AUTOTUNE_RETURN_IF_ERROR(ParseSmallInt(f[6], "nNodes", &r->nodes));
  AUTOTUNE_RETURN_IF_ERROR(ParseSmallInt(f[7], "nRanks", &r->ranks));
  if (f.size() > 8) AUTOTUNE_RETURN_IF_ERROR(ParseSmallInt(f[8], "numPipeOps", &r->pipe_ops));
  if (f.size() > 9) AUTOTUNE_RETURN_IF_ERROR(ParseSmallInt(f[9], "regBuff", &r->reg_buff));
  return ValidateNcclTunerRule(*r);
}

}  // namespace

Status ValidateNcclTunerRule(const NcclTunerRule& r) {
  if (!Contains(Collectives(), r.collective)) {
    return Bad("collective", r.collective, Join(Collectives()));
  }
  if (!Contains(Algorithms(), r.algorithm)) {
    return Bad("algorithm", r.algorithm, Join(Algorithms()));
  }
  if (!Contains(Protocols(), r.protocol)) return Bad("protocol", r.protocol, Join(Protocols()));
  if (r.min_bytes < 0 || r.max_bytes < r.min_bytes) {
    return Status::InvalidArgument("tuner rule: byte range [" + std::to_string(r.min_bytes) + ", " +
                                   std::to_string(r.max_bytes) + "] is empty or negative");
  }
  if (r.channels != -1 && (r.channels < 1 || r.channels > 64)) {
    return Bad("channels", std::to_string(r.channels), "{-1} or [1, 64]");
  }
  if (r.nodes != -1 && r.nodes < 1) return Bad("nNodes", std::to_string(r.nodes), "{-1, >= 1}");
  if (r.ranks != -1 && r.ranks < 1) return Bad("nRanks", std::to_string(r.ranks), "{-1, >= 1}");
  if (r.pipe_ops != -1 && r.pipe_ops < 1) {
    return Bad("numPipeOps", std::to_string(r.pipe_ops), "{-1, >= 1}");
  }
  if (r.reg_buff < -1 || r.reg_buff > 1) {
    return Bad("regBuff", std::to_string(r.reg_buff), "{-1, 0, 1}");
  }
  return Status::Ok();
}

Status FormatNcclTunerCsv(std::span<const NcclTunerRule> rules, const std::string& comment,
                          std::string* out) {
  for (size_t i = 0; i < rules.size(); ++i) {
    AUTOTUNE_RETURN_IF_ERROR(
        ValidateNcclTunerRule(rules[i]).WithPrefix("rule " + std::to_string(i)));
    for (size_t j = 0; j < i; ++j) {
      const NcclTunerRule& a = rules[j];
      const NcclTunerRule& b = rules[i];
      if (SameMatchKey(a, b) && a.min_bytes <= b.max_bytes && b.min_bytes <= a.max_bytes) {
        return Status::InvalidArgument(
            "tuner rules " + std::to_string(j) + " and " + std::to_string(i) + " (" + b.collective +
            ") overlap on bytes [" + std::to_string(std::max(a.min_bytes, b.min_bytes)) + ", " +
            std::to_string(std::min(a.max_bytes, b.max_bytes)) +
            "]: NCCL's example tuner would apply only the first");
      }
    }
  }
  std::string text;
  std::istringstream comment_lines(comment);
  for (std::string line; std::getline(comment_lines, line);) {
    text += ("# " + line).substr(0, kMaxLineChars) + "\n";
  }
  if (!comment.empty()) {
    text +=
        "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,"
        "numPipeOps,regBuff\n";
  }
  for (const NcclTunerRule& r : rules) text += RuleLine(r) + "\n";
  *out = std::move(text);
  return Status::Ok();
}

Status WriteNcclTunerCsvFile(const std::string& path, std::span<const NcclTunerRule> rules,
                             const std::string& comment) {
  std::string text;
  AUTOTUNE_RETURN_IF_ERROR(FormatNcclTunerCsv(rules, comment, &text).WithPrefix(path));
  return WriteOutputFile(path, text);
}

Status ParseNcclTunerCsv(const std::string& text, const std::string& source,
                         std::vector<NcclTunerRule>* rules) {
  std::vector<NcclTunerRule> parsed;
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const std::string where = source + ":" + std::to_string(line_no);
    const std::string trimmed = Trim(line);
    if (trimmed.empty() || line[0] == '#') continue;
    if (line.size() > kMaxLineChars) {
      return Status::InvalidArgument(where + ": line longer than " + std::to_string(kMaxLineChars) +
                                     " characters");
    }
    std::vector<std::string> fields;
    std::istringstream cells(trimmed);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(Trim(cell));
    if (fields.size() < 8 || fields.size() > 10) {
      return Status::InvalidArgument(where + ": expected 8 to 10 comma-separated fields, got " +
                                     std::to_string(fields.size()));
    }
    NcclTunerRule rule;
    AUTOTUNE_RETURN_IF_ERROR(ParseRuleFields(fields, &rule).WithPrefix(where));
    parsed.push_back(std::move(rule));
  }
  *rules = std::move(parsed);
  return Status::Ok();
}

Status NcclTunerAlgorithm(const std::string& knob_algo, std::string* csv_name) {
  static const std::vector<std::pair<std::string, std::string>> kNames = {
      {"ring", "ring"}, {"tree", "tree"},          {"collnetdirect", "collnet_direct"},
      {"nvls", "nvls"}, {"nvlstree", "nvls_tree"}, {"collnetchain", "collnet_chain"},
      {"pat", "pat"}};
  for (const auto& [knob, csv] : kNames) {
    if (knob == knob_algo) {
      *csv_name = csv;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument(
      std::string(KnobOfField(&Knobs::nccl_algo).name) + " '" + knob_algo +
      "' has no tuner CSV name" +
      (knob_algo == "collnet" ? " (pick collnetdirect or collnetchain)" : ""));
}

Status NcclTunerRulesFromKnobs(const Knobs& knobs, std::span<const std::string> collectives,
                               int nodes, int ranks, std::vector<NcclTunerRule>* rules) {
  if (knobs.nccl_algo.empty() || knobs.nccl_proto.empty()) {
    return Status::InvalidArgument(
        std::string("a tuner CSV needs ") + KnobOfField(&Knobs::nccl_algo).name + " and " +
        KnobOfField(&Knobs::nccl_proto).name + " set (they are NCCL's defaults here)");
  }
  NcclTunerRule base;
  AUTOTUNE_RETURN_IF_ERROR(NcclTunerAlgorithm(knobs.nccl_algo, &base.algorithm));
  base.protocol = knobs.nccl_proto;
  base.channels = knobs.nccl_max_nchannels > 0 ? knobs.nccl_max_nchannels : -1;
  base.nodes = nodes;
  base.ranks = ranks;
  std::vector<NcclTunerRule> out;
  for (const std::string& c : collectives) {
    NcclTunerRule r = base;
    r.collective = c;
    AUTOTUNE_RETURN_IF_ERROR(ValidateNcclTunerRule(r));
    out.push_back(std::move(r));
  }
  *rules = std::move(out);
  return Status::Ok();
}

}  // namespace autotune
