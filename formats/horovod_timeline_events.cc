// Reading a Horovod timeline's events: a SAX pass over the JSON text that fills one small
// event record at a time (no document is built) and folds each event into the per-tensor
// occurrences of formats/horovod_timeline_events.h.
#include "formats/horovod_timeline_events.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

namespace autotune::timeline_internal {
namespace {

// Ranks are small numbers; a tick naming a larger one is not a rank.
constexpr int kMaxRank = 1 << 16;
// Process ids are integers a double holds exactly.
constexpr double kMaxPid = 9007199254740992.0;  // 2^53
// The per-rank ready times of all negotiations take at most this many cells per byte of the
// file (and at least kMinRankTickCells): a real timeline writes one tick (tens of bytes) per
// cell, and a few ticks of rank 65535 must not take gigabytes.
constexpr size_t kRankTickCellsPerByte = 16;
constexpr size_t kMinRankTickCells = size_t{1} << 20;

// One field of an event as read: absent, a number, a string, or something else.
struct Field {
  enum class Kind { kAbsent, kNumber, kString, kOther };
  Kind kind = Kind::kAbsent;
  double number = 0.0;
  std::string text;

  bool is_number() const { return kind == Kind::kNumber; }
  bool is_string() const { return kind == Kind::kString; }
  bool present() const { return kind != Kind::kAbsent; }
  void Clear() {
    kind = Kind::kAbsent;
    text.clear();  // keeps its capacity: one buffer per field for the whole file
  }
};

// The fields of one event that the import reads; the others are skipped.
struct RawEvent {
  int64_t index = 0;  // position in the array
  Field ph, name, ts, pid;
  Field args_name, args_dtype, args_shape, args_epoch;

  void Clear() {
    for (Field* f : {&ph, &name, &ts, &pid, &args_name, &args_dtype, &args_shape, &args_epoch}) {
      f->Clear();
    }
  }
  // The field of the event (args: false) or of its args object (args: true) called key.
  Field* Slot(const std::string& key, bool args) {
    if (args) {
      if (key == "name") return &args_name;
      if (key == "dtype") return &args_dtype;
      if (key == "shape") return &args_shape;
      if (key == "start_time_since_epoch_in_micros") return &args_epoch;
      return nullptr;
    }
    if (key == "ph") return &ph;
    if (key == "name") return &name;
    if (key == "ts") return &ts;
    if (key == "pid") return &pid;
    return nullptr;
  }
};

// Text from the file in an error line: JSON-quoted, so its control characters stay escaped
// and the line one line.
std::string Quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool IsCommActivity(const std::string& name) {
  for (const char* prefix : {"MPI_", "NCCL_", "GLOO_", "CCL_", "DDL_", "ADASUM"}) {
    if (StartsWith(name, prefix)) return true;
  }
  return false;
}

// Folds events, in file order, into TimelineEvents. Errors are "what is wrong" only; the
// caller prefixes the file and the event.
class EventFolder {
 public:
  EventFolder(TimelineEvents* out, size_t text_size)
      : out_(out),
        max_tick_cells_(std::max(kMinRankTickCells, kRankTickCellsPerByte * text_size)) {}

  Status Fold(const RawEvent& e) {
    if (!e.ph.is_string()) return Status::InvalidArgument("no \"ph\" string");
    const std::string& ph = e.ph.text;
    if (ph == "M") return Meta(e);
    if (ph != "B" && ph != "E" && ph != "X" && ph != "i" && ph != "I") return Status::Ok();
    if (!e.ts.is_number()) {
      return Status::InvalidArgument(e.ts.present() ? "\"ts\" is not a number" : "no \"ts\"");
    }
    if (out_->first_ts_us < 0.0 || e.ts.number < out_->first_ts_us) {
      out_->first_ts_us = e.ts.number;
    }
    if (ph == "i" || ph == "I") {
      if (e.name.is_string() && e.name.text == "CYCLE_START") {
        out_->cycle_starts_us.push_back(e.ts.number);
      }
      return Status::Ok();
    }
    Process* p = nullptr;
    AUTOTUNE_RETURN_IF_ERROR(ProcessOf(e, &p));
    if (ph == "E") return End(e, p);
    if (!e.name.is_string()) return Status::InvalidArgument("no \"name\" string");
    if (ph == "B") return Begin(e.name.text, e.ts.number, p);
    return Tick(e, p);
  }

