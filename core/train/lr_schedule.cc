#include "core/train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/model/spec_fields.h"
#include "formats/error.h"

namespace sparktorch {

using nlohmann::json;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

// A field that may be null: its default depends on the run (the epochs, the optimizer's lr).
json Nullable(SpecFields& f, const json& given, const char* key, bool integer) {
  if (!given.contains(key) || given[key].is_null()) {
    f.Number(key, 0, 0, 0);  // marks it read
    return nullptr;
  }
  if (integer) return f.PositiveInt(key);
  const double x = f.Number(key, 0, 0, kInf);
  if (x <= 0) f.Fail(key, "must be above 0, got 0");
  return x;
}

// One phase of one_cycle: from its start (the previous phase's end step) to `end`.
struct Phase {
  double end;
  double from;
  double to;
};

// Where step `i` lies on a piecewise annealing over `phases` (OneCycleLR's get_lr).
double Walk(const std::vector<Phase>& phases, double i, bool linear) {
  double begin = 0;
  for (size_t p = 0; p < phases.size(); ++p) {
    if (i <= phases[p].end || p + 1 == phases.size()) {
      const double span = phases[p].end - begin;
      const double pct = span > 0 ? (i - begin) / span : 1.0;
      const Phase& ph = phases[p];
      if (linear) return (ph.to - ph.from) * pct + ph.from;
      return ph.to + (ph.from - ph.to) / 2.0 * (std::cos(kPi * pct) + 1);
    }
    begin = phases[p].end;
  }
  return phases.back().to;
}

void CompleteWarmup(SpecFields& f, json& out) {
  out["warmup_epochs"] = f.Int("warmup_epochs", 0, 0);
  const double start = f.Number("warmup_start_factor", 1.0 / 3, 0, 1);
  if (start <= 0) f.Fail("warmup_start_factor", "must be above 0 and at most 1, got 0");
  out["warmup_start_factor"] = start;
}

}  // namespace

json CompleteLrScheduleSpec(const json& spec) {
  if (spec.is_null()) return nullptr;
  const std::string type = SpecType(spec, "lr_schedule");
  if (type == "none") return nullptr;
  static const json kNoFields = json::object();
  const json& given = spec.is_object() ? spec : kNoFields;
  SpecFields f(given, "lr_schedule (" + type + ")");
  json out = {{"type", type}};
  if (type == "step") {
    out["step_size"] = f.PositiveInt("step_size");
    out["gamma"] = f.Number("gamma", 0.1, 0, kInf);
    CompleteWarmup(f, out);
  } else if (type == "multistep") {
    std::vector<int64_t> milestones = f.PositiveList("milestones");
    if (!std::is_sorted(milestones.begin(), milestones.end()) ||
        std::adjacent_find(milestones.begin(), milestones.end()) != milestones.end()) {
      f.Fail("milestones", "must be increasing, got " + given["milestones"].dump());
    }
    out["milestones"] = milestones;
    out["gamma"] = f.Number("gamma", 0.1, 0, kInf);
    CompleteWarmup(f, out);
  } else if (type == "exponential") {
    if (!given.contains("gamma")) f.PositiveInt("gamma");  // says that it is required
    out["gamma"] = f.Number("gamma", 1, 0, kInf);
    CompleteWarmup(f, out);
  } else if (type == "cosine") {
    out["T_max"] = Nullable(f, given, "T_max", true);
    out["eta_min"] = f.Number("eta_min", 0, 0, kInf);
    CompleteWarmup(f, out);
  } else if (type == "one_cycle") {
    out["max_lr"] = Nullable(f, given, "max_lr", false);
    out["pct_start"] = f.Number("pct_start", 0.3, 0, 1);
    out["anneal_strategy"] = f.String("anneal_strategy", "cos", {"cos", "linear"});
    out["div_factor"] = f.Number("div_factor", 25, 0, kInf);
    out["final_div_factor"] = f.Number("final_div_factor", 1e4, 0, kInf);
    out["three_phase"] = f.Bool("three_phase", false);
    out["cycle_momentum"] = f.Bool("cycle_momentum", true);
    out["base_momentum"] = f.Number("base_momentum", 0.85, 0, 1);
    out["max_momentum"] = f.Number("max_momentum", 0.95, 0, 1);
    for (const char* key : {"div_factor", "final_div_factor"}) {
      if (out[key].get<double>() <= 0) f.Fail(key, "must be above 0, got 0");
    }
  } else if (type == "reduce_on_plateau") {
    out["factor"] = f.Number("factor", 0.1, 0, 1);
    if (out["factor"].get<double>() >= 1) f.Fail("factor", "must be below 1, got 1");
    out["patience"] = f.Int("patience", 10, 0);
    out["threshold"] = f.Number("threshold", 1e-4, 0, kInf);
    out["threshold_mode"] = f.String("threshold_mode", "rel", {"rel", "abs"});
    out["cooldown"] = f.Int("cooldown", 0, 0);
    out["min_lr"] = f.Number("min_lr", 0, 0, kInf);
    out["eps"] = f.Number("eps", 1e-8, 0, kInf);
  } else {
    throw SpecError("lr_schedule: unknown type \"" + type +
                    "\"; known: step, multistep, exponential, cosine, one_cycle, "
                    "reduce_on_plateau, none");
  }
  f.Done();
  return out;
}

