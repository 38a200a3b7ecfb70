#include "nn/checkpoint.hpp"

#include <map>
#include <set>
#include <sstream>

namespace attnlab::nn {

namespace {
bool has_prefix(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The name of each of the optimizer's parameters: the name the model gives the same tensor.
template <class T>
std::vector<std::string> optimizer_names(const Optimizer<T>& optimizer,
                                         const NamedParameters<T>& params, const char* who) {
  std::map<const Node<T>*, std::string> name_of;
  for (const auto& [name, tensor] : params)
    if (tensor.defined()) name_of.emplace(tensor.node().get(), name);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < optimizer.params().size(); ++i) {
    const Tensor<T>& p = optimizer.params()[i];
    const auto it = name_of.find(p.node().get());
    check(it != name_of.end(), who, optimizer.name(), "'s parameter ", i, " ",
          shape_str(p.shape()), " is not among the named parameters; its state is saved under "
          "the parameter's name, so build the optimizer over the model's parameters");
    names.push_back(it->second);
  }
  return names;
}
}  // namespace

template <class T>
void save_checkpoint(const std::string& path, const NamedParameters<T>& params,
                     const Optimizer<T>* optimizer) {
  Npz out;
  for (const auto& [name, tensor] : params) {
    check(!name.empty(), "save_checkpoint", "a parameter has an empty name");
    check(!has_prefix(name, kOptimizerPrefix), "save_checkpoint", "parameter name '", name,
          "' collides with the optimizer prefix '", kOptimizerPrefix, "'");
    check(!out.contains(name), "save_checkpoint", "parameter name '", name, "' appears twice");
    check(tensor.defined(), "save_checkpoint", "parameter '", name, "' is an empty tensor handle");
    out.add(name, NpyArray(tensor.value()));
  }
  if (optimizer) {
    // A named local: entries() refers into it.
    const Npz state = optimizer->state(optimizer_names(*optimizer, params, "save_checkpoint"));
    for (const auto& [key, array] : state.entries()) out.add(kOptimizerPrefix + key, array);
  }
  save_npz(path, out);
}

template <class T>
void load_checkpoint(const std::string& path, const NamedParameters<T>& params,
                     Optimizer<T>* optimizer) {
  load_checkpoint(load_npz(path), path, params, optimizer);
}

template <class T>
void load_checkpoint(const Npz& file, const std::string& source, const NamedParameters<T>& params,
                     Optimizer<T>* optimizer) {
  const std::vector<std::string> optimizer_param_names =
      optimizer ? optimizer_names(*optimizer, params, "load_checkpoint") : std::vector<std::string>{};
  std::vector<std::string> missing, unexpected, shapes, types;
  std::set<std::string> expected;
  for (const auto& [name, tensor] : params) {
    expected.insert(name);
    if (!file.contains(name)) {
      missing.push_back(name);
      continue;
    }
    const NpyArray& a = file.at(name);
    if (a.dtype() != DType::Float32 && a.dtype() != DType::Float64)
      types.push_back(name + ": " + dtype_descr(a.dtype()) + " is not a float type");
    else if (a.shape() != tensor.shape())
      shapes.push_back(name + ": expected " + shape_str(tensor.shape()) + ", found " +
                       shape_str(a.shape()));
  }
  Npz optimizer_state;
  const std::size_t prefix = std::string(kOptimizerPrefix).size();
  for (const auto& [key, array] : file.entries()) {
    // "optim/" alone names nothing (and Npz refuses an empty key): unexpected, as any stray key.
    if (has_prefix(key, kOptimizerPrefix) && key.size() > prefix)
      optimizer_state.add(key.substr(prefix), array);
    else if (!expected.count(key)) unexpected.push_back(key);
  }
  const bool want_state = optimizer != nullptr;
  const bool state_missing = want_state && optimizer_state.size() == 0;
  if (!missing.empty() || !unexpected.empty() || !shapes.empty() || !types.empty() ||
      state_missing) {
    std::ostringstream os;
    os << "'" << source << "' does not match the model";
    const auto list = [&](const char* title, const std::vector<std::string>& items) {
      if (items.empty()) return;
      os << "\n  " << title << " (" << items.size() << "):";
      for (const auto& s : items) os << "\n    " << s;
    };
    list("missing", missing);
    list("unexpected", unexpected);
    list("shape mismatch", shapes);
    list("wrong type", types);
    if (state_missing) os << "\n  no optimizer state (keys '" << kOptimizerPrefix << "...')";
    fail("load_checkpoint", os.str());
  }
  // Optimizer first: it validates before changing anything, so a bad state leaves both the
  // optimizer and the parameters untouched.
  // Its errors name the optimizer, not the file: say which file (found by fuzz/checkpoint.cpp).
  if (optimizer) {
    try {
      optimizer->load_state(optimizer_state, optimizer_param_names);
    } catch (const ShapeError& e) {
      fail("load_checkpoint", "'", source, "': ", e.what());
    }
  }
  NoGrad no_grad;
  for (const auto& [name, tensor] : params) tensor.mutable_value() = file.at(name).template to<T>();
}

#define ATTNLAB_INSTANTIATE(T)                                                                 \
  template void save_checkpoint<T>(const std::string&, const NamedParameters<T>&,             \
                                   const Optimizer<T>*);                                        \
  template void load_checkpoint<T>(const std::string&, const NamedParameters<T>&, Optimizer<T>*); \
  template void load_checkpoint<T>(const Npz&, const std::string&, const NamedParameters<T>&,    \
                                   Optimizer<T>*);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