 private:
  Status ProcessOf(const RawEvent& e, Process** p) {
    if (!e.pid.is_number() || e.pid.number != std::floor(e.pid.number) ||
        std::fabs(e.pid.number) > kMaxPid) {
      return Status::InvalidArgument("\"pid\" is not an integer");
    }
    const int64_t pid = static_cast<int64_t>(e.pid.number);
    auto [it, added] = out_->processes.try_emplace(pid);
    if (added) {
      it->second.pid = pid;
      it->second.order = static_cast<int64_t>(out_->processes.size()) - 1;
    }
    *p = &it->second;
    return Status::Ok();
  }

  // process_name: names the tensor of a pid ("allreduce.NAME"), or on pid 0 gives the
  // timeline's start on the wall clock; other metadata is skipped.
  Status Meta(const RawEvent& e) {
    if (!e.name.is_string() || e.name.text != "process_name") return Status::Ok();
    if (e.args_epoch.present()) {
      if (!e.args_epoch.is_number() || !std::isfinite(e.args_epoch.number)) {
        return Status::InvalidArgument("args.start_time_since_epoch_in_micros is not a number");
      }
      out_->start_epoch_us = e.args_epoch.number;
    }
    if (!e.args_name.present()) return Status::Ok();
    if (!e.args_name.is_string()) return Status::InvalidArgument("args.name is not a string");
    Process* p = nullptr;
    AUTOTUNE_RETURN_IF_ERROR(ProcessOf(e, &p));
    const std::string& full = e.args_name.text;
    const std::pair<const char*, ProcessKind> kinds[] = {{"allreduce.", ProcessKind::kAllreduce},
                                                         {"allgather.", ProcessKind::kAllgather},
                                                         {"broadcast.", ProcessKind::kBroadcast}};
    p->kind = ProcessKind::kOther;
    p->name = full;
    for (const auto& [prefix, kind] : kinds) {
      if (StartsWith(full, prefix)) {
        p->kind = kind;
        p->name = full.substr(std::string(prefix).size());
      }
    }
    return Status::Ok();
  }

  Status Begin(const std::string& name, double ts, Process* p) {
    if (StartsWith(name, "NEGOTIATE_")) {
      if (!p->open.empty()) {
        return Status::InvalidArgument(Quoted(name) + " begins inside an open event of its tensor");
      }
      p->occurrences.emplace_back().negotiate_start_us = ts;
      p->open.push_back(Frame::kNegotiate);
      return Status::Ok();
    }
    if (p->open.empty()) {  // the op itself; without a negotiation it starts an occurrence
      if (p->occurrences.empty() || p->occurrences.back().op_start_us >= 0.0) {
        Occurrence& fresh = p->occurrences.emplace_back();
        fresh.negotiate_start_us = fresh.negotiate_end_us = ts;
      }
      p->occurrences.back().op_start_us = ts;
      p->open.push_back(Frame::kOp);
      return Status::Ok();
    }
    Frame frame = Frame::kOther;
    if (p->open.back() == Frame::kOp) {
      Occurrence& o = p->occurrences.back();
      if (o.activity_start_us < 0.0) o.activity_start_us = ts;
      if (name == "MEMCPY_IN_FUSION_BUFFER") {
        frame = Frame::kCopyIn;
      } else if (name == "MEMCPY_OUT_FUSION_BUFFER") {
        frame = Frame::kCopyOut;
        o.copy_out_start_us = ts;
      } else if (IsCommActivity(name)) {
        frame = Frame::kComm;
        if (o.comm_start_us < 0.0) o.comm_start_us = ts;
        o.nccl = o.nccl || StartsWith(name, "NCCL_");
      }
    }
    p->open.push_back(frame);
    return Status::Ok();
  }

