#include "gl/gl_heatmap.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "numerics/block_peaks.hpp"

namespace al::gui {

GLuint TextureCache::get(const MatrixView& view) {
  auto [it, inserted] = entries_.try_emplace(view.key);
  Entry& entry = it->second;
  if (inserted) {
    const auto start = std::chrono::steady_clock::now();
    entry.texture.upload(view.data, static_cast<int>(view.rows), static_cast<int>(view.cols),
                         static_cast<int>(view.row_stride));
    entry.owner = view.owner;
    upload_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  entry.used = true;
  return entry.texture.id();
}

Index TextureCache::screen_texels(Index cells, Index max_texels) {
  return peak_texels(cells, std::max(max_texels, kScreenTexels));
}

bool TextureCache::takes_peaks(const MatrixView& view, Index max_texels) {
  max_texels = std::max(max_texels, kScreenTexels);
  return view.peaks && view.peak_texels == max_texels && (view.rows > max_texels || view.cols > max_texels);
}

GLuint TextureCache::screen(const MatrixView& view, Index max_texels) {
  max_texels = std::max(max_texels, kScreenTexels);
  if (view.rows <= max_texels && view.cols <= max_texels) return get(view);
  auto [it, inserted] = entries_.try_emplace(view.key + "/screen" + std::to_string(max_texels));
  Entry& entry = it->second;
  if (inserted) {
    const auto start = std::chrono::steady_clock::now();
    const Index rows = screen_texels(view.rows, max_texels), cols = screen_texels(view.cols, max_texels);
    if (takes_peaks(view, max_texels)) {
      entry.texture.upload(view.peaks, static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(cols));
    } else {
      const Index block_rows = peak_block(view.rows, max_texels), block_cols = peak_block(view.cols, max_texels);
      std::vector<float> reduced(static_cast<size_t>(rows * cols));
      // Both cores: the worker that computed the trace is idle now.
#pragma omp parallel
      {
        std::vector<float> folded(static_cast<size_t>(view.cols));  // (cols of the view): a block row's rows folded
#pragma omp for schedule(static)
        for (Index r = 0; r < rows; ++r) {
          const float* first = view.data + r * block_rows * view.row_stride;
          std::copy(first, first + view.cols, folded.begin());
          for (Index k = 1; k < block_rows && r * block_rows + k < view.rows; ++k)
            fold_peak_row(folded.data(), first + k * view.row_stride, view.cols);
          peak_texel_row(folded.data(), view.cols, block_cols, reduced.data() + r * cols);
        }
      }
      entry.texture.upload(reduced.data(), static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(cols));
    }
    upload_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  entry.used = true;
  return entry.texture.id();
}

void TextureCache::collect_unused() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!it->second.used) {
      it = entries_.erase(it);
    } else {
      it->second.used = false;
      ++it;
    }
  }
}

HeatmapRenderer::~HeatmapRenderer() { shutdown(); }

void HeatmapRenderer::shutdown() {
  commands_.clear();
  if (vbo_) glDeleteBuffers(1, &vbo_);
  if (vao_) glDeleteVertexArrays(1, &vao_);
  vbo_ = vao_ = 0;
  for (GlProgram& program : programs_) program = GlProgram();
}

namespace {

// `source` with COLORMAP and HAS_MASK defined right after its #version line (GLSL
// wants that line first); #line keeps the compiler's line numbers those of the file.
std::string specialised(const std::string& source, int colormap, bool has_mask) {
  const std::size_t version = source.find("#version");
  const std::size_t end = version == std::string::npos ? std::string::npos : source.find('\n', version);
  if (end == std::string::npos) return source;  // no #version line: the compiler says what is wrong
  const auto line = std::count(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(end), '\n') + 2;
  return source.substr(0, end + 1) + "#define COLORMAP " + std::to_string(colormap) + "\n#define HAS_MASK " +
         (has_mask ? "1" : "0") + "\n#line " + std::to_string(line) + "\n" + source.substr(end + 1);
}

}  // namespace

bool HeatmapRenderer::init(const std::string& vertex_source, const std::string& fragment_source,
                           std::string* error) {
  for (int colormap = 0; colormap < kColormaps; ++colormap)
    for (int has_mask = 0; has_mask < 2; ++has_mask)
      if (!programs_[2 * colormap + has_mask].build(vertex_source, specialised(fragment_source, colormap, has_mask),
                                                    error)) {
        shutdown();
        return false;
      }
  glGenVertexArrays(1, &vao_);
  glGenBuffers(1, &vbo_);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  glBufferData(GL_ARRAY_BUFFER, 16 * sizeof(float), nullptr, GL_DYNAMIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float), nullptr);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float),
                        reinterpret_cast<void*>(2 * sizeof(float)));
  glBindVertexArray(0);
  return true;
}

