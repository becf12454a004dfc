#pragma once
// Thin RAII wrappers over the few GL objects the app creates itself
// (ImGui's backend manages its own). Functions are loaded by libepoxy.
#include <epoxy/gl.h>

#include <string>

namespace al::gui {

// A single-channel float texture holding one matrix, one texel per cell.
class GlTexture {
 public:
  GlTexture() = default;
  ~GlTexture();
  GlTexture(GlTexture&& o) noexcept;
  GlTexture& operator=(GlTexture&& o) noexcept;
  GlTexture(const GlTexture&) = delete;
  GlTexture& operator=(const GlTexture&) = delete;

  // rows x cols floats, row `r` starting at data + r * row_stride. Nearest
  // filtering: a cell is a cell, never blended with its neighbours.
  void upload(const float* data, int rows, int cols, int row_stride);
  GLuint id() const { return id_; }

 private:
  GLuint id_ = 0;
};

// A linked vertex + fragment program.
class GlProgram {
 public:
  GlProgram() = default;
  ~GlProgram();
  GlProgram(GlProgram&& o) noexcept;
  GlProgram& operator=(GlProgram&& o) noexcept;
  GlProgram(const GlProgram&) = delete;
  GlProgram& operator=(const GlProgram&) = delete;

  // Compiles and links; on failure returns false with the GL log in `error`.
  bool build(const std::string& vertex_source, const std::string& fragment_source,
             std::string* error);
  GLuint id() const { return id_; }
  GLint uniform(const char* name) const { return glGetUniformLocation(id_, name); }

 private:
  GLuint id_ = 0;
};

}  // namespace al::gui
