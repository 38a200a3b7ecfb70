// A reference checkpoint's card, edited one change at a time: the tests of `inspect`'s loaders
// (translate, vit, captions) check that a card which no longer describes its weights is refused.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "tests/helpers.hpp"

namespace attnlab::testing {

// Copies reference/stem.npz into dir and returns with(change): reference/stem.json with change
// applied, written as dir/stem.json, then load(dir) run; it returns the message load threw, or
// "(no exception)".
inline std::function<std::string(const std::function<void(nlohmann::json&)>&)> card_editor(
    const std::string& dir, const std::string& reference, const std::string& stem,
    std::function<void(const std::string&)> load) {
  std::filesystem::copy_file(reference + "/" + stem + ".npz", dir + "/" + stem + ".npz");
  const nlohmann::json card = nlohmann::json::parse(read_file(reference + "/" + stem + ".json"));
  return [=](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json c = card;
    change(c);
    write_file_atomic(dir + "/" + stem + ".json", c.dump());
    return any_error([&] { load(dir); });
  };
}

}  // namespace attnlab::testing