void HeatmapRenderer::draw(ImDrawList* draw_list, ImVec2 rect_min, ImVec2 rect_max, GLuint values,
                           GLuint mask, int rows, int cols, const HeatmapStyle& style, bool grid) {
  if (!ready() || rows <= 0 || cols <= 0) return;
  commands_.push_back(Command{this, rect_min, rect_max, values, mask, rows, cols, style, grid});
  draw_list->AddCallback(&HeatmapRenderer::render_callback, &commands_.back());
  // Hands the GL state back to ImGui's backend for the widgets drawn after us.
  draw_list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

void HeatmapRenderer::render_callback(const ImDrawList*, const ImDrawCmd* cmd) {
  const auto* command = static_cast<const Command*>(cmd->UserCallbackData);
  command->renderer->render(*command, *cmd);
}

void HeatmapRenderer::render(const Command& c, const ImDrawCmd& cmd) {
  const ImDrawData* draw_data = ImGui::GetDrawData();
  const ImVec2 origin = draw_data->DisplayPos;
  const ImVec2 size = draw_data->DisplaySize;
  const ImVec2 scale = draw_data->FramebufferScale;
  const float fb_height = size.y * scale.y;

  // The window's clip rectangle, as ImGui's backend would apply it.
  const ImVec4 clip = cmd.ClipRect;
  const float clip_x0 = (clip.x - origin.x) * scale.x, clip_y0 = (clip.y - origin.y) * scale.y;
  const float clip_x1 = (clip.z - origin.x) * scale.x, clip_y1 = (clip.w - origin.y) * scale.y;
  if (clip_x1 <= clip_x0 || clip_y1 <= clip_y0) return;
  glEnable(GL_SCISSOR_TEST);
  glScissor(static_cast<GLint>(clip_x0), static_cast<GLint>(fb_height - clip_y1),
            static_cast<GLsizei>(clip_x1 - clip_x0), static_cast<GLsizei>(clip_y1 - clip_y0));
  glDisable(GL_BLEND);

  // ImGui's orthographic projection: screen coordinates to clip space, y down.
  const float l = origin.x, r = origin.x + size.x, t = origin.y, b = origin.y + size.y;
  const float projection[16] = {
      2.0f / (r - l),    0.0f,              0.0f,  0.0f,
      0.0f,              2.0f / (t - b),    0.0f,  0.0f,
      0.0f,              0.0f,              -1.0f, 0.0f,
      (r + l) / (l - r), (t + b) / (b - t), 0.0f,  1.0f};
  // The texture may hold fewer texels than the matrix has cells (TextureCache::screen):
  // the shader's cells are its texels.
  Command texels = c;
  glBindTexture(GL_TEXTURE_2D, c.values);
  glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &texels.cols);
  glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_HEIGHT, &texels.rows);
  if (texels.cols <= 0 || texels.rows <= 0) return;
  const ImVec2 cell_pixels = c.grid ? ImVec2((c.max.x - c.min.x) * scale.x / texels.cols,
                                             (c.max.y - c.min.y) * scale.y / texels.rows)
                                    : ImVec2(0.0f, 0.0f);  // "0 px" cells: no grid lines
  draw_quad(texels, projection, cell_pixels);
}

void HeatmapRenderer::draw_quad(const Command& c, const float projection[16], ImVec2 cell_pixels) {
  const GlProgram& program = programs_[2 * static_cast<int>(c.style.colormap) + (c.mask != 0 ? 1 : 0)];
  glUseProgram(program.id());
  glUniformMatrix4fv(program.uniform("u_projection"), 1, GL_FALSE, projection);
  glUniform1i(program.uniform("u_values"), 0);
  glUniform1i(program.uniform("u_mask"), 1);
  glUniform1f(program.uniform("u_low"), c.style.low);
  glUniform1f(program.uniform("u_high"), c.style.high);
  glUniform2f(program.uniform("u_cells"), static_cast<float>(c.cols), static_cast<float>(c.rows));
  glUniform2f(program.uniform("u_cell_pixels"), cell_pixels.x, cell_pixels.y);
  const ImVec4 grid = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glUniform3f(program.uniform("u_grid_colour"), grid.x, grid.y, grid.z);

  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, c.mask);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, c.values);

  const float quad[16] = {c.min.x, c.min.y, 0.0f, 0.0f,  c.max.x, c.min.y, 1.0f, 0.0f,
                          c.min.x, c.max.y, 0.0f, 1.0f,  c.max.x, c.max.y, 1.0f, 1.0f};
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  glBufferSubData(GL_ARRAY_BUFFER, 0, sizeof(quad), quad);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  glBindVertexArray(0);
}

}  // namespace al::gui
