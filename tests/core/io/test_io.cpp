// .npy and CSV reading/writing, and the atomic file writer.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/matrix_io.hpp"

namespace fs = std::filesystem;
using namespace al;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A .npy file written byte by byte as the format specification describes it,
// independently of npy_bytes().
std::string handmade_npy(int major, const std::string& dict, const std::string& data) {
  std::string header = dict;
  const size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const size_t n = header.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((n >> 16) & 0xff);
    out += static_cast<char>((n >> 24) & 0xff);
  }
  return out + header + data;
}

std::string le_bytes_f64(std::initializer_list<double> values) {
  std::string out;
  for (double v : values) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    for (int b = 0; b < 8; ++b) out += static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

std::string le_bytes_f32(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    for (int b = 0; b < 4; ++b) out += static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "al-io-test-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("npy: float32 write then read gives the same tensor, for 1-D to 3-D shapes") {
  for (const std::vector<Index>& shape : {std::vector<Index>{5}, {2, 3}, {2, 3, 4}}) {
    Tensor t(shape);
    for (Index i = 0; i < t.size(); ++i) t.data[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i) - 1.0f;
    t.data[0] = std::numeric_limits<float>::quiet_NaN();
    t.data[1] = -std::numeric_limits<float>::infinity();
    const std::string bytes = npy_bytes(t);
    // numpy's layout: magic, version 1.0, header ending in '\n' at a 64-byte boundary.
    CHECK(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
    const size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    CHECK((10 + header_len) % 64 == 0);
    CHECK(bytes[10 + header_len - 1] == '\n');
    CHECK(bytes.size() == 10 + header_len + 4 * static_cast<size_t>(t.size()));

    auto back = parse_npy(bytes, "t.npy");
    REQUIRE(back.ok());
    CHECK(back->shape == shape);
    CHECK(std::isnan(back->data[0]));
    CHECK(back->data[1] == -std::numeric_limits<float>::infinity());
    for (size_t i = 2; i < t.data.size(); ++i) CHECK(back->data[i] == t.data[i]);
  }
  // The one-element tuple needs its comma: (5,) not (5).
  CHECK(contains(npy_bytes(Tensor({5})), "'shape': (5,)"));
}

TEST_CASE("npy: hand-made float64 (v1.0) and float32 (v2.0, v3.0) files are read") {
  auto f8 = parse_npy(handmade_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
                                   le_bytes_f64({1.5, -2.0, 0.1, -INFINITY})),
                      "f8.npy");
  REQUIRE(f8.ok());
  CHECK(f8->shape == std::vector<Index>{2, 2});
  CHECK(f8->data[0] == 1.5f);
  CHECK(f8->data[1] == -2.0f);
  CHECK(f8->data[2] == 0.1f);  // rounded to the nearest float
  CHECK(f8->data[3] == -INFINITY);
  // A finite value float32 cannot hold is refused, not turned into infinity.
  auto huge = parse_npy(handmade_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
                                     le_bytes_f64({1.5, -2.0, 0.1, 1e300})),
                        "f8.npy");
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().message == "f8.npy: value [1][1] is 1e+300, too large for a float32 (at most about 3.4e38)");

  for (int major : {2, 3}) {
    auto f4 = parse_npy(handmade_npy(major, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}",
                                     le_bytes_f32({3.0f, 4.0f, -0.5f})),
                        "v2.npy");
    REQUIRE(f4.ok());
    CHECK(f4->shape == std::vector<Index>{3});
    CHECK(f4->data == std::vector<float>{3.0f, 4.0f, -0.5f});
  }
}

