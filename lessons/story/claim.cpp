#include "lessons/story/claim.hpp"

namespace attnlab::lessons {

const char* expect_name(Expect e) {
  switch (e) {
    case Expect::every_run: return "every_run";
    case Expect::full_run: return "full_run";
    case Expect::either_way: return "either_way";
  }
  return "every_run";
}

}  // namespace attnlab::lessons
