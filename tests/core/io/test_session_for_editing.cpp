// load_session_file_for_editing: the app opens a session whose sizes do not fit
// together (to fix it in the editor), but nothing else that is wrong.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/session_io.hpp"

using namespace al;
namespace fs = std::filesystem;

namespace {

struct Folder {
  std::string path;
  Folder() {
    std::string pattern = (fs::temp_directory_path() / "al-editing-test-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~Folder() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path + "/" + name;
    std::ofstream(file) << text;
    return file;
  }
};

// d_model 4 with `heads` heads; identity weights.
std::string session_with_heads(int heads) {
  const std::string eye = "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]";
  return R"({"format": "attention-lab/session", "version": 1,
  "config": {"d_model": 4, "num_heads": )" + std::to_string(heads) + R"(},
  "x": [[1, 2, 3, 4], [5, 6, 7, 8]],
  "weights": {"w_q": )" + eye + R"(, "w_k": )" + eye + R"(, "w_v": )" + eye + R"(, "w_o": )" + eye + "}}";
}

}  // namespace

TEST_CASE("for editing: 3 heads for d_model 4 loads, with the heads error beside it") {
  Folder folder;
  const std::string file = folder.write("heads.json", session_with_heads(3));
  REQUIRE_FALSE(load_session_file(file).ok());  // the strict loader refuses it

  auto loaded = load_session_file_for_editing(file);
  REQUIRE(loaded.ok());
  CHECK(loaded->session.config.num_heads == 3);
  CHECK(loaded->session.config.d_model == 4);
  REQUIRE(loaded->session.x);
  CHECK(loaded->session.x->data[5] == 6.0f);  // row 1, column 1: the file's values
  REQUIRE(loaded->unfit.has_value());
  CHECK(loaded->unfit->code == ErrorCode::HeadsDoNotDivide);
  CHECK(loaded->unfit->message.find("heads.json") != std::string::npos);
}

TEST_CASE("for editing: a session that fits has no error") {
  Folder folder;
  auto loaded = load_session_file_for_editing(folder.write("ok.json", session_with_heads(2)));
  REQUIRE(loaded.ok());
  CHECK_FALSE(loaded->unfit.has_value());
  CHECK(loaded->session.config.num_heads == 2);
}

TEST_CASE("for editing: anything else wrong is still an error") {
  Folder folder;
  auto broken = load_session_file_for_editing(folder.write("broken.json", "{\"format\": "));
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().code == ErrorCode::ParseError);
  auto missing = load_session_file_for_editing(folder.path + "/none.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::IoError);
}
