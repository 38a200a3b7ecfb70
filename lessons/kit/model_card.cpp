#include "lessons/kit/model_card.hpp"

#include <cmath>
#include <stdexcept>

#include "io/files.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::lessons {

Card Card::read(const std::string& file, const std::string& who) {
  Card c{who, file, {}};
  const std::string bytes = read_file(file, who.c_str());
  try {
    c.json = Json::parse(bytes);
  } catch (const Json::exception& e) {
    throw std::runtime_error(who + ": '" + file + "' is not JSON: " + e.what());
  }
  if (!c.json.is_object()) throw std::runtime_error(who + ": '" + file + "' is not a JSON object");
  return c;
}

const Json& Card::field(const std::string& key) const {
  if (!json.contains(key)) throw std::runtime_error(who + ": '" + file + "' has no \"" + key + "\"");
  return json[key];
}

void Card::expect(const std::string& key, const Json& expected, const std::string& rebuild) const {
  const Json& got = field(key);
  if (got != expected)
    throw std::runtime_error(who + ": '" + file + "' was trained with " + key + " " + got.dump() + ", this code builds " +
                             expected.dump() + ": " + rebuild);
}

nn::Activation Card::activation() const {
  const std::string name = field("activation").get<std::string>();
  if (name != "gelu" && name != "relu")
    throw std::runtime_error(who + ": '" + file + "': unknown activation \"" + name + "\"");
  return name == "gelu" ? nn::Activation::GELU : nn::Activation::ReLU;
}

std::string activation_name(nn::Activation a) { return a == nn::Activation::GELU ? "gelu" : "relu"; }

Json card_origin() { return {{"lesson", lesson().info().id}, {"seed", seed()}, {"quick", quick()}}; }

CardOrigin origin_of(const Card& card) {
  return {card.field("lesson").get<std::string>(), card.field("seed").get<long long>(), card.field("quick").get<bool>()};
}

void put_layer(Json& card, const nn::LayerConfig& l) {
  card["d_model"] = l.d_model, card["heads"] = l.heads, card["kv_heads"] = l.kv_heads ? l.kv_heads : l.heads;
  card["d_ff"] = l.d_ff, card["norm_first"] = l.norm_first, card["activation"] = activation_name(l.activation);
  card["norm_eps"] = l.eps;
}

nn::LayerConfig layer_of(const Card& card) {
  // The shared name, or the older one on a card that has only that.
  const auto either = [&](const char* name, const char* older) -> const Json& {
    return card.json.contains(name) || !card.json.contains(older) ? card.field(name) : card.json[older];
  };
  nn::LayerConfig l;
  l.d_model = card.field("d_model").get<std::size_t>(), l.heads = card.field("heads").get<std::size_t>();
  const std::size_t kv = card.json.contains("kv_heads") ? card.json["kv_heads"].get<std::size_t>() : l.heads;
  l.kv_heads = kv == l.heads ? 0 : kv;  // 0: multi-head attention, as the layer counts it
  l.d_ff = either("d_ff", "feed_forward").get<std::size_t>();
  l.dropout = 0.0;
  l.norm_first = card.field("norm_first").get<bool>();
  l.activation = card.activation();
  l.eps = either("norm_eps", "eps").get<double>();
  return l;
}

Json to_json(const HeldOut& h) {
  return {{"metric", h.metric}, {"value", h.value}, {"examples", h.examples}, {"split", h.split}};
}

HeldOut held_out_of(const Card& card) {
  const Json& j = card.field("held_out");
  try {
    return {j.at("metric").get<std::string>(), j.at("value").get<double>(), j.at("examples").get<std::size_t>(),
            j.at("split").get<std::string>()};
  } catch (const Json::exception& e) {
    throw std::runtime_error(card.who + ": '" + card.file + "': \"held_out\" is not {metric, value, examples, split}: " +
                             e.what());
  }
}

void check_probe(const Card& card, const std::vector<double>& now, double tolerance, const std::string& rebuild) {
  const Json& probe = card.field("probe");
  if (!probe.contains("outputs") || !probe["outputs"].is_array())
    throw std::runtime_error(card.who + ": '" + card.file + "': \"probe\" has no \"outputs\"");
  const std::vector<double> then = probe["outputs"].get<std::vector<double>>();
  if (then.size() != now.size())
    throw std::runtime_error(card.who + ": '" + card.file + "': the probe recorded " + std::to_string(then.size()) +
                             " outputs, this code computes " + std::to_string(now.size()) + ": " + rebuild);
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < now.size(); ++i) {
    const double d = std::isfinite(now[i]) ? std::abs(now[i] - then[i]) : INFINITY;
    if (d > worst) worst = d, at = i;
  }
  if (worst > tolerance)
    throw std::runtime_error(card.who + ": '" + card.file + "': the weights do not compute, with this code, what the "
                             "lesson recorded on the card's probe (output " + std::to_string(at) + ": " +
                             fixed(now[at], 4) + " against " + fixed(then[at], 4) + "; tolerance " + sci(tolerance) +
                             "): the model this code builds is not the one that was trained. " + rebuild);
}

std::vector<std::string> card_tokens(const nn::data::Vocab& v) {
  return {v.tokens().begin() + nn::data::Vocab::num_specials, v.tokens().end()};
}

nn::data::Vocab vocab_from_card(const std::vector<std::string>& tokens) {
  nn::data::Vocab v;
  for (const std::string& t : tokens) v.add(t);
  return v;
}

}  // namespace attnlab::lessons
