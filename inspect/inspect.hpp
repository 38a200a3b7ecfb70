// inspect's models: each one a lesson's trained model that reads input typed on the command line.
// inspect_main.cpp parses the arguments common to all (the model's name, its inputs, --from, --out
// and the options the model declares) and hands them to the model's run; a new model is one file
// defining its InspectModel and one line in the table of inspect_main.cpp.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nn/data/vocab.hpp"

namespace attnlab::inspect {

// One command line, parsed: `inspect MODEL INPUT... [--from DIR] [--out DIR] [--OPTION VALUE]...`.
struct Request {
  std::string model, from, out;               // from and out already defaulted from the model
  std::vector<std::string> inputs;            // never empty, none blank
  std::map<std::string, std::string> options; // only the model's own, e.g. {"--top-k", "5"}
};

struct InspectModel {
  std::string name;                  // "dates"
  std::string usage;                 // its lines of the usage text (indented, ending in a newline)
  std::string default_from;          // the reference checkpoint, relative to the source tree
  std::vector<std::string> options;  // options it takes, each with a value ("--temperature")
  int (*run)(const Request&);
  std::string input_option = "";     // one of options that can stand for the inputs ("--index": test images)
};

// The models, one file each.
InspectModel dates_model();  // inspect/dates.cpp: lesson 02's date normalizer
InspectModel vit_model();    // inspect/vit.cpp: lesson 14's Vision Transformer
InspectModel translate_model();  // inspect/translate.cpp: lesson 08's translation Transformer

// The characters a person typed: one token per UTF-8 character ("é" is one, not two bytes), so
// that a character the model never saw is one token and is shown as itself.
std::vector<std::string> typed_characters(const std::string& text);

// The characters among `chars` that `v` does not hold, each once, in order, quoted: "'ä'".
std::vector<std::string> unknown_characters(const std::vector<std::string>& chars, const nn::data::Vocab& v);

}  // namespace attnlab::inspect
