// A heatmap drawn off screen by the same shader as on screen, for "save as
// PNG": same colormap, range, NaN colour and hatching, one block of pixels per
// cell (no grid lines, so every pixel of a block is that cell's colour).
#include "gl/gl_heatmap.hpp"

#include <backends/imgui_impl_opengl3.h>

#include <algorithm>

namespace al::gui {

namespace {

// Frees the framebuffer and its renderbuffer, and puts back what the frame
// being built had bound, whatever way render_offscreen leaves.
struct OffscreenTarget {
  GLuint framebuffer = 0, colour = 0;
  GLint previous_framebuffer = 0, previous_viewport[4] = {};
  GLboolean scissor = GL_FALSE;

  OffscreenTarget() {
    glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous_framebuffer);
    glGetIntegerv(GL_VIEWPORT, previous_viewport);
    scissor = glIsEnabled(GL_SCISSOR_TEST);
    glGenFramebuffers(1, &framebuffer);
    glGenRenderbuffers(1, &colour);
  }
  ~OffscreenTarget() {
    glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(previous_framebuffer));
    glViewport(previous_viewport[0], previous_viewport[1], previous_viewport[2], previous_viewport[3]);
    if (scissor) glEnable(GL_SCISSOR_TEST);
    else glDisable(GL_SCISSOR_TEST);
    glDeleteRenderbuffers(1, &colour);
    glDeleteFramebuffers(1, &framebuffer);
  }
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;
};

// Binds `target` as a width x height RGBA picture; a message when GL cannot.
std::optional<std::string> bind_picture(OffscreenTarget& target, int width, int height) {
  GLint max_size = 0;
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_size);
  if (width > max_size || height > max_size)
    return "the picture would be " + std::to_string(width) + "x" + std::to_string(height) +
           " pixels, more than this GL driver draws (" + std::to_string(max_size) + ")";
  glBindRenderbuffer(GL_RENDERBUFFER, target.colour);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glBindRenderbuffer(GL_RENDERBUFFER, 0);
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, target.colour);
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
    return std::string("the GL driver cannot draw into an offscreen picture");
  glViewport(0, 0, width, height);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_BLEND);
  return std::nullopt;
}

// Pixels (0, 0)..(width, height), y down as on screen, to clip space.
void picture_projection(int width, int height, float projection[16]) {
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  const float values[16] = {2.0f / w, 0.0f, 0.0f, 0.0f, 0.0f, -2.0f / h, 0.0f, 0.0f,
                            0.0f, 0.0f, -1.0f, 0.0f, -1.0f, 1.0f, 0.0f, 1.0f};
  std::copy(values, values + 16, projection);
}

void read_picture(int width, int height, std::vector<unsigned char>* rgb) {
  rgb->assign(static_cast<size_t>(width) * height * 3, 0);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, rgb->data());
}

}  // namespace

std::optional<std::string> HeatmapRenderer::render_picture(int width, int height, ImVec4 background,
                                                           const std::vector<PictureQuad>& quads,
                                                           ImDrawData* overlay, std::vector<unsigned char>* rgb) {
  if (!ready()) return std::string("the heatmap shader is not available");
  if (width <= 0 || height <= 0) return std::string("the picture is empty");
  OffscreenTarget target;
  if (auto error = bind_picture(target, width, height)) return error;
  glClearColor(background.x, background.y, background.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  float projection[16];
  picture_projection(width, height, projection);
  for (const PictureQuad& q : quads) {
    const Command command{this, q.min, q.max, q.values, q.mask, q.rows, q.cols, q.style, q.grid};
    draw_quad(command, projection,
              q.grid ? ImVec2((q.max.x - q.min.x) / q.cols, (q.max.y - q.min.y) / q.rows) : ImVec2(0.0f, 0.0f));
  }
  if (overlay) ImGui_ImplOpenGL3_RenderDrawData(overlay);  // renders into the bound picture
  read_picture(width, height, rgb);
  return std::nullopt;
}

std::optional<std::string> HeatmapRenderer::render_offscreen(GLuint values, GLuint mask, int rows,
                                                             int cols, const HeatmapStyle& style,
                                                             int width, int height,
                                                             std::vector<unsigned char>* rgb) {
  if (!ready()) return std::string("the heatmap shader is not available");
  if (rows <= 0 || cols <= 0 || width <= 0 || height <= 0) return std::string("the matrix is empty");
  OffscreenTarget target;
  if (auto error = bind_picture(target, width, height)) return error;
  float projection[16];
  picture_projection(width, height, projection);
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  const Command command{this, ImVec2(0.0f, 0.0f), ImVec2(w, h), values, mask, rows, cols, style, false};
  draw_quad(command, projection, ImVec2(0.0f, 0.0f));  // cells "0 px": no grid lines
  read_picture(width, height, rgb);
  return std::nullopt;
}

}  // namespace al::gui
