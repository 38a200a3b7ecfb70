// Everything a lesson uses, in one include: the story (lessons/story: say, section, table,
// metric, ...), the training loop (fit) and the figures. Lessons write `using namespace
// attnlab::lessons;` and tell their story.
#pragma once

#include "core/ops.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/fit.hpp"
#include "lessons/kit/heads.hpp"
#include "lessons/kit/tagging.hpp"
#include "lessons/kit/timing.hpp"
#include "lessons/kit/train.hpp"
#include "lessons/story/clock.hpp"
#include "lessons/story/lesson.hpp"
#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"
#include "nn/metrics.hpp"
#include "nn/optim.hpp"
#include "plots/plots.hpp"
