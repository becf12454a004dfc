// Settings and the XDG folders (see settings.hpp).
#include "io/settings.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/matrix_io.hpp"

namespace al {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kAppFolder = "attention-lab";
constexpr int kMaxWindowExtent = 100000;  // pixels; anything larger is a corrupt file

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// Reads one field into `out` when it has the right type; otherwise keeps the
// default and says so.
class FieldReader {
 public:
  FieldReader(const json& object, std::vector<std::string>& warnings) : object_(object), warnings_(warnings) {}

  void string(const char* key, std::string& out, std::size_t max_length = 64) {
    const json* j = find(key);
    if (!j) return;
    if (j->is_string() && j->get<std::string>().size() <= max_length) out = j->get<std::string>();
    else wrong(key, "a short string");
  }
  void integer(const char* key, int& out, int lowest, int highest) {
    std::optional<int> value;
    integer(key, value, lowest, highest);
    if (value) out = *value;
  }
  void integer(const char* key, std::optional<int>& out, int lowest, int highest) {
    const json* j = find(key);
    if (!j || j->is_null()) return;
    if (j->is_number_integer() && j->get<std::int64_t>() >= lowest && j->get<std::int64_t>() <= highest)
      out = static_cast<int>(j->get<std::int64_t>());
    else wrong(key, "a whole number from " + std::to_string(lowest) + " to " + std::to_string(highest));
  }
  void boolean(const char* key, bool& out) {
    const json* j = find(key);
    if (!j) return;
    if (j->is_boolean()) out = j->get<bool>();
    else wrong(key, "true or false");
  }

 private:
  const json* find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  void wrong(const std::string& key, const std::string& expected) {
    warnings_.push_back("settings: '" + key + "' should be " + expected + " but is " + object_[key].dump() +
                        "; using the default");
  }
  const json& object_;
  std::vector<std::string>& warnings_;
};

}  // namespace

Result<std::string> user_dir(UserDir which) {
  const bool config = which == UserDir::Config;
  const char* variable = config ? "XDG_CONFIG_HOME" : "XDG_STATE_HOME";
  // The spec says to ignore a relative XDG path.
  const std::string xdg = env(variable);
  if (!xdg.empty() && fs::path(xdg).is_absolute()) return (fs::path(xdg) / kAppFolder).string();
  const std::string home = env("HOME");
  if (home.empty())
    return make_error(ErrorCode::IoError,
                      std::string("cannot tell where to keep Attention Lab's ") + (config ? "settings" : "recovery file") +
                          ": neither $" + variable + " nor $HOME is set",
                      {{"variable", variable}});
  return (fs::path(home) / (config ? ".config" : ".local/state") / kAppFolder).string();
}

std::optional<Error> make_dirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec || !fs::is_directory(path))
    return make_error(ErrorCode::IoError,
                      "cannot create the folder '" + path + "': " + (ec ? ec.message() : "a file has that name"),
                      {{"path", path}});
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace, ec);  // best effort
  return std::nullopt;
}

bool Settings::operator==(const Settings& o) const {
  return language == o.language && colormap_sequential == o.colormap_sequential &&
         colormap_diverging == o.colormap_diverging && window.width == o.window.width &&
         window.height == o.window.height && window.x == o.window.x && window.y == o.window.y &&
         window.maximized == o.window.maximized && recent_files == o.recent_files &&
         last_folder == o.last_folder && font_percent == o.font_percent && full_screen == o.full_screen;
}

void add_recent_file(Settings& settings, const std::string& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  const std::string entry = (ec ? fs::path(path) : absolute).lexically_normal().string();
  auto& list = settings.recent_files;
  list.erase(std::remove(list.begin(), list.end(), entry), list.end());
  list.insert(list.begin(), entry);
  if (list.size() > kMaxRecentFiles) list.resize(kMaxRecentFiles);
}

