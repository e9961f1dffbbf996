// predict_main.cpp — `dpscale predict`: which part runs. The options are predict_args.h's, what
// they set up predict_setup.h's.
#include "predict_main.h"

#include <iostream>

#include "cap_check.h"
#include "contract/link_model.h"
#include "predict_args.h"
#include "predict_setup.h"
#include "predict_table.h"
#include "recommend.h"
#include "recommend_cap.h"
#include "textbook.h"
#include "validate.h"

namespace dpscale::predict {

namespace {

// The book's table with the inputs given (the book's own otherwise).
int run_textbook(const PredictArgs& a) {
  if (a.textbook == "15.9.1") {
    Sim1591 s = a.book1591;
    if (!a.world_sizes.empty()) s.world_sizes = a.world_sizes;
    std::cout << render_1591(s) << std::flush;
    return 0;
  }
  Sim1521 s = a.book1521;
  if (!a.intra_link.empty()) {
    const LinkModel l = parse_link(a.intra_link);
    s.intra_alpha_us = l.alpha_us, s.intra_gbps = l.gbps;
  }
  std::cout << render_1521(s) << std::flush;
  return 0;
}

// The step model: a validation of a sweep, the advice, or the table of predictions.
int run_model(const PredictArgs& a, bool dilation_given) {
  const std::optional<Calibration> cal = calibration_of(a);
  if (!a.validate.empty()) {
    std::cout << render_validation(validate(a.validate, cal), a.format) << std::flush;
    return 0;
  }
  if (!a.validate_caps.empty()) {
    std::cout << render_cap_check(check_caps(a.validate_caps, cal), a.format) << std::flush;
    return 0;
  }
  const PredictSetup p = set_up_prediction(a, cal, dilation_given);
  if (a.recommend) {
    std::cout << render_recommendations(recommend(p.singles, p.ctx, p.world_sizes), p.ctx, a.format) << std::flush;
  } else if (a.recommend_cap) {
    std::cout << render_caps(recommend_caps(p.singles, p.ctx, p.world_sizes), p.ctx, a.format) << std::flush;
  } else {
    std::cout << render_rows(predict_rows(p.singles, p.ctx, p.modes, p.world_sizes), p.ctx, a.format) << std::flush;
  }
  return 0;
}

}  // namespace

PredictCommand::PredictCommand(CLI::App& app) : a_(std::make_unique<PredictArgs>()) {
  cmd_ = app.add_subcommand("predict", "predict epoch time, speedup and E(K) to K = 256 from a single-device run (textbook 15.9, 15.2)");
  add_predict_options(*cmd_, *a_);
}

PredictCommand::~PredictCommand() = default;

int PredictCommand::run() const {
  if (!a_->textbook.empty()) return run_textbook(*a_);
  return run_model(*a_, cmd_->count("--link-dilation") > 0);
}

std::unique_ptr<PredictCommand> add_predict_command(CLI::App& app) { return std::make_unique<PredictCommand>(app); }

}  // namespace dpscale::predict
