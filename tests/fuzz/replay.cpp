// Replays every file of the given folders through the fuzz harness: each folder
// holds session/, npy/ and csv/ subfolders. Run by ctest over the seed corpus and
// over regressions/ (inputs that once crashed a loader), with any compiler.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "harness.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_replay <folder with session/ npy/ csv/>...\n");
    return 2;
  }
  int replayed = 0;
  for (int a = 1; a < argc; ++a) {
    for (const char* kind_name : {"session", "npy", "csv"}) {
      const fs::path dir = fs::path(argv[a]) / kind_name;
      if (!fs::is_directory(dir)) continue;
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(dir))
        if (entry.is_regular_file()) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const fs::path& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::printf("%s\n", file.c_str());
        std::fflush(stdout);  // so a crash names the file it happened on
        al::fuzz::run_one(*al::fuzz::kind_from_name(kind_name), reinterpret_cast<const std::uint8_t*>(bytes.data()),
                          bytes.size(), FUZZ_SESSION_FILES_DIR);
        ++replayed;
      }
    }
  }
  std::printf("replayed %d inputs, every property held\n", replayed);
  return replayed > 0 ? 0 : 1;  // an empty corpus means a wrong path, not a pass
}
