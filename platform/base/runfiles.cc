#include "platform/base/runfiles.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "tools/cpp/runfiles/runfiles.h"

namespace fathom {
namespace {

using bazel::tools::cpp::runfiles::Runfiles;

// Found once; null when this binary has no runfiles.
const Runfiles* Tree() {
  static const Runfiles* const tree = []() -> const Runfiles* {
    std::string error;
    if (std::getenv("TEST_SRCDIR") != nullptr) {
      if (Runfiles* test = Runfiles::CreateForTest(&error); test != nullptr) return test;
    }
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    return Runfiles::Create(n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string(), &error);
  }();
  return tree;
}

}  // namespace

std::string RunfilePath(const std::string& workspace_relative) {
  const Runfiles* tree = Tree();
  if (tree == nullptr) return workspace_relative;
  const std::string path = tree->Rlocation("fathom/" + workspace_relative);
  return path.empty() ? workspace_relative : path;
}

}  // namespace fathom
