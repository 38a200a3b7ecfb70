// The old name of what a training run records and of evaluation in batches, from before the
// training loop moved into train() (lessons/kit/train.hpp). Include lessons/kit/history.hpp,
// lessons/kit/in_batches.hpp or lessons/kit/train.hpp instead; this header is kept only so that
// code written against the old name still builds, and goes when nothing includes it.
#pragma once

#include "lessons/kit/history.hpp"
#include "lessons/kit/in_batches.hpp"
#include "lessons/kit/train.hpp"
