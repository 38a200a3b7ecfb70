// Checkpoints: round trip with optimizer state, mismatch reports, atomic saves, corrupt files.
#include <doctest/doctest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "nn/checkpoint.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using namespace attnlab::nn;

namespace {

// A tiny "model": named parameters as a Module would report them.
template <class T>
struct Model {
  Generator gen;
  Tensor<T> w, b, emb;
  explicit Model(std::uint64_t seed, std::size_t rows = 3)
      : gen(seed),
        w(random_normal<T>({rows, 4}, gen), true),
        b(random_normal<T>({4}, gen), true),
        emb(random_normal<T>({5, 2}, gen), true) {}
  NamedParameters<T> named() const {
    return {{"encoder.layers.0.w", w}, {"encoder.layers.0.b", b}, {"embed.weight", emb}};
  }
  std::vector<Tensor<T>> params() const { return {w, b, emb}; }
  void fake_gradients(double scale) {
    for (const auto& p : params()) p.node()->accumulate(Array<T>(random_normal<T>(p.shape(), gen, 0.0, scale)));
  }
};

// Limits the size of any file this process writes, for the scope's lifetime: the next write
// past the limit fails with EFBIG, as on a full disk (SIGXFSZ ignored so the process survives).
struct FileSizeLimit {
  rlimit old{};
  void (*old_handler)(int);
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler = ::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    rlimit lim = old;
    lim.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, old_handler);
  }
};

}  // namespace

TEST_CASE_TEMPLATE("checkpoint round trip restores parameters and optimizer state exactly", T, float, double) {
  TempDir dir;
  Model<T> m(1);
  Adam<T> opt(m.params(), 0.01);
  for (int k = 0; k < 2; ++k) {
    m.fake_gradients(1.0);
    opt.step();
    opt.zero_grad();
  }
  save_checkpoint(dir / "ckpt.npz", m.named(), &opt);

  Model<T> fresh(99);
  Adam<T> opt2(fresh.params(), 0.5);
  CHECK(fresh.w.value() != m.w.value());
  load_checkpoint(dir / "ckpt.npz", fresh.named(), &opt2);
  CHECK(fresh.w.value() == m.w.value());
  CHECK(fresh.b.value() == m.b.value());
  CHECK(fresh.emb.value() == m.emb.value());
  CHECK(opt2.lr() == 0.01);
  CHECK(opt2.steps() == 2);
  // Training continues identically.
  m.fake_gradients(0.3);
  const auto mp = m.params(), fp = fresh.params();
  for (std::size_t i = 0; i < mp.size(); ++i) fp[i].node()->accumulate(Array<T>(mp[i].grad()));
  opt.step();
  opt2.step();
  CHECK(fresh.w.value() == m.w.value());

  // Weights-only loading ignores the optimizer state; the keys are the hierarchical names.
  Model<T> eval_model(5);
  load_checkpoint(dir / "ckpt.npz", eval_model.named());
  const Npz raw = load_npz(dir / "ckpt.npz");
  CHECK(eval_model.emb.value() == raw.at("embed.weight").template get<T>());
  CHECK(raw.contains("encoder.layers.0.w"));
  CHECK(raw.contains("optim/exp_avg/embed.weight"));  // optimizer state keyed by parameter name
  CHECK(raw.contains("optim/step/encoder.layers.0.b"));
  CHECK(raw.at("embed.weight").dtype() == (sizeof(T) == 4 ? DType::Float32 : DType::Float64));
}

TEST_CASE("float checkpoints load into double models and back") {
  TempDir dir;
  Model<float> f(3);
  save_checkpoint(dir / "f.npz", f.named());
  Model<double> d(4);
  load_checkpoint(dir / "f.npz", d.named());
  CHECK(d.w.value()(1, 2) == double(f.w.value()(1, 2)));
}