TEST_CASE("npy: every unsupported or broken file gets a clear error naming the file") {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  const std::string four_floats = le_bytes_f32({1, 2, 3, 4});
  struct Case {
    const char* what;
    std::string bytes;
    ErrorCode code;
    const char* message_part;
  } cases[] = {
      {"big-endian", handmade_npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", four_floats),
       ErrorCode::UnsupportedFormat, "big-endian"},
      {"fortran", handmade_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four_floats),
       ErrorCode::UnsupportedFormat, "Fortran"},
      {"int64", handmade_npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", four_floats),
       ErrorCode::UnsupportedFormat, "dtype '<i8' is not supported"},
      {"structured", handmade_npy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", ""),
       ErrorCode::UnsupportedFormat, "structured"},
      {"truncated data", handmade_npy(1, ok_dict, four_floats.substr(0, 10)), ErrorCode::ParseError, "truncated"},
      {"extra data", handmade_npy(1, ok_dict, four_floats + "xxxx"), ErrorCode::ParseError, "bytes after the data"},
      {"truncated header", handmade_npy(1, ok_dict, four_floats).substr(0, 30), ErrorCode::ParseError, "truncated"},
      {"bad magic", "PK\x03\x04 this is a zip file", ErrorCode::ParseError, "not a .npy file"},
      {"empty", "", ErrorCode::ParseError, "not a .npy file"},
      {"version 4", std::string("\x93NUMPY\x04\x00\x10\x00", 10) + std::string(16, ' '), ErrorCode::UnsupportedFormat, "version 4.0"},
      {"absurd shape",
       handmade_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }",
                    four_floats),
       ErrorCode::ParseError, "truncated"},
      {"negative shape", handmade_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2), }", four_floats),
       ErrorCode::ParseError, "shape"},
      {"scalar", handmade_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", le_bytes_f32({1})),
       ErrorCode::UnsupportedFormat, "0-d"},
      {"garbage header", handmade_npy(1, "not a dict at all", four_floats), ErrorCode::ParseError, "header"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    auto r = parse_npy(c.bytes, "weights.npy");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == c.code);
    CHECK(contains(r.error().message, "weights.npy"));
    CHECK(contains(r.error().message, c.message_part));
  }
}

TEST_CASE("npy: a zero-sized array is read as empty, not as an error in the reader") {
  auto r = parse_npy(handmade_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", ""), "e.npy");
  REQUIRE(r.ok());
  CHECK(r->shape == std::vector<Index>{0, 3});
  CHECK(r->empty());
}

TEST_CASE("csv: numbers, NaN and infinities, comments, CRLF and quotes") {
  auto r = parse_csv("# numpy.savetxt header\n1, 2.5 ,-3e2\r\nNaN,inf,-inf\n\n\"4\",+5,0\n", "m.csv");
  REQUIRE(r.ok());
  CHECK(r->shape == std::vector<Index>{3, 3});
  CHECK(r->data[0] == 1.0f);
  CHECK(r->data[1] == 2.5f);
  CHECK(r->data[2] == -300.0f);
  CHECK(std::isnan(r->data[3]));
  CHECK(r->data[4] == std::numeric_limits<float>::infinity());
  CHECK(r->data[5] == -std::numeric_limits<float>::infinity());
  CHECK(r->data[6] == 4.0f);
  CHECK(r->data[7] == 5.0f);
}

TEST_CASE("csv: ragged rows, non-numbers and empty files are errors naming the line") {
  auto ragged = parse_csv("1,2,3\n4,5,6\n7,8\n", "m.csv");
  REQUIRE_FALSE(ragged.ok());
  CHECK(ragged.error().code == ErrorCode::ParseError);
  CHECK(contains(ragged.error().message, "m.csv: line 3 has 2 values but line 1 has 3"));

  auto word = parse_csv("1,2\n3,abc\n", "m.csv");
  REQUIRE_FALSE(word.ok());
  CHECK(contains(word.error().message, "line 2, value 2 is 'abc'"));

  auto empty_cell = parse_csv("1,,2\n", "m.csv");
  REQUIRE_FALSE(empty_cell.ok());
  CHECK(contains(empty_cell.error().message, "line 1, value 2"));

  auto nothing = parse_csv("\n# only a comment\n", "m.csv");
  REQUIRE_FALSE(nothing.ok());
  CHECK(contains(nothing.error().message, "no numbers"));
}

TEST_CASE("csv: csv_text then parse_csv round-trips exactly, leading dimensions becoming rows") {
  Tensor t({2, 2, 3});
  for (Index i = 0; i < t.size(); ++i) t.data[static_cast<size_t>(i)] = 1.0f / static_cast<float>(i + 3);
  t.data[4] = std::numeric_limits<float>::quiet_NaN();
  t.data[5] = -std::numeric_limits<float>::infinity();
  const std::string text = csv_text(t);
  auto back = parse_csv(text, "t.csv");
  REQUIRE(back.ok());
  CHECK(back->shape == std::vector<Index>{4, 3});
  for (size_t i = 0; i < t.data.size(); ++i) {
    if (std::isnan(t.data[i])) CHECK(std::isnan(back->data[i]));
    else CHECK(back->data[i] == t.data[i]);
  }
  CHECK(csv_text(Tensor({1, 2}, std::vector<float>{0.1f, -2.0f})) == "0.1,-2\n");
}

TEST_CASE("write_file_atomic: writes, replaces, leaves no temporary file") {
  TempDir dir;
  const std::string path = (dir.path / "session.json").string();
  REQUIRE_FALSE(write_file_atomic(path, "first version, rather long").has_value());
  REQUIRE_FALSE(write_file_atomic(path, "second").has_value());
  auto text = read_file(path);
  REQUIRE(text.ok());
  CHECK(*text == "second");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);
  CHECK((fs::status(path).permissions() & fs::perms::owner_read) != fs::perms::none);
}

