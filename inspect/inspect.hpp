// inspect's models: each one a lesson's trained model that reads input typed on the command line.
// inspect_main.cpp parses the arguments common to all (the model's name, its inputs, --from, --out
// and the options the model declares) and hands them to the model's run; a new model is one file
// defining its InspectModel and one line in the table of inspect_main.cpp.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/seq2seq.hpp"
#include "lessons/kit/vit_model.hpp"
#include "nn/data/vocab.hpp"
#include "nn/positional/positional.hpp"
#include "plots/figure.hpp"

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
InspectModel luong_model();  // inspect/luong.cpp: lesson 03's four Luong date normalizers
InspectModel gpt_model();    // inspect/gpt.cpp: lesson 11's character GPT
InspectModel bert_model();   // inspect/bert.cpp: lesson 14's character BERT
InspectModel vit_model();    // inspect/vit.cpp: lesson 16's Vision Transformer
InspectModel translate_model();  // inspect/translate.cpp: lesson 08's translation Transformer

InspectModel long_model();       // inspect/long.cpp: lesson 09's four translation Transformers, one per positions
InspectModel captions_model();   // inspect/captions.cpp: lesson 20's captioners, soft and hard attention

// A translation Transformer's checkpoint (lessons/kit/translation_model.hpp) and how inspect names it.
struct TranslationModel {
  std::string lesson;       // "08_transformer": the run that writes it, the card's lesson
  std::string command;      // "translate": the inspect model that runs it
  std::string stem;         // "transformer": <from>/<stem>.json and .npz
  std::string description;  // "Transformer", in the page's title: "Lesson 08's Transformer on your sentences"
  nn::Positional positions; // what the card must say
};
// inspect/translate.cpp: translates r's sentences greedily (and by beam search with --beam) with the
// model `t` names, prints each translation and what it read, writes the cross-attention figures and
// explorer.html (inspect translate's usage says what); a missing card, one of another lesson or
// other positions is an error naming t.lesson, a word outside the vocabulary a UsageError.
int run_translation(const Request& r, const TranslationModel& t);

// The characters a person typed: one token per UTF-8 character ("é" is one, not two bytes), so
// that a character the model never saw is one token and is shown as itself.
std::vector<std::string> typed_characters(const std::string& text);

// The characters among `chars` that `v` does not hold, each once, in order, quoted: "'ä'".
std::vector<std::string> unknown_characters(const std::vector<std::string>& chars, const nn::data::Vocab& v);

// load(), its error (a missing or mismatched checkpoint) followed by how to make one: "(a run of
// lesson 11 writes both: build/bin/11_gpt --out DIR, then inspect gpt ... --from DIR)".
template <class Load>
auto load_checkpoint_of(const std::string& lesson, const std::string& model, Load load) {
  try {
    return load();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (a run of lesson " + lesson.substr(0, 2) + " writes both: build/bin/" +
                             lesson + " --out DIR, then inspect " + model + " ... --from DIR)");
  }
}

// For a model that cannot read a character it never saw (the GPT, the BERT): UsageError naming
// each such character of `chars` and the lesson whose vocabulary it is missing from.
void refuse_unknown(const std::vector<std::string>& chars, const nn::data::Vocab& v, const std::string& lesson);

// A model's own option as a number in [lo, hi], `fallback` when not given: UsageError naming the
// flag and the text otherwise ("--temperature needs a number from 0.01 to 100, got 'hot'").
double real_option(const Request& r, const std::string& flag, double fallback, double lo, double hi);
long long integer_option(const Request& r, const std::string& flag, long long fallback, long long lo, long long hi);

// heads_layer_N.png for every layer of a self-attention input: every head over the 24 tokens (what
// a heatmap shows legibly; the explorer has them all) centred on token `around` as far as they
// reach, titled "<title> (characters X-Y), layer N" with X counted from `numbered_from` (token 0
// of `in` is character numbered_from: a window cut from a longer text keeps its numbers).
std::vector<std::pair<std::string, plots::Figure>> head_figures(const lessons::AttentionInput& in, std::size_t around,
                                                                std::size_t numbered_from, const std::string& title);

// The model's outputs into the folder `out` (made if missing): each figure as <name>.png and the
// explorer page as explorer.html, every file written to a temporary name and renamed. The page is
// checked before anything is written.
void write_outputs(const std::string& out, const std::vector<std::pair<std::string, plots::Figure>>& figures,
                   const lessons::ExplorerPage& page);

// The image models' input (inspect/pictures.cpp). A PNG or a PGM file as grey levels, told apart by
// their first bytes (not the file's name): IoError led by `who` ("inspect vit") for a file that is
// neither, the readers' for one they cannot read. --invert as typed (auto, yes or no; UsageError
// otherwise). How prepare_image made a picture of `grey` into the model's side x side input, in
// words. --index as typed, "17" or "3,17,42": each below `count`, UsageError naming `what` and the
// range otherwise ("--index takes test-set indices from 0 to 9999 (several: 3,17,42), got '...'");
// none when not given.
xt::xarray<double> read_picture(const std::string& path, const std::string& who);
lessons::Invert invert_option(const Request& r);
std::string how_prepared(const xt::xarray<double>& grey, const lessons::PreparedImage& p, std::size_t side);
std::vector<std::size_t> indices_option(const Request& r, std::size_t count, const std::string& what);

// The date models of lessons 02 and 03 (inspect/date_models.cpp). A typed date as a model read it:
// its characters (a space shown ␣) and <eos>, the keys; what the model wrote greedily, at most
// kLongestDate characters, and the output characters with <eos> if it stopped, the queries; the
// attention (queries, keys); and the typed characters the model never saw, each once, quoted (read
// as <unk>).
inline constexpr std::size_t kLongestDate = 16;  // YYYY-MM-DD and the stop, with room to go wrong
struct DateReading {
  std::string input, output;
  std::vector<std::string> keys, queries;
  xt::xarray<double> attention;
  std::vector<std::string> unknown;
  std::vector<Index> ids{};  // what the model wrote, as ids (its <eos> too): the queries
};
std::vector<DateReading> read_dates(const lessons::LoadedSeq2Seq& m, const std::vector<std::string>& inputs);
// The key the output character `query` reads most.
std::size_t most_read(const DateReading& r, std::size_t query);
// One input's attention heatmap: a panel per map (lesson 03's four scores, two a row).
plots::Figure date_figure(const std::vector<lessons::AttentionMap>& maps, const std::string& title);

}  // namespace attnlab::inspect