TEST_CASE("a mismatched checkpoint lists missing, unexpected and reshaped names, and changes nothing") {
  TempDir dir;
  Model<double> m(1);
  save_checkpoint(dir / "ckpt.npz", m.named());

  Model<double> other(2, /*rows=*/6);  // w is (6,4) instead of (3,4)
  const Array<double> w_before = other.w.value(), b_before = other.b.value();
  NamedParameters<double> named = {{"encoder.layers.0.w", other.w},
                                   {"encoder.layers.0.bias", other.b},  // renamed
                                   {"head.weight", other.emb}};          // new
  const std::string msg = error_of<ShapeError>([&] { load_checkpoint(dir / "ckpt.npz", named); });
  CHECK(msg.find("load_checkpoint: '" + (dir / "ckpt.npz") + "' does not match the model") == 0);
  CHECK(msg.find("missing (2):\n    encoder.layers.0.bias\n    head.weight") != std::string::npos);
  CHECK(msg.find("unexpected (2):\n    encoder.layers.0.b\n    embed.weight") != std::string::npos);
  CHECK(msg.find("shape mismatch (1):\n    encoder.layers.0.w: expected (6,4), found (3,4)") != std::string::npos);
  CHECK(other.w.value() == w_before);
  CHECK(other.b.value() == b_before);

  // Asking for optimizer state that the file does not hold.
  Adam<double> opt(m.params(), 0.1);
  CHECK(error_of<ShapeError>([&] { load_checkpoint(dir / "ckpt.npz", m.named(), &opt); })
            .find("no optimizer state") != std::string::npos);
  // State of another optimizer kind: rejected before any parameter changes.
  SGD<double> sgd(m.params(), 0.1, 0.9);
  m.fake_gradients(1.0);
  sgd.step();
  save_checkpoint(dir / "sgd.npz", m.named(), &sgd);
  Model<double> target(8);
  Adam<double> adam(target.params(), 0.1);
  const Array<double> before = target.w.value();
  CHECK(error_of<ShapeError>([&] { load_checkpoint(dir / "sgd.npz", target.named(), &adam); })
            .find("unexpected 'momentum_buffer/encoder.layers.0.w' (Adam keeps exp_avg, exp_avg_sq, step "
                  "per parameter)") != std::string::npos);
  CHECK(target.w.value() == before);
  CHECK_THROWS_AS(save_checkpoint<double>(dir / "x.npz", {{"a", m.w}, {"a", m.b}}), ShapeError);
  CHECK_THROWS_AS(save_checkpoint<double>(dir / "x.npz", {{"optim/a", m.w}}), ShapeError);
}

TEST_CASE("an interrupted save leaves the previous checkpoint intact and no temporary behind") {
  TempDir dir;
  Model<double> m(1);
  save_checkpoint(dir / "ckpt.npz", m.named());
  const std::string previous = slurp(dir / "ckpt.npz");

  // The next save needs more than 200 bytes: the write fails part-way, like a full disk.
  Model<double> changed(2);
  Adam<double> opt(changed.params(), 0.1);
  changed.fake_gradients(1.0);
  opt.step();
  std::string msg;
  {
    FileSizeLimit limit(200);
    msg = error_of<IoError>([&] { save_checkpoint(dir / "ckpt.npz", changed.named(), &opt); });
  }
  CHECK(msg.find("save_npz: cannot write '" + (dir / "ckpt.npz") + "': write: File too large") == 0);
  CHECK(msg.find("the previous file, if any, is unchanged") != std::string::npos);
  CHECK(slurp(dir / "ckpt.npz") == previous);
  CHECK(list_dir(dir.path) == std::vector<std::string>{"ckpt.npz"});
  Model<double> restored(3);
  load_checkpoint(dir / "ckpt.npz", restored.named());
  CHECK(restored.w.value() == m.w.value());

  // Without the limit the same save succeeds and replaces the file.
  save_checkpoint(dir / "ckpt.npz", changed.named(), &opt);
  CHECK(slurp(dir / "ckpt.npz") != previous);
  CHECK(list_dir(dir.path) == std::vector<std::string>{"ckpt.npz"});
}