TEST_CASE("write_file_atomic: a link is saved through, and stays a link") {
  TempDir dir;
  fs::create_directory(dir.path / "synced");
  const fs::path real = dir.path / "synced" / "session.json", link = dir.path / "session.json";
  REQUIRE_FALSE(write_file_atomic(real.string(), "first").has_value());
  fs::create_symlink(fs::path("synced") / "session.json", link);  // relative, as ln -s makes them
  REQUIRE_FALSE(write_file_atomic(link.string(), "second").has_value());
  CHECK(fs::is_symlink(link));
  auto text = read_file(real.string());
  REQUIRE(text.ok());
  CHECK(*text == "second");
  int entries = 0;  // no temporary file left beside the link or the file
  for (const auto& e : fs::recursive_directory_iterator(dir.path))
    entries += e.symlink_status().type() == fs::file_type::regular ? 1 : 0;
  CHECK(entries == 1);
}

TEST_CASE("write_file_atomic: a read-only file is refused and left as it was, even for root") {
  TempDir dir;
  const std::string path = (dir.path / "kept.json").string();
  REQUIRE_FALSE(write_file_atomic(path, "the learner's version").has_value());
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  auto e = write_file_atomic(path, "an overwrite");
  REQUIRE(e.has_value());
  CHECK(e->code == ErrorCode::IoError);
  CHECK(contains(e->message, path));
  CHECK(contains(e->message, "read-only"));
  auto text = read_file(path);
  REQUIRE(text.ok());
  CHECK(*text == "the learner's version");
  CHECK((fs::status(path).permissions() & fs::perms::owner_write) == fs::perms::none);
  int entries = 0;  // no temporary file left
  for (const auto& entry : fs::directory_iterator(dir.path)) entries += entry.is_regular_file() ? 1 : 0;
  CHECK(entries == 1);
  // Writable again, it saves as before.
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  REQUIRE_FALSE(write_file_atomic(path, "an overwrite").has_value());
  CHECK(*read_file(path) == "an overwrite");
}

TEST_CASE("write_file_atomic: an impossible location is an IoError naming the path, not a crash") {
  TempDir dir;
  const std::string in_missing_folder = (dir.path / "no" / "such" / "folder" / "s.json").string();
  auto e = write_file_atomic(in_missing_folder, "x");
  REQUIRE(e.has_value());
  CHECK(e->code == ErrorCode::IoError);
  CHECK(contains(e->message, in_missing_folder));
  CHECK(contains(e->message, "does not exist"));

  // /proc refuses new files even for root: the unwritable-folder case.
  auto proc = write_file_atomic("/proc/attention-lab-test.json", "x");
  REQUIRE(proc.has_value());
  CHECK(proc->code == ErrorCode::IoError);
  CHECK(contains(proc->message, "cannot save '/proc/attention-lab-test.json'"));
  CHECK(contains(proc->message, "unchanged"));

  // A folder where the file should be: the rename fails and the temp file is removed.
  fs::create_directory(dir.path / "taken");
  fs::create_directory(dir.path / "taken" / "inner");
  auto onto_folder = write_file_atomic((dir.path / "taken").string(), "x");
  REQUIRE(onto_folder.has_value());
  CHECK(onto_folder->code == ErrorCode::IoError);
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    (void)entry;
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("read_file / read_npy: missing files and folders are IoErrors naming the path") {
  TempDir dir;
  auto missing = read_npy((dir.path / "absent.npy").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::IoError);
  CHECK(contains(missing.error().message, "absent.npy"));
  auto folder = read_file(dir.path.string());
  REQUIRE_FALSE(folder.ok());
  CHECK(contains(folder.error().message, "folder"));

  // And a real file through the whole path: write_file_atomic + read_npy.
  Tensor t({2, 2}, std::vector<float>{1, 2, 3, 4});
  const std::string path = (dir.path / "m.npy").string();
  REQUIRE_FALSE(write_file_atomic(path, npy_bytes(t)).has_value());
  auto back = read_npy(path);
  REQUIRE(back.ok());
  CHECK(*back == t);
}
