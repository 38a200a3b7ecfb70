#include "lessons/story/progress.hpp"

#include <algorithm>
#include <cmath>
#include <unistd.h>

namespace attnlab::lessons {

namespace {
std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long s = std::lround(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02ld:%02ld", s / 60, s % 60);
  return buf;
}
}  // namespace

Progress::Progress(std::size_t total, std::string label, std::FILE* out)
    : Progress(total, std::move(label), out, ::isatty(::fileno(out))) {}

Progress::Progress(std::size_t total, std::string label, std::FILE* out, bool terminal)
    : total_(std::max<std::size_t>(total, 1)),
      label_(std::move(label)),
      out_(out),
      terminal_(terminal),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  next_report_ = std::max<std::size_t>(total_ / 10, 1);
}

void Progress::step(double loss, const std::string& note) {
  ++done_;
  note_ = note;
  // Exponential moving average, started at the first value so it does not creep up from 0.
  running_ = done_ == 1 ? loss : 0.95 * running_ + 0.05 * loss;
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    if (now - last_draw_ > std::chrono::milliseconds(100) || done_ == total_) {
      last_draw_ = now;
      draw(false);
    }
  } else if (done_ >= next_report_ || done_ == total_) {
    next_report_ += std::max<std::size_t>(total_ / 10, 1);
    draw(false);
  }
}

void Progress::draw(bool final) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double frac = std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
  const double eta = done_ ? elapsed / static_cast<double>(done_) * static_cast<double>(total_ - std::min(done_, total_)) : NAN;
  if (terminal_) {
    const int width = 30;
    const int filled = static_cast<int>(frac * width);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar += std::string(static_cast<std::size_t>(width - filled), '.');
    std::fprintf(out_, "\r  %s%s%s [%s] %3.0f%%  %zu/%zu  loss %.4f  %s elapsed, ETA %s   ", label_.c_str(),
                 note_.empty() ? "" : ", ", note_.c_str(), bar.c_str(), frac * 100, done_, total_, running_,
                 clock_text(elapsed).c_str(), final ? "00:00" : clock_text(eta).c_str());
  } else {
    std::fprintf(out_, "  %s%s%s %3.0f%%  %zu/%zu  loss %.4f  %s elapsed, ETA %s\n", label_.c_str(),
                 note_.empty() ? "" : ", ", note_.c_str(), frac * 100, done_, total_, running_,
                 clock_text(elapsed).c_str(), clock_text(eta).c_str());
  }
  std::fflush(out_);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (terminal_) {
    draw(true);
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

Progress::~Progress() { finish(); }

}  // namespace attnlab::lessons