LrSchedule::LrSchedule(const json& spec, double base_lr, int epochs, int64_t steps_per_epoch)
    : spec_(spec),
      type_(spec.is_null() ? "none" : spec.at("type").get<std::string>()),
      base_lr_(base_lr),
      epochs_(std::max(1, epochs)),
      steps_per_epoch_(std::max<int64_t>(1, steps_per_epoch)),
      plateau_lr_(base_lr),
      best_(kInf) {
  if (!spec_.is_null()) warmup_ = spec_.value("warmup_epochs", 0);
}

double LrSchedule::Main(int index) const {
  if (type_ == "step") {
    return base_lr_ * std::pow(spec_["gamma"].get<double>(), index / spec_["step_size"].get<int>());
  }
  if (type_ == "multistep") {
    const auto& milestones = spec_["milestones"];
    const auto passed = std::count_if(milestones.begin(), milestones.end(),
                                      [&](const json& m) { return m.get<int>() <= index; });
    return base_lr_ * std::pow(spec_["gamma"].get<double>(), static_cast<double>(passed));
  }
  if (type_ == "exponential") return base_lr_ * std::pow(spec_["gamma"].get<double>(), index);
  if (type_ == "cosine") {
    const int t_max = spec_["T_max"].is_null() ? std::max(1, epochs_ - warmup_) : spec_["T_max"].get<int>();
    const double eta_min = spec_["eta_min"].get<double>();
    return eta_min + (base_lr_ - eta_min) * (1 + std::cos(kPi * index / t_max)) / 2;
  }
  if (type_ == "reduce_on_plateau") return plateau_lr_;
  return base_lr_;
}

std::vector<double> LrSchedule::PhaseEnds() const {
  const double total = static_cast<double>(epochs_) * steps_per_epoch_;
  const double pct_start = spec_["pct_start"].get<double>();
  if (spec_["three_phase"].get<bool>()) return {pct_start * total - 1, 2 * pct_start * total - 2, total - 1};
  return {pct_start * total - 1, total - 1};
}

double LrSchedule::CycleStep(int epoch, int64_t step) const {
  return static_cast<double>(epoch - 1) * steps_per_epoch_ + static_cast<double>(step);
}

double LrSchedule::Lr(int epoch, int64_t step) const {
  if (type_ == "one_cycle") {
    const double max_lr = spec_["max_lr"].is_null() ? base_lr_ : spec_["max_lr"].get<double>();
    const double initial = max_lr / spec_["div_factor"].get<double>();
    const double min_lr = initial / spec_["final_div_factor"].get<double>();
    const std::vector<double> ends = PhaseEnds();
    std::vector<Phase> phases = {{ends[0], initial, max_lr}, {ends[1], max_lr, min_lr}};
    if (ends.size() == 3) phases = {{ends[0], initial, max_lr}, {ends[1], max_lr, initial}, {ends[2], initial, min_lr}};
    return Walk(phases, CycleStep(epoch, step), spec_["anneal_strategy"] == "linear");
  }
  const int e = epoch - 1;
  if (e < warmup_) {
    const double start = spec_["warmup_start_factor"].get<double>();
    return base_lr_ * (start + (1 - start) * e / warmup_);
  }
  return Main(e - warmup_);
}

std::optional<double> LrSchedule::Momentum(int epoch, int64_t step) const {
  if (type_ != "one_cycle" || !spec_["cycle_momentum"].get<bool>()) return std::nullopt;
  const double base = spec_["base_momentum"].get<double>();
  const double max = spec_["max_momentum"].get<double>();
  const std::vector<double> ends = PhaseEnds();
  std::vector<Phase> phases = {{ends[0], max, base}, {ends[1], base, max}};
  if (ends.size() == 3) phases = {{ends[0], max, base}, {ends[1], base, max}, {ends[2], max, max}};
  return Walk(phases, CycleStep(epoch, step), spec_["anneal_strategy"] == "linear");
}

bool LrSchedule::EndEpoch(double loss) {
  if (type_ != "reduce_on_plateau") return false;
  const double threshold = spec_["threshold"].get<double>();
  const bool relative = spec_["threshold_mode"].get<std::string>() == "rel";
  const bool better = relative ? loss < best_ * (1 - threshold) : loss < best_ - threshold;
  if (better) {
    best_ = loss;
    bad_epochs_ = 0;
  } else {
    ++bad_epochs_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    bad_epochs_ = 0;
  }
  if (bad_epochs_ <= spec_["patience"].get<int>()) return false;
  cooldown_left_ = spec_["cooldown"].get<int>();
  bad_epochs_ = 0;
  const double lowered = std::max(plateau_lr_ * spec_["factor"].get<double>(), spec_["min_lr"].get<double>());
  if (plateau_lr_ - lowered <= spec_["eps"].get<double>()) return false;
  plateau_lr_ = lowered;
  return true;
}

json LrSchedule::State() const {
  if (type_ != "reduce_on_plateau") return json::object();
  return {{"lr", plateau_lr_},
          {"best", std::isfinite(best_) ? json(best_) : json(nullptr)},
          {"num_bad_epochs", bad_epochs_},
          {"cooldown_counter", cooldown_left_}};
}

void LrSchedule::Restore(const json& state) {
  if (type_ != "reduce_on_plateau" || !state.is_object() || state.empty()) return;
  plateau_lr_ = state.at("lr").get<double>();
  best_ = state.at("best").is_null() ? kInf : state.at("best").get<double>();
  bad_epochs_ = state.at("num_bad_epochs").get<int>();
  cooldown_left_ = state.at("cooldown_counter").get<int>();
}

}  // namespace sparktorch
