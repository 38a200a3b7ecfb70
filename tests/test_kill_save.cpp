// A process killed while it saves checkpoints, again and again at random moments: the file on disk
// always loads, and as one whole version (never half old, half new), and the temporaries of the
// killed writers do not pile up (io/files.hpp: AtomicFile).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <thread>

#include "core/tensor.hpp"
#include "nn/checkpoint.hpp"
#include "tests/helpers.hpp"
#include "tests/kill_save_model.hpp"

using namespace attnlab;
using attnlab::testing::list_dir;
using attnlab::testing::TempDir;

namespace {

nn::NamedParameters<float> model(float version) { return attnlab::testing::kill_save_model(version); }

// The version the checkpoint holds: every entry of both tensors the same number, else -1.
float version_on_disk(const std::string& path) {
  const nn::NamedParameters<float> m = model(0.0f);
  nn::load_checkpoint(path, m);
  const float v = m[0].second.value()(0, 0);
  for (const auto& [name, t] : m)
    if (xt::any(xt::not_equal(t.value(), v))) return -1.0f;
  return v;
}

std::size_t temporaries(const std::string& dir) {
  const std::vector<std::string> names = list_dir(dir);
  return std::count_if(names.begin(), names.end(), [](const std::string& n) { return n[0] == '.'; });
}

}  // namespace

TEST_CASE("checkpoints survive a writer killed at random moments") {
  TempDir d;
  const std::string path = d / "ckpt.npz";
  nn::save_checkpoint(path, model(1.0f));
  const std::string writer = std::string(ATTNLAB_BIN_DIR) + "/kill_save_writer";
  const auto start_writer = [&](const std::string& first) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // the writer (tests/kill_save_writer.cpp): FIRST, then the other, until killed
      ::execl(writer.c_str(), writer.c_str(), path.c_str(), first.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return child;
  };
  const auto stop = [](pid_t child) {
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  };

  // How long a writer takes to start and finish its first save on this machine (a sanitizer build
  // is several times slower): the moments to kill at are drawn around it. A save replaces the file,
  // so its inode changes.
  const auto inode = [&] {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : ino_t(0);
  };
  const ino_t before_calibration = inode();
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t calibration = start_writer("2");
  while (inode() == before_calibration && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  const long first_save_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  stop(calibration);
  float before = version_on_disk(path);
  REQUIRE((before == 1.0f || before == 2.0f));

  // Moments drawn log-uniformly from a tenth of the first save's time to four times it. Under load
  // the calibration can be far off the saves that follow, so after the 25 rounds the test goes on
  // killing (up to 400 rounds) until some kill has landed in the middle of a save and some save
  // has completed: both outcomes must be seen, and seen to be safe.
  std::mt19937 rng(2026);
  std::uniform_real_distribution<double> log_wait(std::log(first_save_us / 10.0 + 1.0), std::log(first_save_us * 4.0 + 2.0));
  int kills = 0, mid_write = 0, changed = 0, rounds = 0;
  for (int round = 0; round < 400 && (round < 25 || mid_write == 0 || changed == 0); ++round, ++rounds) {
    const pid_t child = start_writer(before == 1.0f ? "2" : "1");  // the other version first
    std::this_thread::sleep_for(std::chrono::microseconds(long(std::exp(log_wait(rng)))));
    kills += stop(child);

    const float v = version_on_disk(path);
    CAPTURE(round);
    CHECK((v == 1.0f || v == 2.0f));
    changed += v != before;
    if (v == 1.0f || v == 2.0f) before = v;
    // At most the killed writer's own temporary is left; the next writer removes it.
    const std::size_t left = temporaries(d.path);
    CHECK(left <= 1);
    mid_write += left == 1;
  }
  MESSAGE("first save after ", first_save_us / 1000.0, " ms; killed ", kills, " writers in ", rounds, " rounds, ",
          mid_write, " in the middle of a save; the version on disk changed ", changed, " times");
  CHECK(kills == rounds);
  // The test did catch writers in the middle of a save, and after some saves.
  CHECK(mid_write > 0);
  CHECK(changed > 0);
  nn::save_checkpoint(path, model(3.0f));  // a writer that finishes cleans up after the killed ones
  CHECK(version_on_disk(path) == 3.0f);
  CHECK(temporaries(d.path) == 0);
  CHECK(list_dir(d.path) == std::vector<std::string>{"ckpt.npz"});
}