LoadedSettings load_settings_file(const std::string& path) {
  LoadedSettings loaded;
  std::vector<std::string>& warnings = loaded.warnings;
  std::error_code ec;
  if (!fs::exists(path, ec)) return loaded;  // first run
  auto text = read_file(path);
  if (!text) {
    warnings.push_back(text.error().message + "; using the default settings");
    return loaded;
  }
  const json root = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object()) {
    warnings.push_back("settings: '" + path + "' is not a JSON object" +
                       (root.is_discarded() ? " (malformed JSON)" : "") + "; using the default settings");
    return loaded;
  }
  Settings& s = loaded.settings;
  FieldReader top(root, warnings);
  top.string("language", s.language);
  top.string("colormap_sequential", s.colormap_sequential);
  top.string("colormap_diverging", s.colormap_diverging);
  top.integer("font_percent", s.font_percent, 60, 300);
  top.boolean("full_screen", s.full_screen);
  if (auto it = root.find("window"); it != root.end()) {
    if (it->is_object()) {
      FieldReader window(*it, warnings);
      window.integer("width", s.window.width, 0, kMaxWindowExtent);
      window.integer("height", s.window.height, 0, kMaxWindowExtent);
      window.integer("x", s.window.x, -kMaxWindowExtent, kMaxWindowExtent);
      window.integer("y", s.window.y, -kMaxWindowExtent, kMaxWindowExtent);
      window.boolean("maximized", s.window.maximized);
    } else {
      warnings.push_back("settings: 'window' should be an object; using the default window size");
    }
  }
  top.string("last_folder", s.last_folder, 4096);  // PATH_MAX
  if (!s.last_folder.empty() && !fs::is_directory(s.last_folder, ec)) s.last_folder.clear();  // moved or deleted
  if (auto it = root.find("recent_files"); it != root.end()) {
    if (!it->is_array()) {
      warnings.push_back("settings: 'recent_files' should be a list of paths; starting with an empty list");
    } else {
      // Oldest first, so that add_recent_file() leaves the newest in front.
      for (auto file = it->rbegin(); file != it->rend(); ++file) {
        if (!file->is_string()) continue;  // one bad entry costs only itself
        const std::string p = file->get<std::string>();
        if (fs::is_regular_file(p, ec)) add_recent_file(s, p);
      }
    }
  }
  return loaded;
}

std::string settings_to_json(const Settings& s) {
  json window = {{"width", s.window.width}, {"height", s.window.height}, {"maximized", s.window.maximized}};
  window["x"] = s.window.x ? json(*s.window.x) : json(nullptr);
  window["y"] = s.window.y ? json(*s.window.y) : json(nullptr);
  const json root = {{"language", s.language},
                     {"colormap_sequential", s.colormap_sequential},
                     {"colormap_diverging", s.colormap_diverging},
                     {"window", window},
                     {"recent_files", s.recent_files},
                     {"last_folder", s.last_folder},
                     {"font_percent", s.font_percent},
                     {"full_screen", s.full_screen}};
  // Paths with invalid UTF-8 are written with U+FFFD rather than throwing.
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<Error> save_settings_file(const std::string& path, const Settings& settings) {
  const fs::path folder = fs::path(path).parent_path();
  if (!folder.empty())
    if (auto error = make_dirs(folder.string())) return error;
  return write_file_atomic(path, settings_to_json(settings));
}

Result<std::string> settings_path() {
  auto dir = user_dir(UserDir::Config);
  if (!dir) return dir.error();
  return (fs::path(*dir) / "settings.json").string();
}

LoadedSettings load_settings() {
  auto path = settings_path();
  if (!path) return {Settings{}, {path.error().message + "; using the default settings"}};
  return load_settings_file(*path);
}

std::optional<Error> save_settings(const Settings& settings) {
  auto path = settings_path();
  if (!path) return path.error();
  return save_settings_file(*path, settings);
}

}  // namespace al
