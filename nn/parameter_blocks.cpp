#include "nn/parameter_blocks.hpp"

#include <map>

#include "core/error.hpp"

namespace attnlab::nn {

namespace {
bool starts_with_block(const std::string& name, const std::string& block) {
  return name.size() > block.size() && name.compare(0, block.size(), block) == 0 && name[block.size()] == '.';
}
}  // namespace

template <class T>
std::vector<ParameterBlock> parameter_blocks(const Module<T>& model, std::size_t max_depth) {
  check(max_depth > 0, "parameter_blocks", "max_depth must be at least 1");
  // A module's depth is one more than its parent's, the parent being the longest module name
  // that prefixes it: "encoder.layers.0" sits under "encoder" ("encoder.layers" is no module).
  std::map<std::string, std::size_t> depth;
  std::vector<ParameterBlock> out;
  std::vector<std::string> top;
  for (const auto& [name, m] : model.named_modules()) {
    std::size_t d = 1, parent = 0;
    for (const auto& [other, od] : depth)
      if (starts_with_block(name, other) && other.size() > parent) parent = other.size(), d = od + 1;
    depth[name] = d;
    if (d == 1) top.push_back(name);
    if (d <= max_depth) out.push_back({name, d, m->parameter_count()});
  }
  // Parameters the model holds itself, outside every sub-module.
  for (const auto& [name, p] : model.named_parameters()) {
    bool inside = false;
    for (const std::string& t : top) inside = inside || starts_with_block(name, t);
    if (!inside) out.push_back({name, 1, p.size()});
  }
  return out;
}

template std::vector<ParameterBlock> parameter_blocks<float>(const Module<float>&, std::size_t);
template std::vector<ParameterBlock> parameter_blocks<double>(const Module<double>&, std::size_t);

}  // namespace attnlab::nn
