// lessons/kit/pixel_mlp: the MLP on raw pixels gives one row of logits per image, computes
// out(gelu(hidden(gelu(in(flat pixels))))) exactly, has the parameters its sizes say, and refuses
// images of another size naming itself.
#include <doctest/doctest.h>

#include "core/ops.hpp"
#include "lessons/kit/pixel_mlp.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using doctest::Contains;

TEST_CASE("PixelMLP: logits from the flattened pixels, its parameter count, and a clear error") {
  Generator gen(4);
  const PixelMLP mlp(gen, 12, 5, 3);
  CHECK(mlp.parameter_count() == 12 * 5 + 5 + 5 * 5 + 5 + 5 * 3 + 3);
  const Tensor<float> images(random_uniform<float>({2, 3, 4}, gen));
  const Tensor<float> logits = mlp.forward(images);
  REQUIRE(logits.shape() == std::vector<std::size_t>{2, 3});
  const Tensor<float> by_hand = mlp.out(gelu(mlp.hidden(gelu(mlp.in(reshape(images, {2, 12}))))));
  CHECK(logits.value() == by_hand.value());
  CHECK_THROWS_WITH_AS(mlp.forward(Tensor<float>(random_uniform<float>({2, 4, 4}, gen))),
                       Contains("PixelMLP::forward: needs images (B, H, W) of 12 pixels, got (2,4,4)"), ShapeError);
}
