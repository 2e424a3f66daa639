#include "formats/horovod_ready_log.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/import_options.h"
#include "formats/json_fields.h"
#include "traces/files.h"

namespace autotune {
namespace {

using Json = nlohmann::json;
using json_fields::Integer;

// Ranks of a ready log at most (as a DDP trace's).
constexpr int64_t kMaxReadyLogRanks = 65536;

Status ReadSteps(const Json& steps, size_t tensors, const std::string& path,
                 std::vector<double>* starts, std::vector<std::vector<double>>* ready) {
  if (!steps.is_array()) return Status::InvalidArgument(path + ": \"steps\" must be a list");
  for (size_t k = 0; k < steps.size(); ++k) {
    const std::string at = path + ": step " + std::to_string(k);
    if (!steps[k].is_object()) return Status::InvalidArgument(at + ": not an object");
    // Nanoseconds since the epoch (about 1.8e18): past Integer's 1e15.
    const Json& start = steps[k].value("start_ns", Json());
    if (!start.is_number_integer() || start.get<int64_t>() < 0) {
      return Status::InvalidArgument(at + ": \"start_ns\" must be a non-negative integer");
    }
    const int64_t start_ns = start.get<int64_t>();
    const Json& r = steps[k].value("ready_us", Json());
    if (!r.is_array() || r.size() != tensors) {
      return Status::InvalidArgument(at + ": \"ready_us\" must list one time per tensor (" +
                                     std::to_string(tensors) + ")");
    }
    std::vector<double> times(tensors, -1.0);
    for (size_t t = 0; t < tensors; ++t) {
      if (r[t].is_null()) continue;
      if (!r[t].is_number() || !std::isfinite(r[t].get<double>()) || r[t].get<double>() < 0.0 ||
          r[t].get<double>() > kMaxImportedStepMs * 1e3) {
        return Status::InvalidArgument(at + ": ready_us[" + std::to_string(t) +
                                       "] must be null or a time from the step's start (0 to "
                                       "a day, in microseconds)");
      }
      times[t] = r[t].get<double>();
    }
    starts->push_back(static_cast<double>(start_ns) / 1e3);
    ready->push_back(std::move(times));
  }
  return Status::Ok();
}

Status ReadRank(const std::string& dir, int rank, HorovodReadyLog* out, int64_t* size) {
  const std::string path = dir + "/rank" + std::to_string(rank) + ".json";
  std::string text;
  AUTOTUNE_RETURN_IF_ERROR(ReadInputFile(path, "ready log", kMaxHorovodReadyFileBytes, &text));
  out->content_hash += ImportSourceHash(text, ImportOptions());
  const Json j = Json::parse(text, nullptr, false);
  if (!j.is_object() || j.value("format", "") != "autotune-horovod-ready") {
    return Status::InvalidArgument(path + ": not an autotune Horovod ready log (\"format\")");
  }
  int64_t version = 0, file_rank = -1, file_size = 0;
  AUTOTUNE_RETURN_IF_ERROR(Integer(j, "version", path, &version));
  if (version != 1) {
    return Status::InvalidArgument(path + ": version " + std::to_string(version) +
                                   " (this autotune reads version 1)");
  }
  AUTOTUNE_RETURN_IF_ERROR(Integer(j, "rank", path, &file_rank));
  AUTOTUNE_RETURN_IF_ERROR(Integer(j, "size", path, &file_size));
  if (file_rank != rank) {
    return Status::InvalidArgument(path + ": \"rank\" is " + std::to_string(file_rank) + ", not " +
                                   std::to_string(rank));
  }
  if (file_size < 1 || file_size > kMaxReadyLogRanks || (rank > 0 && file_size != *size)) {
    return Status::InvalidArgument(path + ": \"size\" must be " +
                                   (rank > 0
                                        ? std::to_string(*size) + ", rank 0's"
                                        : "between 1 and " + std::to_string(kMaxReadyLogRanks)));
  }
  *size = file_size;
  if (j.value("clock", "") != "CLOCK_REALTIME") {
    return Status::InvalidArgument(path +
                                   ": \"clock\" must be \"CLOCK_REALTIME\" (the clock "
                                   "of the timeline's start_time_since_epoch_in_micros)");
  }
  const Json& names = j.value("tensors", Json());
  std::vector<std::string> tensors;
  if (!names.is_array() || names.empty()) {
    return Status::InvalidArgument(path + ": \"tensors\" must be a non-empty list of names");
  }
  for (const Json& n : names) {
    if (!n.is_string()) return Status::InvalidArgument(path + ": \"tensors\" must be names");
    tensors.push_back(n.get<std::string>());
  }
  if (rank == 0) {
    out->tensors = tensors;
  } else if (tensors != out->tensors) {
    return Status::InvalidArgument(path +
                                   ": another job's file (its tensors differ from rank "
                                   "0's)");
  }
  std::vector<double> starts;
  std::vector<std::vector<double>> ready;
  AUTOTUNE_RETURN_IF_ERROR(
      ReadSteps(j.value("steps", Json()), tensors.size(), path, &starts, &ready));
  out->step_start_epoch_us.push_back(std::move(starts));
  out->ready_us.push_back(std::move(ready));
  return Status::Ok();
}

}  // namespace

Status ReadHorovodReadyLog(const std::string& dir, HorovodReadyLog* out) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::IoError("cannot read ready log " + dir +
                           (std::filesystem::exists(dir, ec)
                                ? ": not a folder (give the folder of rank<R>.json files)"
                                : ": no such folder"));
  }
  HorovodReadyLog log;
  int64_t size = 0;
  try {
    for (int r = 0; r == 0 || r < size; ++r)
      AUTOTUNE_RETURN_IF_ERROR(ReadRank(dir, r, &log, &size));
  } catch (const Json::exception& e) {  // a value of the wrong type the checks above missed
    return Status::InvalidArgument(dir + ": malformed ready log (" + std::string(e.what()) + ")");
  }
  *out = std::move(log);
  return Status::Ok();
}

}  // namespace autotune
