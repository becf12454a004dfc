// libFuzzer entry point; FUZZ_KIND (session, npy, csv) is set per executable.
#include "harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  al::fuzz::run_one(al::fuzz::Kind::FUZZ_KIND, data, size, FUZZ_SESSION_FILES_DIR);
  return 0;
}
