// Gradient checks of the shape ops. Their backward only moves dy, so these rows catch gradients
// sent to the wrong place (a transposed index, a slice off by one, a lost repeated index).
#include "gradcheck/cases.hpp"

namespace attnlab::cases {

GRADCHECK_CASE("reshape", "(2,3,4) -> (6,4)", [] {
  return gradcheck([](const Inputs& x) { return reshape(x[0], {6, 4}); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("reshape inferred", "(2,3,4) -> (4,-1)", [] {
  return gradcheck([](const Inputs& x) { return reshape(x[0], {4, -1}); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("unsqueeze axis -1", "(2,3) -> (2,3,1)", [] {
  return gradcheck([](const Inputs& x) { return mul(unsqueeze(x[0], -1), x[1]); },
                   {rnd({2, 3}, 1), rnd({2, 3, 4}, 2)});
});
GRADCHECK_CASE("unsqueeze axis 0", "(2,3) -> (1,2,3)", [] {
  return gradcheck([](const Inputs& x) { return unsqueeze(x[0], 0); }, {rnd({2, 3}, 1)});
});
GRADCHECK_CASE("squeeze", "(2,1,3) -> (2,3)", [] {
  return gradcheck([](const Inputs& x) { return squeeze(x[0], 1); }, {rnd({2, 1, 3}, 1)});
});
GRADCHECK_CASE("transpose last two", "(2,3,4) -> (2,4,3)", [] {
  return gradcheck([](const Inputs& x) { return transpose(x[0]); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("transpose axes 0,2", "(2,3,4) -> (4,3,2)", [] {
  return gradcheck([](const Inputs& x) { return transpose(x[0], 0, 2); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("permute", "(2,3,4,5) -> (0,2,1,3)", [] {
  return gradcheck([](const Inputs& x) { return permute(x[0], {0, 2, 1, 3}); }, {rnd({2, 3, 4, 5}, 1)});
});
GRADCHECK_CASE("permute cycle", "(2,3,4) -> (2,0,1)", [] {
  return gradcheck([](const Inputs& x) { return permute(x[0], {2, 0, 1}); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("slice", "(5,4)[1:4]", [] {
  return gradcheck([](const Inputs& x) { return slice(x[0], 0, 1, 4); }, {rnd({5, 4}, 1)});
});
GRADCHECK_CASE("slice negative bounds step 2", "(2,7,3)[:, -6:-1:2]", [] {
  return gradcheck([](const Inputs& x) { return slice(x[0], 1, -6, -1, 2); }, {rnd({2, 7, 3}, 1)});
});
GRADCHECK_CASE("slice last axis", "(3,6)[..., 2:100]", [] {
  return gradcheck([](const Inputs& x) { return slice(x[0], -1, 2, 100); }, {rnd({3, 6}, 1)});
});
// Slices of one tensor whose gradients meet: the second adds into the first's, range by range.
GRADCHECK_CASE("slice overlapping pieces accumulated", "(2,5,3)[:, 0:3] + (2,5,3)[:, 0:5:2]", [] {
  return gradcheck([](const Inputs& x) { return add(slice(x[0], 1, 0, 3), slice(x[0], 1, 0, 5, 2)); },
                   {rnd({2, 5, 3}, 1)});
});
GRADCHECK_CASE("concat axis 1", "(2,3) ++ (2,1) ++ (2,2)", [] {
  return gradcheck([](const Inputs& x) { return concat<double>({x[0], x[1], x[2]}, 1); },
                   {rnd({2, 3}, 1), rnd({2, 1}, 2), rnd({2, 2}, 3)});
});
GRADCHECK_CASE("concat axis 0 reuse", "a ++ b ++ a", [] {
  return gradcheck([](const Inputs& x) { return concat<double>({x[0], x[1], x[0]}, 0); },
                   {rnd({2, 3}, 1), rnd({1, 3}, 2)});
});
GRADCHECK_CASE("stack axis 0", "3 x (2,3) -> (3,2,3)", [] {
  return gradcheck([](const Inputs& x) { return stack<double>({x[0], x[1], x[2]}, 0); },
                   {rnd({2, 3}, 1), rnd({2, 3}, 2), rnd({2, 3}, 3)});
});
GRADCHECK_CASE("stack axis -1", "2 x (2,3) -> (2,3,2)", [] {
  return gradcheck([](const Inputs& x) { return stack<double>({x[0], x[1]}, -1); },
                   {rnd({2, 3}, 1), rnd({2, 3}, 2)});
});
GRADCHECK_CASE("split axis 1", "(2,6) -> (2,1) (2,3) (2,2)", [] {
  // Weight the pieces differently so that a gradient sent to the wrong piece shows.
  return gradcheck([](const Inputs& x) {
    auto p = split(x[0], {1, 3, 2}, 1);
    return concat<double>({mul(p[0], 2.0), p[1], mul(p[2], -3.0)}, 1);
  }, {rnd({2, 6}, 1)});
});
GRADCHECK_CASE("split axis 0 one piece used", "(5,3) -> (2,3) (3,3)", [] {
  return gradcheck([](const Inputs& x) { return split(x[0], {2, 3}, 0)[1]; }, {rnd({5, 3}, 1)});
});
GRADCHECK_CASE("index_select axis 0", "(5,3)[idx (4)]", [] {
  const IndexArray idx{4, 0, 2, 1};
  return gradcheck([idx](const Inputs& x) { return index_select(x[0], 0, idx); }, {rnd({5, 3}, 1)});
});
GRADCHECK_CASE("index_select repeated indices", "(5,3)[idx (2,3)]", [] {
  const IndexArray idx{{1, 3, 1}, {1, 0, 3}};  // the embedding lookup of a batch
  return gradcheck([idx](const Inputs& x) { return index_select(x[0], 0, idx); }, {rnd({5, 3}, 1)});
});
GRADCHECK_CASE("index_select axis -1", "(2,3,4)[..., idx (3)]", [] {
  const IndexArray idx{3, 3, 0};
  return gradcheck([idx](const Inputs& x) { return index_select(x[0], -1, idx); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("gather axis 1", "(3,4) idx (3,2)", [] {
  const IndexArray idx{{0, 3}, {2, 2}, {1, 0}};
  return gradcheck([idx](const Inputs& x) { return gather(x[0], 1, idx); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("gather axis 0 smaller index", "(4,3) idx (2,2)", [] {
  const IndexArray idx{{3, 0}, {3, 1}};
  return gradcheck([idx](const Inputs& x) { return gather(x[0], 0, idx); }, {rnd({4, 3}, 1)});
});
GRADCHECK_CASE("gather axis -1 3-d", "(2,3,4) idx (2,3,1)", [] {
  IndexArray idx{1, 0, 3, 2, 2, 0};
  idx.reshape({2, 3, 1});
  return gradcheck([idx](const Inputs& x) { return gather(x[0], -1, idx); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("broadcast_to", "(3,1) -> (2,3,4)", [] {
  return gradcheck([](const Inputs& x) { return broadcast_to(x[0], {2, 3, 4}); }, {rnd({3, 1}, 1)});
});
GRADCHECK_CASE("broadcast_to scalar", "() -> (2,3)", [] {
  return gradcheck([](const Inputs& x) { return broadcast_to(x[0], {2, 3}); }, {rnd({}, 1)});
});

}  // namespace attnlab::cases