  Status End(const RawEvent& e, Process* p) {
    if (p->open.empty()) {
      return Status::InvalidArgument("\"E\" without a matching \"B\" on pid " +
                                     std::to_string(static_cast<int64_t>(e.pid.number)));
    }
    const Frame frame = p->open.back();
    p->open.pop_back();
    Occurrence& o = p->occurrences.back();
    const double ts = e.ts.number;
    switch (frame) {
      case Frame::kNegotiate:
        o.negotiate_end_us = ts;
        break;
      case Frame::kCopyIn:
        o.copy_in_end_us = ts;
        break;
      case Frame::kComm:
        o.comm_end_us = std::max(o.comm_end_us, ts);
        break;
      case Frame::kOp:
        o.op_end_us = ts;
        return OpArgs(e, p);
      case Frame::kCopyOut:
      case Frame::kOther:
        break;
    }
    return Status::Ok();
  }

  // The dtype and shape an op's closing event carries; the first ones are kept.
  Status OpArgs(const RawEvent& e, Process* p) {
    if (!e.args_dtype.present() && !e.args_shape.present()) return Status::Ok();
    if (!e.args_dtype.is_string()) return Status::InvalidArgument("args.dtype is not a string");
    if (!e.args_shape.is_string()) return Status::InvalidArgument("args.shape is not a string");
    std::vector<int64_t> shape;
    if (!ParseShape(e.args_shape.text, &shape)) {
      return Status::InvalidArgument("args.shape " + Quoted(e.args_shape.text) +
                                     " is not a list of positive dimensions");
    }
    if (!p->has_args) {
      p->has_args = true;
      p->dtype = e.args_dtype.text;
      p->shape = std::move(shape);
      p->args_event = e.index;
    }
    return Status::Ok();
  }

  // A rank tick ("0".."N-1" inside a negotiation): that rank's request arrived.
  Status Tick(const RawEvent& e, Process* p) {
    const std::string& name = e.name.text;
    if (p->open.empty() || p->open.back() != Frame::kNegotiate || name.empty() || name.size() > 6 ||
        !std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; })) {
      return Status::Ok();
    }
    const int rank = std::atoi(name.c_str());
    if (rank >= kMaxRank) return Status::InvalidArgument("rank tick \"" + name + "\" is no rank");
    std::vector<double>& ready = p->occurrences.back().rank_ready_us;
    if (static_cast<int>(ready.size()) <= rank) {
      tick_cells_ += rank + 1 - ready.size();
      if (tick_cells_ > max_tick_cells_) {
        return Status::InvalidArgument(
            "rank tick \"" + name + "\": the ticks so far need " + std::to_string(tick_cells_) +
            " per-rank ready times, more than the " + std::to_string(max_tick_cells_) +
            " a file of this size may have");
      }
      ready.resize(rank + 1, -1.0);
    }
    ready[rank] = e.ts.number;
    if (rank > out_->max_rank_tick) {
      out_->max_rank_tick = rank;
      out_->max_rank_tick_event = e.index;
    }
    return Status::Ok();
  }

  TimelineEvents* out_;
  size_t max_tick_cells_;
  size_t tick_cells_ = 0;  // rank_ready_us cells of every occurrence so far
};

// nlohmann::json SAX handler: tracks the nesting, fills one RawEvent per element of the
// top-level array and hands it to the folder when the element closes.
class EventSax {
 public:
  using Json = nlohmann::json;
  EventSax(const std::string& source, size_t text_size, EventFolder* folder)
      : source_(source), text_size_(text_size), folder_(folder) {}

  const Status& status() const { return status_; }
  bool truncated() const { return truncated_; }
  int64_t events() const { return events_; }

  bool null() { return Scalar(Field::Kind::kOther, 0.0, nullptr); }
  bool boolean(bool) { return Scalar(Field::Kind::kOther, 0.0, nullptr); }
  bool number_integer(Json::number_integer_t v) {
    return Scalar(Field::Kind::kNumber, static_cast<double>(v), nullptr);
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return Scalar(Field::Kind::kNumber, static_cast<double>(v), nullptr);
  }
  bool number_float(Json::number_float_t v, const Json::string_t&) {
    return Scalar(Field::Kind::kNumber, v, nullptr);
  }
  bool string(Json::string_t& v) { return Scalar(Field::Kind::kString, 0.0, &v); }
  bool binary(Json::binary_t&) { return Scalar(Field::Kind::kOther, 0.0, nullptr); }

