#pragma once
// One fuzz input through one loader, plus the properties every accepted input
// must have. Shared by the libFuzzer targets (fuzz_target.cpp, clang) and the
// corpus/regression replay run by ctest (replay.cpp, any compiler). A broken
// property aborts, which both the fuzzer and ctest report as a failure.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace al::fuzz {

enum class Kind { Session, Npy, Csv };

// "session", "npy", "csv" (the corpus folder names) -> Kind.
std::optional<Kind> kind_from_name(const std::string& name);

// `session_files_dir` is where {"npy": ...} / {"csv": ...} references in a
// fuzzed session resolve (the loader refuses paths that leave it).
void run_one(Kind kind, const std::uint8_t* data, std::size_t size, const std::string& session_files_dir);

}  // namespace al::fuzz
