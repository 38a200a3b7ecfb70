// A lesson's reference run: what its full run measures, as mean ± sd over seeds, on a named
// machine. scripts/seeds.sh --reference writes it to lessons/reference/NN_name.json (through
// metric_spread --reference), the build compiles that file into the lesson's program, and every
// run carries it into its story.json: the report and the course book show the learner's own
// number beside what the full lesson reaches, even after a quick run.
//
//   {"lesson": "07_multi_head", "mode": "full", "seeds": [1, 2, 3], "machine": "...",
//    "date": "2026-11-26", "arguments": "--threads 1", "seconds": {"mean": 120.1, "sd": 4.2},
//    "metrics": {"test_acc_triple_h4": {"mean": 1.0, "sd": 0.0, "min": 1.0, "max": 1.0, "n": 3}, ...},
//    "claims": {"two_heads_solve_pair": {"held": 3, "of": 3, "expect": "every_run"}, ...}}
#pragma once

#include <nlohmann/json.hpp>

namespace attnlab::lessons {

// Called once by the lesson program's generated source (lessons/CMakeLists.txt) with the text of
// its reference file; std::invalid_argument when it is not JSON.
void set_reference(const char* json);

// This program's reference, or null when the lesson has none yet.
const nlohmann::ordered_json& reference();

// "0.997 ± 0.006" for a metric of the reference ("" when the reference lacks it).
std::string reference_text(const std::string& metric);

}  // namespace attnlab::lessons
