#include "nn/module.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace attnlab::nn {

template <class T>
Module<T>::~Module() = default;

namespace {
void check_name(const char* what, const std::string& name) {
  check(!name.empty(), "Module", "empty ", what, " name");
  check(name.find('.') == std::string::npos || std::string(what) == "module", "Module",
        what, " name '", name, "' contains a dot");
}
}  // namespace

template <class T>
Tensor<T>& Module<T>::register_parameter(const std::string& name, Tensor<T> value) {
  check_name("parameter", name);
  need("Module", value, "parameter");
  for (const auto& [n, p] : params_)
    check(n != name, "Module", "parameter '", name, "' registered twice");
  value.set_requires_grad(true);
  params_.emplace_back(name, std::move(value));
  return params_.back().second;
}

template <class T>
void Module<T>::register_module(const std::string& name, Module<T>& child) {
  check_name("module", name);
  check(&child != this, "Module", "module '", name, "' registered as its own child");
  for (const auto& [n, c] : children_) check(n != name, "Module", "module '", name, "' registered twice");
  children_.emplace_back(name, &child);
}

template <class T>
void Module<T>::collect(const std::string& prefix,
                        std::vector<std::pair<std::string, Tensor<T>>>& out,
                        std::vector<const void*>& seen) const {
  for (const auto& [name, p] : params_) {
    const void* id = p.node().get();
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;  // tied: listed once
    seen.push_back(id);
    out.emplace_back(prefix + name, p);
  }
  for (const auto& [name, c] : children_) c->collect(prefix + name + ".", out, seen);
}

template <class T>
std::vector<std::pair<std::string, Tensor<T>>> Module<T>::named_parameters() const {
  std::vector<std::pair<std::string, Tensor<T>>> out;
  std::vector<const void*> seen;
  collect("", out, seen);
  return out;
}

template <class T>
std::vector<Tensor<T>> Module<T>::parameters() const {
  std::vector<Tensor<T>> out;
  for (auto& [name, p] : named_parameters()) out.push_back(p);
  return out;
}

template <class T>
std::size_t Module<T>::parameter_count() const {
  std::size_t n = 0;
  for (const auto& p : parameters()) n += p.size();
  return n;
}

template <class T>
std::vector<std::pair<std::string, Module<T>*>> Module<T>::named_modules() const {
  std::vector<std::pair<std::string, Module<T>*>> out;
  for (const auto& [name, c] : children_) {
    out.emplace_back(name, c);
    for (auto& [sub, m] : c->named_modules()) out.emplace_back(name + "." + sub, m);
  }
  return out;
}

template <class T>
void Module<T>::train(bool on) {
  training_ = on;
  for (auto& [name, c] : children_) c->train(on);
}

template <class T>
void Module<T>::zero_grad() {
  for (auto& p : parameters()) p.zero_grad();
}

namespace {
// 16640 -> "16,640"
std::string grouped(std::size_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}
}  // namespace

template <class T>
std::string Module<T>::summary() const {
  const auto named = named_parameters();
  std::size_t wn = 9, ws = 5, wc = 6;  // widths of "parameter", "shape", "params"
  std::size_t total = 0;
  for (const auto& [name, p] : named) {
    wn = std::max(wn, name.size());
    ws = std::max(ws, shape_str(p.shape()).size());
    wc = std::max(wc, grouped(p.size()).size());
    total += p.size();
  }
  wn = std::max(wn, std::string("total").size());
  wc = std::max(wc, grouped(total).size());
  std::ostringstream os;
  auto row = [&](const std::string& a, const std::string& b, const std::string& c) {
    os << std::left << std::setw(static_cast<int>(wn)) << a << "  " << std::setw(static_cast<int>(ws))
       << b << "  " << std::right << std::setw(static_cast<int>(wc)) << c << "\n";
  };
  const std::string rule(wn + ws + wc + 4, '-');
  row("parameter", "shape", "params");
  os << rule << "\n";
  for (const auto& [name, p] : named) row(name, shape_str(p.shape()), grouped(p.size()));
  os << rule << "\n";
  row("total", "", grouped(total));
  return os.str();
}

template class Module<float>;
template class Module<double>;

}  // namespace attnlab::nn
