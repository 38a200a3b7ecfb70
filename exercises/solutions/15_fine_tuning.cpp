// Solutions to exercises/15_fine_tuning.cpp, and the mistakes the grader must catch.
#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// The mean of the embedded tokens is E^T f, a random linear image of the character frequencies f,
// and the residual stream carries it through the random layers: the probe reads about what it
// reads off f, a little less (E^T keeps 48 random directions of a vocabulary about twice as large).
double random_encoder_probe_accuracy(double bag_of_characters_accuracy) { return bag_of_characters_accuracy - 0.03; }
SOLUTION(random_encoder_probe_accuracy);

double chance(double) { return 0.2; }
WRONG_ANSWER(random_encoder_probe_accuracy, chance, "chance: an encoder that learned nothing knows nothing");

double lesson_finetuned(double) { return 0.95; }
WRONG_ANSWER(random_encoder_probe_accuracy, lesson_finetuned, "far above the bag: the encoder's layers add knowledge");

double half_way(double bag_of_characters_accuracy) { return (bag_of_characters_accuracy + 0.2) / 2; }
WRONG_ANSWER(random_encoder_probe_accuracy, half_way, "half-way between chance and the bag of characters");

}  // namespace
