// Gradient checks as a lesson shows them: each check named, with its input shapes, and the table
// build/bin/gradcheck prints (max abs and rel error, OK or FAIL), each failure's detail below it.
#pragma once

#include <string>
#include <vector>

#include "core/gradcheck.hpp"

namespace attnlab::lessons {

struct NamedCheck {
  std::string name, shapes;  // "softmax", "(3,5)"
  GradcheckResult result;
};

// gradcheck(f, inputs) (core/gradcheck.hpp) with its defaults, named.
NamedCheck named_check(const std::string& name, const std::string& shapes, const GradFn& f,
                       std::vector<Tensor<double>> inputs);

// The table of checks (one row each), then "FAIL name: detail" for each that failed.
void gradcheck_table(const std::vector<NamedCheck>& checks);

// How many of the checks failed.
std::size_t failed_count(const std::vector<NamedCheck>& checks);

// The decimal digits the analytic and the numeric gradients agree to: -log10 of the largest
// relative error, 0 when that error is 1 or more, 17 (double's limit) when it is 0.
double digits_of_agreement(const GradcheckResult& result);

}  // namespace attnlab::lessons
