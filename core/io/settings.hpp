#pragma once
// Per-user files in the XDG base directories, and the app's settings
// ($XDG_CONFIG_HOME/attention-lab/settings.json, else ~/.config/attention-lab/).
// A missing or malformed settings file never stops the app: it gets the
// defaults for whatever could not be read, plus a warning to show.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace al {

enum class UserDir {
  Config,  // $XDG_CONFIG_HOME/attention-lab, else $HOME/.config/attention-lab
  State,   // $XDG_STATE_HOME/attention-lab,  else $HOME/.local/state/attention-lab
};
// The folder's path (not created). An error when neither the XDG variable
// (absolute, as the spec requires) nor $HOME is set.
Result<std::string> user_dir(UserDir which);
// Creates the folder and its parents (rwx for the user only, as XDG asks).
std::optional<Error> make_dirs(const std::string& path);

constexpr std::size_t kMaxRecentFiles = 10;

struct WindowGeometry {
  int width = 0, height = 0;  // 0: the app picks its default size
  std::optional<int> x, y;    // top-left corner on the desktop; none: the window manager places it
  bool maximized = false;
};

struct Settings {
  std::string language;                    // "en", "zh"; empty: from the environment (LANG)
  std::string colormap_sequential = "viridis";  // weights, masks: values in [0, 1]
  std::string colormap_diverging = "rdbu";      // scores, Q/K/V: signed values around 0
  WindowGeometry window;
  std::vector<std::string> recent_files;   // absolute paths, most recent first, no repeats
  std::string last_folder;                 // where the file dialog last opened, saved or imported; empty: none
  int font_percent = 100;                  // presentation mode: text size, 60..300 %
  bool full_screen = false;                // presentation mode: F11
  bool operator==(const Settings& o) const;
};

// Puts `path` (made absolute) first, removing an older entry of it, and keeps
// at most kMaxRecentFiles.
void add_recent_file(Settings& settings, const std::string& path);

struct LoadedSettings {
  Settings settings;
  std::vector<std::string> warnings;  // English sentences (the app translates them with the
                                      // error.pattern.settings_* entries); empty when all was well
};
// A missing file gives the defaults without a warning. Unreadable or malformed
// JSON gives the defaults and a warning; a field of the wrong type or out of
// range keeps its default and gets a warning; unknown keys (a newer version's)
// are ignored. Recent files and a last folder that no longer exist are dropped.
LoadedSettings load_settings_file(const std::string& path);
std::string settings_to_json(const Settings& settings);
// Atomic (write_file_atomic), creating the folder first.
std::optional<Error> save_settings_file(const std::string& path, const Settings& settings);

// The same at the XDG location: user_dir(UserDir::Config) + "/settings.json".
Result<std::string> settings_path();
LoadedSettings load_settings();
std::optional<Error> save_settings(const Settings& settings);

}  // namespace al
