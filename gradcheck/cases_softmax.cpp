// Gradient checks of the softmax family and the losses (every option of cross_entropy).
#include <limits>

#include "gradcheck/cases.hpp"

namespace attnlab::cases {

namespace {
GradcheckResult sm(bool log, const Shape& s, long axis) {
  return gradcheck(
      [log, axis](const Inputs& x) { return log ? log_softmax(x[0], axis) : softmax(x[0], axis); },
      {rnd(s, 1, -2.0, 2.0)});
}
GradcheckResult ce(const Shape& s, const IndexArray& t, CrossEntropyOptions o = {}) {
  return gradcheck([t, o](const Inputs& x) { return cross_entropy(x[0], t, o); },
                   {rnd(s, 1, -2.0, 2.0)});
}
}  // namespace

GRADCHECK_CASE("softmax axis -1", "(3,5)", [] { return sm(false, {3, 5}, -1); });
GRADCHECK_CASE("softmax axis 0", "(4,3)", [] { return sm(false, {4, 3}, 0); });
GRADCHECK_CASE("softmax 3-D middle axis", "(2,4,3) axis 1", [] { return sm(false, {2, 4, 3}, 1); });
GRADCHECK_CASE("log_softmax axis -1", "(3,5)", [] { return sm(true, {3, 5}, -1); });
GRADCHECK_CASE("log_softmax axis 0", "(4,3)", [] { return sm(true, {4, 3}, 0); });
GRADCHECK_CASE("log_softmax 3-D middle axis", "(2,4,3) axis 1",
               [] { return sm(true, {2, 4, 3}, 1); });

// masked_softmax: hidden entries and a fully hidden row must get exactly zero gradient, which the
// finite differences confirm (the output there does not move at all).
GRADCHECK_CASE("masked_softmax last axis", "(3,5), row 1 fully hidden, broadcast (3,5)", [] {
  Mask hidden = Mask{{false, true, false, false, true}, {true, true, true, true, true}, {false, false, false, false, true}};
  return gradcheck([hidden](const Inputs& x) { return masked_softmax(x[0], Allowed::except(hidden)); },
                   {rnd({3, 5}, 1, -2.0, 2.0)});
});
// A row whose allowed scores are all -inf has nothing to attend to either: zeros and zero
// gradient, like a fully hidden row (row 0 here), never NaN; -inf beside finite scores gets 0.
GRADCHECK_CASE("masked_softmax -inf scores", "(3,4), row 0 all -inf where allowed, row 2 one -inf", [] {
  const Mask hidden = Mask{{true, false, false, true}, {false, false, false, false}, {false, false, true, false}};
  TD x = rnd({3, 4}, 4, -2.0, 2.0);
  Array<double> v = x.value();
  v(0, 1) = v(0, 2) = v(2, 0) = -std::numeric_limits<double>::infinity();
  return gradcheck([hidden](const Inputs& in) { return masked_softmax(in[0], Allowed::except(hidden)); },
                   {TD(v, true)});
});
GRADCHECK_CASE("masked_softmax key mask broadcast", "(2,3,4), allowed (2,1,4)", [] {
  const Allowed keys = Allowed::where(Mask{{{true, true, false, true}}, {{true, false, false, false}}});
  return gradcheck([keys](const Inputs& x) { return masked_softmax(x[0], keys); }, {rnd({2, 3, 4}, 2, -2.0, 2.0)});
});
GRADCHECK_CASE("masked_softmax middle axis", "(2,4,3) axis 1, allowed (4,1)", [] {
  Mask column = {true, false, true, true};
  column.reshape({4, 1});  // a literal {{true}, {false}, ...} is ambiguous to xtensor
  const Allowed rows = Allowed::where(column);
  return gradcheck([rows](const Inputs& x) { return masked_softmax(x[0], rows, 1); }, {rnd({2, 4, 3}, 3, -2.0, 2.0)});
});

GRADCHECK_CASE("cross_entropy plain", "(4,5), t (4)",
               [] { return ce({4, 5}, IndexArray{0, 3, 4, 1}); });
GRADCHECK_CASE("cross_entropy label smoothing", "(4,5), t (4), eps 0.1", [] {
  CrossEntropyOptions o;
  o.label_smoothing = 0.1;
  return ce({4, 5}, IndexArray{0, 3, 4, 1}, o);
});
GRADCHECK_CASE("cross_entropy ignore_index", "(4,5), t (4), two ignored", [] {
  return ce({4, 5}, IndexArray{2, -100, 4, -100});
});
GRADCHECK_CASE("cross_entropy ignore_index 0 sum smoothing", "(2,3,5), pad 0", [] {
  CrossEntropyOptions o;
  o.ignore_index = 0;
  o.label_smoothing = 0.2;
  o.reduction = Reduction::Sum;
  return ce({2, 3, 5}, IndexArray{{1, 0, 3}, {4, 2, 0}}, o);
});
GRADCHECK_CASE("cross_entropy 3-D logits", "(2,3,5), t (2,3)",
               [] { return ce({2, 3, 5}, IndexArray{{1, 0, 3}, {4, 2, 2}}); });

GRADCHECK_CASE("mse", "(3,4) vs (3,4)", [] {
  return gradcheck([](const Inputs& x) { return mse(x[0], x[1]); },
                   {rnd({3, 4}, 1), rnd({3, 4}, 2)});
});

}  // namespace attnlab::cases
