// inspect: a trained lesson model on your own input.
//
//   inspect dates "3rd of March, 1997" "12/25/68"
//
// loads a lesson's model (the reference checkpoint kept in lessons/checkpoints/, or the run given
// with --from), runs it on each input, prints what it says and writes into the output folder the
// attention figures for those inputs and the attention explorer (explorer.html). Nothing is
// written unless every input went through. This file is the dispatcher: each model is its own file
// (inspect/inspect.hpp lists them), added here by one line of kModels.
#include <algorithm>
#include <iostream>

#include "inspect/inspect.hpp"
#include "io/program.hpp"

using namespace attnlab;
using namespace attnlab::inspect;

namespace {

const std::vector<InspectModel> kModels = {
    dates_model(),
    luong_model(),
    gpt_model(),
    bert_model(),
    vit_model(),
    translate_model(),
    long_model(),
    captions_model(),
};

const InspectModel* find_model(const std::string& name) {
  for (const InspectModel& m : kModels)
    if (m.name == name) return &m;
  return nullptr;
}

std::string model_names() {
  std::string out;
  for (const InspectModel& m : kModels) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

std::string usage() {
  std::string u = "usage: inspect MODEL INPUT... [--from DIR] [--out DIR] [model options] [--help] [--version]\n";
  for (const InspectModel& m : kModels) u += m.usage;
  u += "  --from DIR   a run of the model's lesson to use instead of its reference checkpoint (below)\n"
       "  --out DIR    where the figures and explorer.html go (default out/inspect/MODEL)\n"
       "  Reference checkpoints (a full run of each lesson, seed 1) live in lessons/checkpoints/.\n";
  return u;
}

Request parse(const std::vector<std::string>& args) {
  Request r;
  std::size_t i = 0;
  for (; i < args.size() && r.model.empty(); ++i) {
    if (args[i].rfind("--", 0) == 0) throw UsageError("the model comes first, before '" + args[i] + "'");
    r.model = args[i];
  }
  if (r.model.empty()) throw UsageError("no model named (the models: " + model_names() + ")");
  const InspectModel* m = find_model(r.model);
  if (!m) throw UsageError("unknown model '" + r.model + "' (the models: " + model_names() + ")");
  r.from = std::string(ATTNLAB_SOURCE_DIR) + "/" + m->default_from, r.out = "out/inspect/" + m->name;
  for (; i < args.size(); ++i) {
    const std::string& s = args[i];
    const bool own = std::find(m->options.begin(), m->options.end(), s) != m->options.end();
    if (s == "--from" || s == "--out" || own) {
      if (i + 1 >= args.size() || args[i + 1].empty()) throw UsageError(s + " needs a value");
      const std::string& v = args[++i];
      if (s == "--from") r.from = v;
      else if (s == "--out") r.out = v;
      else r.options[s] = v;
    } else if (s.rfind("--", 0) == 0) {
      throw UsageError("unknown option '" + s + "' for " + m->name);
    } else {
      r.inputs.push_back(s);
    }
  }
  if (r.inputs.empty() && !r.options.count(m->input_option)) throw UsageError("no input given for " + r.model);
  for (const std::string& in : r.inputs)
    if (in.find_first_not_of(" \t") == std::string::npos) throw UsageError("an input is empty");
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  return run_program("inspect", usage(), argc, argv, [](const std::vector<std::string>& args) {
    const Request r = parse(args);
    return find_model(r.model)->run(r);
  });
}
