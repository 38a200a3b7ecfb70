// A folder that is complete or absent: what AtomicFile is for a file, for a lesson's output.
//
//   1. files go to a hidden staging folder beside the target, .<name>.partial-<pid>;
//   2. publish() puts the staging folder in the target's place with one atomic exchange of the
//      two names (renameat2 RENAME_EXCHANGE), then removes the previous folder, now under the
//      staging name. A reader sees the old complete folder or the new one, never a mix;
//   3. a StagedFolder destroyed before publish() (the run failed) removes its staging folder, and
//      the staging folders of killed runs are removed by the next run with the same target.
//
// The target is replaced whole, so a folder that holds anything else is never taken: an existing
// target must be empty or hold `marker` (a lesson's metrics.json), the sign of an earlier output.
#pragma once

#include <string>

namespace attnlab {

class StagedFolder {
 public:
  // IoError naming `who` and the path when the target is a file, a folder that is neither empty
  // nor holds `marker`, or when the staging folder cannot be made.
  StagedFolder(std::string target, std::string marker, std::string who = "StagedFolder");
  ~StagedFolder();  // removes the staging folder unless published
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  const std::string& target() const { return target_; }
  const std::string& staging() const { return staging_; }  // where files go until publish()
  void publish();

 private:
  std::string target_, staging_, who_;
  bool published_ = false;
};

}  // namespace attnlab