TEST_CASE("a corrupt or truncated checkpoint gives a clear error naming the file") {
  TempDir dir;
  Model<double> m(1);
  save_checkpoint(dir / "ckpt.npz", m.named());
  const std::string good = slurp(dir / "ckpt.npz");

  std::ofstream(dir / "half.npz", std::ios::binary) << good.substr(0, good.size() / 2);
  Model<double> target(2);
  const Array<double> before = target.w.value();
  std::string msg = error_of<IoError>([&] { load_checkpoint(dir / "half.npz", target.named()); });
  CHECK(msg.find("load_npz: '" + (dir / "half.npz") + "'") == 0);
  CHECK(msg.find("no end-of-central-directory record") != std::string::npos);

  std::string flipped = good;
  // 80 bytes past the first local header's name: inside the first member's .npy bytes.
  flipped[good.find("encoder.layers.0.w.npy") + 22 + 80] ^= 0x10;
  std::ofstream(dir / "flip.npz", std::ios::binary) << flipped;
  msg = error_of<IoError>([&] { load_checkpoint(dir / "flip.npz", target.named()); });
  CHECK(msg.find("flip.npz") != std::string::npos);
  CHECK(msg.find("CRC-32 mismatch") != std::string::npos);
  CHECK(target.w.value() == before);
}

TEST_CASE("a folder or a device given as the checkpoint path is refused by name (issue 19)") {
  TempDir dir;
  Model<double> m(1);
  REQUIRE(::mkdir((dir / "ckpt.npz").c_str(), 0755) == 0);
  CHECK(error_of<IoError>([&] { load_checkpoint(dir / "ckpt.npz", m.named()); }) ==
        "load_npz: cannot read '" + (dir / "ckpt.npz") + "': it is a directory");
  CHECK(error_of<IoError>([&] { load_checkpoint("/dev/zero", m.named()); }) ==
        "load_npz: cannot read '/dev/zero': not a regular file (a character device)");
}

TEST_CASE("a checkpoint loads from arrays in memory, named in its messages") {
  TempDir dir;
  Model<double> m(1), fresh(2);
  Adam<double> opt(m.params(), 0.01), opt2(fresh.params(), 0.5);
  save_checkpoint(dir / "ckpt.npz", m.named(), &opt);
  load_checkpoint(npz_decode(slurp(dir / "ckpt.npz"), "bytes"), "bytes", fresh.named(), &opt2);
  CHECK(fresh.w.value() == m.w.value());
  CHECK(opt2.lr() == 0.01);
  CHECK(starts_with(error_of<ShapeError>([&] { load_checkpoint(Npz(), "bytes", fresh.named()); }),
                    "load_checkpoint: 'bytes' does not match the model"));
}

TEST_CASE("a bad optimizer state or a bare 'optim/' key is an error naming the file (found by fuzzing)") {
  TempDir dir;
  Model<double> m(1);
  Adam<double> opt(m.params(), 0.1);
  m.fake_gradients(1.0);
  opt.step();
  save_checkpoint(dir / "ckpt.npz", m.named(), &opt);
  const Npz good = load_npz(dir / "ckpt.npz");

  // fuzz/checkpoint.cpp's first finding: one buffer renamed to a parameter the model lacks. The
  // optimizer's message named only "Adam", not the file.
  Npz renamed;
  for (const auto& [key, array] : good.entries())
    renamed.add(key == "optim/exp_avg/encoder.layers.0.b" ? "optim/exp_avg/head.b" : key, array);
  save_npz(dir / "renamed.npz", renamed);
  Adam<double> target(m.params(), 0.5);
  const std::string msg = error_of<ShapeError>([&] { load_checkpoint(dir / "renamed.npz", m.named(), &target); });
  CHECK(starts_with(msg, "load_checkpoint: '" + (dir / "renamed.npz") + "': Adam: cannot load optimizer state"));
  CHECK(contains(msg, "unexpected 'exp_avg/head.b': no parameter named 'head.b'"));
  CHECK(contains(msg, "missing 'exp_avg/encoder.layers.0.b'"));
  CHECK(target.lr() == 0.5);  // unchanged

  // "optim/" with nothing after it: was IoError "Npz: empty key", naming no file.
  Npz bare = good;
  bare.add("optim/", NpyArray(Array<double>(1.0)));
  save_npz(dir / "bare.npz", bare);
  CHECK(error_of<ShapeError>([&] { load_checkpoint(dir / "bare.npz", m.named()); }) ==
        "load_checkpoint: '" + (dir / "bare.npz") + "' does not match the model\n  unexpected (1):\n    optim/");
}

