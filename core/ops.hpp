// Every op of the engine. Each family's .cpp holds each op's forward and backward side by side.
#pragma once

#include "core/ops/additive_score.hpp"
#include "core/ops/attention.hpp"
#include "core/ops/choice.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/grouped_heads.hpp"
#include "core/ops/gru_cell.hpp"
#include "core/ops/linear_attention.hpp"
#include "core/ops/matmul.hpp"
#include "core/ops/norm.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/softmax.hpp"
#include "core/ops/tiled_attention.hpp"
#include "core/tensor.hpp"
