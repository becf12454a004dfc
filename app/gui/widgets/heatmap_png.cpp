#include "widgets/heatmap_png.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/matrix_io.hpp"
#include "platform/screenshot.hpp"
#include "widgets/heatmap_slide.hpp"

namespace al::gui {

namespace {

constexpr int kSmallestSide = 256;    // pixels on the longer side of a small matrix's picture
constexpr long kRequestFrames = 3;    // frames a request waits for its heatmap to be drawn

// Why `path` cannot be written, in the learner's language, before trying; empty if it looks fine.
std::string folder_problem(const AppState& app, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path).parent_path();
  const std::string folder = parent.empty() ? "." : parent.string();
  std::error_code ignored;
  if (!fs::is_directory(folder, ignored)) return app.i18n.format("png.no_folder", {{"folder", folder}});
  if (::access(folder.c_str(), W_OK) != 0) return app.i18n.format("png.not_writable", {{"folder", folder}});
  return {};
}

void report(AppState& app, bool failed, const std::string& text) {
  app.teaching.export_failed = failed;
  app.teaching.export_status = text;
}

// Draws `spec` off screen and writes it; the result goes to the export window's status line.
void save_png(AppState& app, const HeatmapSpec& spec, const std::string& path) {
  auto fail = [&](const std::string& why) {
    report(app, true, app.i18n.format("png.failed", {{"path", path}, {"why", why}}));
  };
  if (std::string problem = folder_problem(app, path); !problem.empty()) return fail(problem);
  const MatrixView& m = spec.values;
  const HeatmapPngSize size = heatmap_png_size(m.rows, m.cols);
  const GLuint mask = spec.mask.valid() ? app.textures.get(spec.mask) : 0;
  std::vector<unsigned char> rgb;
  if (auto error = app.heatmaps.render_offscreen(app.textures.get(m), mask, static_cast<int>(m.rows),
                                                 static_cast<int>(m.cols), spec.style, size.width,
                                                 size.height, &rgb))
    return fail(*error);
  const std::string png = png_bytes_bottom_up(rgb, size.width, size.height);
  if (png.empty()) return fail(app.tr("png.encode_failed"));
  if (auto error = write_file_atomic(path, png)) return fail(app.i18n.error_message(*error));
  report(app, false, app.i18n.format("png.wrote", {{"path", path},
                                                  {"width", std::to_string(size.width)},
                                                  {"height", std::to_string(size.height)},
                                                  {"per_cell", std::to_string(size.pixels_per_cell)}}));
}

// The slide picture of `spec` (title, labels, numbers, colour bar), `width` pixels wide.
void save_slide_png(AppState& app, const HeatmapSpec& spec, const std::string& path, int width) {
  auto fail = [&](const std::string& why) {
    report(app, true, app.i18n.format("png.failed", {{"path", path}, {"why", why}}));
  };
  if (std::string problem = folder_problem(app, path); !problem.empty()) return fail(problem);
  SlidePicture picture;
  if (auto error = render_slide(app, spec, app.document, width, &picture)) return fail(*error);
  const std::string png = png_bytes_bottom_up(picture.rgb, picture.width, picture.height);
  if (png.empty()) return fail(app.tr("png.encode_failed"));
  if (auto error = write_file_atomic(path, png)) return fail(app.i18n.error_message(*error));
  char grid[96];  // where the cells are: tests compare their colours with independent values
  std::snprintf(grid, sizeof grid, "%.2f,%.2f,%.2f,%.2f,%s", picture.grid_min.x, picture.grid_min.y,
                picture.grid_max.x - picture.grid_min.x, picture.grid_max.y - picture.grid_min.y,
                picture.numbers ? "numbers" : "no-numbers");
  app.teaching.slide_grid = grid;
  report(app, false, app.i18n.format("png.wrote_slide", {{"path", path},
                                                        {"width", std::to_string(picture.width)},
                                                        {"height", std::to_string(picture.height)}}));
}

void save(AppState& app, const HeatmapSpec& spec, const std::string& path, int slide_width) {
  if (slide_width > 0) save_slide_png(app, spec, path, slide_width);
  else save_png(app, spec, path);
}

// The requested heatmap was not drawn: it is not at the current step.
void fail_unanswered(AppState& app) {
  TeachingViews& t = app.teaching;
  report(app, true, app.i18n.format("png.failed",
                                    {{"path", t.png_path},
                                     {"why", app.i18n.format("png.not_on_screen", {{"name", t.png_heatmap}})}}));
  t.png_heatmap.clear();
}

}  // namespace

HeatmapPngSize heatmap_png_size(Index rows, Index cols) {
  HeatmapPngSize size;
  const Index longer = std::max<Index>(1, std::max(rows, cols));
  size.pixels_per_cell = static_cast<int>(std::max<Index>(1, (kSmallestSide + longer - 1) / longer));
  size.width = static_cast<int>(cols) * size.pixels_per_cell;
  size.height = static_cast<int>(rows) * size.pixels_per_cell;
  return size;
}

std::string heatmap_png_name(const AppState& app, const std::string& heatmap, bool slide) {
  const Index batch = std::max<Index>(app.view.batch, 0);
  return heatmap + ".b" + std::to_string(batch) + (slide ? ".slide.png" : ".png");
}

void request_heatmap_png(AppState& app, const std::string& name, const std::string& path, int slide_width) {
  app.teaching.png_heatmap = name;
  app.teaching.png_path = path;
  app.teaching.png_slide_width = slide_width;
  app.teaching.png_frame = app.frame;
}

void heatmap_png_hooks(AppState& app, const HeatmapSpec& spec) {
  TeachingViews& t = app.teaching;
  if (ImGui::BeginPopupContextItem("heatmap_png")) {
    const std::string path = export_path(app, heatmap_png_name(app, spec.name, false));
    const std::string slide_path = export_path(app, heatmap_png_name(app, spec.name, true));
    ImGui::TextDisabled("%s", spec.title.c_str());
    if (ImGui::MenuItem((std::string(app.tr("png.menu_save")) + "###png_save").c_str())) {
      save_png(app, spec, path);
      t.export_open = true;  // its status line says where the file went, or why not
    }
    app.widgets.add_last_item("png.menu_save");
    ImGui::TextDisabled("%s", path.c_str());
    const std::string slide_label = app.i18n.format("png.menu_slide", {{"width", std::to_string(t.slide_width)}});
    if (ImGui::MenuItem((slide_label + "###png_slide").c_str())) {
      save_slide_png(app, spec, slide_path, t.slide_width);
      t.export_open = true;
    }
    app.widgets.add_last_item("png.menu_slide");
    ImGui::TextDisabled("%s", slide_path.c_str());
    ImGui::EndPopup();
  }
  if (!t.png_heatmap.empty() && t.png_heatmap == spec.name) {
    t.png_heatmap.clear();
    save(app, spec, t.png_path, t.png_slide_width);
  }
}

void expire_heatmap_png_request(AppState& app) {
  TeachingViews& t = app.teaching;
  if (t.png_heatmap.empty() || app.frame <= t.png_frame + kRequestFrames) return;
  fail_unanswered(app);
}

int heatmap_png_exit_status(AppState& app) {
  if (app.options.export_heatmap.empty()) return 0;
  if (!app.teaching.png_heatmap.empty()) fail_unanswered(app);  // closed before it was drawn
  if (!app.teaching.export_failed) return 0;
  std::fprintf(stderr, "attention-lab: %s\n", app.teaching.export_status.c_str());
  return 1;
}

}  // namespace al::gui