  bool start_object(std::size_t) {
    if (depth_ == 0) return NotATimeline("an object");
    if (depth_ == 1) {
      event_.Clear();
      event_.index = next_index_++;
    } else {
      MarkContainer();
      in_args_ = in_args_ || (depth_ == 2 && key_ == "args");
    }
    ++depth_;
    return true;
  }
  bool end_object() {
    --depth_;
    if (depth_ == 2) in_args_ = false;
    if (depth_ != 1) return true;
    Status folded = folder_->Fold(event_);
    if (!folded.ok()) return Fail(event_.index, folded.message());
    ++events_;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 1) {
      event_.index = next_index_++;
      return Fail(event_.index, "not an object");
    }
    if (depth_ >= 2) MarkContainer();
    ++depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool key(Json::string_t& k) {
    if (depth_ == 2) key_ = k;
    if (depth_ == 3 && in_args_) args_key_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    if (position >= text_size_) {  // the text stops before the array closes: cut off
      truncated_ = true;
      return false;
    }
    std::string what = e.what();
    const size_t colon = what.find("] ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    return Fail(depth_ >= 2 ? event_.index : next_index_, "malformed JSON (" + what + ")");
  }

 private:
  // The field the value at the current depth and key fills, if the import reads it.
  Field* CurrentSlot() {
    if (depth_ == 2) return event_.Slot(key_, false);
    if (depth_ == 3 && in_args_) return event_.Slot(args_key_, true);
    return nullptr;
  }
  // A field the import reads holds an object or array: present, but of the wrong kind.
  void MarkContainer() {
    Field* slot = CurrentSlot();
    if (slot) slot->kind = Field::Kind::kOther;
  }
  bool Scalar(Field::Kind kind, double number, Json::string_t* text) {
    if (depth_ == 0) return NotATimeline("a single value");
    if (depth_ == 1) return Fail(next_index_++, "not an object");
    Field* slot = CurrentSlot();
    if (slot) {
      slot->kind = kind;
      slot->number = number;
      if (text) slot->text.assign(*text);
    }
    return true;
  }
  bool Fail(int64_t index, const std::string& what) {
    status_ = Status::InvalidArgument(source_ + ": event " + std::to_string(index) + ": " + what);
    return false;
  }
  bool NotATimeline(const std::string& found) {
    status_ = Status::InvalidArgument(source_ + ": not a Horovod timeline (" + found +
                                      ", not a JSON array of events)");
    return false;
  }

  const std::string& source_;
  size_t text_size_;
  EventFolder* folder_;
  Status status_;
  bool truncated_ = false;
  int depth_ = 0;
  int64_t next_index_ = 0;
  int64_t events_ = 0;
  bool in_args_ = false;
  std::string key_, args_key_;
  RawEvent event_;
};

}  // namespace

bool ParseShape(const std::string& text, std::vector<int64_t>* shape) {
  shape->clear();
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_space();
  if (i >= text.size() || text[i++] != '[') return false;
  skip_space();
  bool closed = i < text.size() && text[i] == ']';
  if (closed) ++i;
  while (!closed) {
    skip_space();
    const size_t begin = i;
    int64_t value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (value > (int64_t{1} << 50)) return false;
      value = value * 10 + (text[i++] - '0');
    }
    if (i == begin || value < 1) return false;
    shape->push_back(value);
    skip_space();
    if (i >= text.size()) return false;
    const char c = text[i++];
    closed = c == ']';
    if (!closed && c != ',') return false;
  }
  skip_space();
  return i == text.size();
}

Status ReadTimelineEvents(const std::string& text, const std::string& source, TimelineEvents* out) {
  *out = TimelineEvents();
  EventFolder folder(out, text.size());
  EventSax sax(source, text.size(), &folder);
  nlohmann::json::sax_parse(text, &sax);
  AUTOTUNE_RETURN_IF_ERROR(sax.status());
  out->truncated = sax.truncated();
  out->events = sax.events();
  std::vector<double>& cycles = out->cycle_starts_us;
  if (!std::is_sorted(cycles.begin(), cycles.end())) std::sort(cycles.begin(), cycles.end());
  return Status::Ok();
}

}  // namespace autotune::timeline_internal
