#include "tests/util/fresh_dir.h"

#include <cstdlib>
#include <filesystem>

namespace fathom::testing {

std::string FreshTestDir(const std::string& suite, const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + suite + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace fathom::testing