TEST_CASE("optimizer state is keyed by parameter name: another order, errors by name, old files") {
  TempDir dir;
  Model<double> m(1);
  Adam<double> opt(m.params(), 0.01);
  m.fake_gradients(1.0);
  opt.step();
  save_checkpoint(dir / "ckpt.npz", m.named(), &opt);

  // An optimizer over the same parameters in another order gets each one's own moments.
  Model<double> fresh(2);
  Adam<double> reordered({fresh.emb, fresh.w, fresh.b}, 0.5);
  load_checkpoint(dir / "ckpt.npz", fresh.named(), &reordered);
  const Npz mine = opt.state({"w", "b", "emb"}), theirs = reordered.state({"emb", "w", "b"});
  for (const char* n : {"w", "b", "emb"})
    CHECK(mine.at(std::string("exp_avg_sq/") + n).get<double>() ==
          theirs.at(std::string("exp_avg_sq/") + n).get<double>());

  // A mis-shaped moment names its parameter and the file.
  Npz file = load_npz(dir / "ckpt.npz"), bad;
  for (const auto& [key, array] : file.entries())
    bad.add(key, key == "optim/exp_avg/embed.weight" ? NpyArray(Array<double>{1.0}) : array);
  save_npz(dir / "bad.npz", bad);
  Adam<double> target(fresh.params(), 0.5);
  std::string msg = error_of<ShapeError>([&] { load_checkpoint(dir / "bad.npz", fresh.named(), &target); });
  CHECK(starts_with(msg, "load_checkpoint: '" + (dir / "bad.npz") + "': Adam: cannot load optimizer state"));
  CHECK(contains(msg, "'exp_avg/embed.weight' has shape (1), parameter 'embed.weight' has (5,2)"));

  // An optimizer over a tensor the model does not name cannot be saved or loaded by name.
  Tensor<double> stray(Array<double>{1.0, 2.0}, true);
  Adam<double> outside({m.w, stray}, 0.1);
  CHECK(error_of<ShapeError>([&] { save_checkpoint(dir / "x.npz", m.named(), &outside); }) ==
        "save_checkpoint: Adam's parameter 1 (2) is not among the named parameters; its state is "
        "saved under the parameter's name, so build the optimizer over the model's parameters");
  CHECK(starts_with(error_of<ShapeError>([&] { load_checkpoint(dir / "ckpt.npz", m.named(), &outside); }),
                    "load_checkpoint: Adam's parameter 1 (2)"));

  // A checkpoint written before names: "optim/exp_avg.2" for the third parameter. The weights
  // load; the state is refused with the way forward.
  Npz old;
  for (const auto& [key, array] : file.entries()) {
    const std::size_t slash = key.rfind('/');
    if (key == "optim/lr" || key == "optim/step" || !starts_with(key, "optim/")) old.add(key, array);
    else if (contains(key, "/embed.weight")) old.add(key.substr(0, slash) + ".2", array);
  }
  save_npz(dir / "old.npz", old);
  Model<double> weights_only(3);
  load_checkpoint(dir / "old.npz", weights_only.named());
  CHECK(weights_only.emb.value() == m.emb.value());
  Adam<double> resumed(weights_only.params(), 0.5);
  msg = error_of<ShapeError>([&] { load_checkpoint(dir / "old.npz", weights_only.named(), &resumed); });
  INFO(msg);
  CHECK(contains(msg, "'exp_avg.2' and 2 more are keyed by position"));
  CHECK(contains(msg, "load the weights alone (load_checkpoint without an optimizer) and let the "
                      "optimizer start afresh"));
  CHECK(resumed.lr() == 0.5);
}
