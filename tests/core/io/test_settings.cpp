// Settings: XDG paths, round trip, recent files, malformed files never crash.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "io/settings.hpp"
#include "user_dirs_fixture.hpp"

using namespace al;
using al::testing::ScopedEnv;
using al::testing::TempDir;

namespace {

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

bool mentions(const std::vector<std::string>& warnings, const std::string& word) {
  for (const auto& w : warnings)
    if (w.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("user_dir follows XDG, falls back to HOME, and ignores a relative XDG path") {
  TempDir home;
  ScopedEnv h("HOME", home.path.string());
  {
    ScopedEnv c("XDG_CONFIG_HOME", std::nullopt);
    ScopedEnv s("XDG_STATE_HOME", std::nullopt);
    CHECK(*user_dir(UserDir::Config) == home / ".config/attention-lab");
    CHECK(*user_dir(UserDir::State) == home / ".local/state/attention-lab");
  }
  {
    ScopedEnv c("XDG_CONFIG_HOME", home / "cfg");
    ScopedEnv s("XDG_STATE_HOME", "relative/state");  // not absolute: ignored, as the spec says
    CHECK(*user_dir(UserDir::Config) == home / "cfg/attention-lab");
    CHECK(*user_dir(UserDir::State) == home / ".local/state/attention-lab");
    CHECK(*settings_path() == home / "cfg/attention-lab/settings.json");
  }
  {
    ScopedEnv no_home("HOME", std::nullopt);
    ScopedEnv c("XDG_CONFIG_HOME", std::nullopt);
    auto dir = user_dir(UserDir::Config);
    REQUIRE_FALSE(dir.ok());
    CHECK(dir.error().message.find("$HOME") != std::string::npos);
    // Loading still works: defaults and a warning.
    LoadedSettings loaded = load_settings();
    CHECK(loaded.settings == Settings{});
    CHECK(mentions(loaded.warnings, "XDG_CONFIG_HOME"));
  }
}

TEST_CASE("settings: first run gives defaults without warnings; save creates the folders and loads back") {
  TempDir home;
  ScopedEnv h("HOME", home.path.string());
  ScopedEnv c("XDG_CONFIG_HOME", std::nullopt);
  LoadedSettings first = load_settings();
  CHECK(first.warnings.empty());
  CHECK(first.settings == Settings{});
  CHECK(first.settings.colormap_sequential == "viridis");

  write_text(home / "a.json", "{}");
  Settings s;
  s.language = "zh";
  s.colormap_diverging = "gray";
  s.window = {1600, 900, -20, 40, true};
  add_recent_file(s, home / "a.json");
  REQUIRE_FALSE(save_settings(s));
  CHECK(std::filesystem::is_regular_file(home / ".config/attention-lab/settings.json"));
  LoadedSettings again = load_settings();
  CHECK(again.warnings.empty());
  CHECK(again.settings == s);
  CHECK(again.settings.window.x == -20);
}

TEST_CASE("recent files: most recent first, no repeats, at most 10, missing files pruned on load") {
  TempDir dir;
  Settings s;
  for (int i = 0; i < 12; ++i) {
    write_text(dir / ("f" + std::to_string(i) + ".json"), "{}");
    add_recent_file(s, dir / ("f" + std::to_string(i) + ".json"));
  }
  REQUIRE(s.recent_files.size() == kMaxRecentFiles);
  CHECK(s.recent_files.front() == dir / "f11.json");
  CHECK(s.recent_files.back() == dir / "f2.json");
  // Opening f5 again moves it to the front instead of adding a second entry;
  // a relative spelling of the same file is the same entry.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path);
  add_recent_file(s, "./sub/../f5.json");
  std::filesystem::current_path(cwd);
  CHECK(s.recent_files.size() == kMaxRecentFiles);
  CHECK(s.recent_files[0] == dir / "f5.json");
  CHECK(std::count(s.recent_files.begin(), s.recent_files.end(), dir / "f5.json") == 1);
  CHECK(s.recent_files[1] == dir / "f11.json");

  std::filesystem::remove(dir / "f11.json");
  REQUIRE_FALSE(save_settings_file(dir / "settings.json", s));
  LoadedSettings loaded = load_settings_file(dir / "settings.json");
  CHECK(loaded.warnings.empty());
  REQUIRE(loaded.settings.recent_files.size() == kMaxRecentFiles - 1);
  CHECK(loaded.settings.recent_files[0] == dir / "f5.json");
  CHECK(loaded.settings.recent_files[1] == dir / "f10.json");  // f11 is gone
}

TEST_CASE("malformed settings: defaults and a warning, never a crash") {
  TempDir dir;
  const std::string path = dir / "settings.json";
  SUBCASE("not JSON") {
    write_text(path, "{\"language\": \"zh\",");
    LoadedSettings loaded = load_settings_file(path);
    CHECK(loaded.settings == Settings{});
    CHECK(mentions(loaded.warnings, "malformed JSON"));
  }
  SUBCASE("not an object") {
    write_text(path, "[1, 2]");
    LoadedSettings loaded = load_settings_file(path);
    CHECK(loaded.settings == Settings{});
    CHECK(loaded.warnings.size() == 1);
  }
  SUBCASE("fields of the wrong type keep their default, the others are read") {
    write_text(dir / "kept.json", "{}");
    write_text(path, "{\"language\": 7, \"colormap_sequential\": \"magma\", \"window\": {\"width\": -5, "
                     "\"height\": 700, \"x\": \"left\", \"maximized\": 1}, \"recent_files\": [3, \"" +
                         dir / "kept.json" + "\", null], \"from_a_newer_version\": true}");
    LoadedSettings loaded = load_settings_file(path);
    const Settings& s = loaded.settings;
    CHECK(s.language.empty());
    CHECK(s.colormap_sequential == "magma");
    CHECK(s.window.width == 0);
    CHECK(s.window.height == 700);
    CHECK_FALSE(s.window.x.has_value());
    CHECK_FALSE(s.window.maximized);
    CHECK(s.recent_files == std::vector<std::string>{dir / "kept.json"});
    CHECK(mentions(loaded.warnings, "'language'"));
    CHECK(mentions(loaded.warnings, "'width'"));
    CHECK(mentions(loaded.warnings, "'x'"));
    CHECK(mentions(loaded.warnings, "'maximized'"));
    CHECK(loaded.warnings.size() == 4);  // unknown keys are not warned about
  }
  SUBCASE("a folder where the file should be") {
    std::filesystem::create_directory(path);
    LoadedSettings loaded = load_settings_file(path);
    CHECK(loaded.settings == Settings{});
    CHECK(mentions(loaded.warnings, "folder"));
  }
}

TEST_CASE("the file dialog's last folder: kept between runs in $XDG_CONFIG_HOME, dropped once the folder is gone") {
  TempDir home;
  ScopedEnv c("XDG_CONFIG_HOME", home / "cfg");
  const std::string folder = home / "lessons";
  std::filesystem::create_directories(folder);
  Settings s;
  s.last_folder = folder;
  REQUIRE_FALSE(save_settings(s).has_value());
  // Written where XDG says, under its own key.
  std::ifstream in(home / "cfg/attention-lab/settings.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"last_folder\": \"" + folder + "\"") != std::string::npos);
  LoadedSettings loaded = load_settings();
  CHECK(loaded.warnings.empty());
  CHECK(loaded.settings.last_folder == folder);
  CHECK(loaded.settings == s);

  std::filesystem::remove(folder);
  loaded = load_settings();
  CHECK(loaded.warnings.empty());
  CHECK(loaded.settings.last_folder.empty());

  write_text(home / "cfg/attention-lab/settings.json", "{\"last_folder\": 7}");
  loaded = load_settings();
  CHECK(mentions(loaded.warnings, "last_folder"));
  CHECK(loaded.settings.last_folder.empty());
}
