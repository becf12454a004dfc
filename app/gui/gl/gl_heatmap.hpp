#pragma once
// Draws matrices as heatmaps inside ImGui windows: one float texture per matrix,
// coloured by shaders/heatmap.frag, issued through an ImDrawList callback so it
// sits in the window's draw order and clipping like any ImGui widget. One quad
// per matrix, whatever its size (one rect per cell is far too slow at n = 2048).
#include <imgui.h>

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gl/gl_resources.hpp"
#include "gl/matrix_view.hpp"

namespace al::gui {

enum class Colormap { Sequential = 0, Diverging = 1, Mask = 2 };

struct HeatmapStyle {
  Colormap colormap = Colormap::Diverging;
  float low = -1.0f;   // value at the colormap's start
  float high = 1.0f;   // value at its end
};

// Textures of the matrices on screen, reused while their data is unchanged.
class TextureCache {
 public:
  // One texel per cell (exports, small matrices).
  GLuint get(const MatrixView& view);
  // For drawing on screen: a matrix longer than `max_texels` on a side gets a
  // smaller texture whose texel stands for a block of cells and holds the cell
  // of largest magnitude (NaN if any is NaN; ±inf only if all are), so no peak
  // and no NaN falls between pixels, and an (n, n) stage at n = 2048 is a
  // 512 x 512 upload that samples from cache instead of a 16 MiB one. A zoomed
  // heatmap passes the part on screen and its size in pixels (at least
  // kScreenTexels): wherever a cell covers a pixel, the texture holds the cells themselves.
  GLuint screen(const MatrixView& view, Index max_texels = kScreenTexels);
  // Whether screen(view, max_texels) uploads the view's peaks, reduced ahead with the trace
  // (MatrixView::peaks), instead of reducing the matrix itself.
  static bool takes_peaks(const MatrixView& view, Index max_texels);
  static constexpr Index kScreenTexels = 512;
  // Texels along a side of `cells` cells in screen()'s texture (max_texels at least kScreenTexels).
  static Index screen_texels(Index cells, Index max_texels = kScreenTexels);
  // Frees the textures no frame has asked for since the previous call.
  void collect_unused();
  // Wall seconds spent making textures so far (--frame-stats' per-trace breakdown).
  double upload_seconds() const { return upload_seconds_; }

 private:
  struct Entry {
    GlTexture texture;
    std::shared_ptr<const void> owner;  // keeps the data (and so the key) alive
    bool used = true;
  };
  std::map<std::string, Entry> entries_;
  double upload_seconds_ = 0;
};

class HeatmapRenderer {
 public:
  HeatmapRenderer() = default;
  ~HeatmapRenderer();
  HeatmapRenderer(const HeatmapRenderer&) = delete;
  HeatmapRenderer& operator=(const HeatmapRenderer&) = delete;

  // Builds the programs from the two shader sources, one per colormap and mask
  // (heatmap.frag's COLORMAP and HAS_MASK); false + message on failure.
  bool init(const std::string& vertex_source, const std::string& fragment_source,
            std::string* error);
  bool ready() const { return programs_[0].id() != 0; }
  // Frees the GL objects; must run while the GL context is still current.
  void shutdown();

  // Forgets last frame's queued draws; call before building a new frame.
  void begin_frame() { commands_.clear(); }
  // Queues the heatmap of `values` (rows x cols texture) into `rect` of `draw_list`.
  // `mask` (same size, 1 = attend) may be 0. `grid`: lines between cells large enough to
  // have them (not for a colour bar, whose cells are steps of one ramp).
  void draw(ImDrawList* draw_list, ImVec2 rect_min, ImVec2 rect_max, GLuint values,
            GLuint mask, int rows, int cols, const HeatmapStyle& style, bool grid = true);
  // Draws the same heatmap into an offscreen framebuffer of width x height
  // pixels, without grid lines, and reads it back as RGB rows bottom-up
  // (gl_heatmap_export.cpp). An error message when GL cannot.
  std::optional<std::string> render_offscreen(GLuint values, GLuint mask, int rows, int cols,
                                              const HeatmapStyle& style, int width, int height,
                                              std::vector<unsigned char>* rgb);
  // A picture of width x height pixels on `background`: each quad drawn by the heatmap
  // shader at its rectangle (grid lines as on screen), then `overlay` (ImGui draw lists:
  // text, lines) over them; read back as RGB rows bottom-up (gl_heatmap_export.cpp).
  struct PictureQuad {
    ImVec2 min, max;
    GLuint values = 0, mask = 0;
    int rows = 0, cols = 0;
    HeatmapStyle style;
    bool grid = true;
  };
  std::optional<std::string> render_picture(int width, int height, ImVec4 background,
                                            const std::vector<PictureQuad>& quads, ImDrawData* overlay,
                                            std::vector<unsigned char>* rgb);

 private:
  struct Command {
    HeatmapRenderer* renderer;
    ImVec2 min, max;
    GLuint values, mask;
    int rows, cols;
    HeatmapStyle style;
    bool grid;
  };
  static void render_callback(const ImDrawList* list, const ImDrawCmd* cmd);
  void render(const Command& c, const ImDrawCmd& cmd);
  // The program's uniforms, textures and quad; `projection` maps c.min..c.max to clip space.
  void draw_quad(const Command& c, const float projection[16], ImVec2 cell_pixels);

  static constexpr int kColormaps = 3;
  std::array<GlProgram, 2 * kColormaps> programs_;  // [2 * colormap + has_mask]
  GLuint vao_ = 0, vbo_ = 0;
  std::deque<Command> commands_;  // deque: callbacks hold pointers into it
};

}  // namespace al::gui
