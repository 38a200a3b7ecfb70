// Leftovers of killed writers. A writer names what it has not finished under a hidden prefix
// followed by its process id (".report.md.tmp-4242-Xa9", ".01_attention_pooling.partial-4242");
// a process killed in the middle cannot remove them, so the next writer of the same target does.
#pragma once

#include <string>
#include <vector>

namespace attnlab {

// The entries of `folder` named <prefix><pid> or <prefix><pid>-<anything> whose process no longer
// runs (an entry of a live process, this one included, is left out). Full paths.
std::vector<std::string> orphans(const std::string& folder, const std::string& prefix);

}  // namespace attnlab
