#include "gl/gl_resources.hpp"

#include <utility>
#include <vector>

namespace al::gui {

GlTexture::~GlTexture() {
  if (id_) glDeleteTextures(1, &id_);
}
GlTexture::GlTexture(GlTexture&& o) noexcept : id_(std::exchange(o.id_, 0)) {}
GlTexture& GlTexture::operator=(GlTexture&& o) noexcept {
  if (this != &o) {
    if (id_) glDeleteTextures(1, &id_);
    id_ = std::exchange(o.id_, 0);
  }
  return *this;
}

void GlTexture::upload(const float* data, int rows, int cols, int row_stride) {
  if (!id_) glGenTextures(1, &id_);
  glBindTexture(GL_TEXTURE_2D, id_);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, row_stride);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, cols, rows, 0, GL_RED, GL_FLOAT, data);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
}

GlProgram::~GlProgram() {
  if (id_) glDeleteProgram(id_);
}
GlProgram::GlProgram(GlProgram&& o) noexcept : id_(std::exchange(o.id_, 0)) {}
GlProgram& GlProgram::operator=(GlProgram&& o) noexcept {
  if (this != &o) {
    if (id_) glDeleteProgram(id_);
    id_ = std::exchange(o.id_, 0);
  }
  return *this;
}

namespace {
GLuint compile(GLenum kind, const std::string& source, std::string* error) {
  GLuint shader = glCreateShader(kind);
  const char* text = source.c_str();
  glShaderSource(shader, 1, &text, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    GLint length = 0;
    glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
    std::vector<char> log(static_cast<size_t>(length) + 1, '\0');
    glGetShaderInfoLog(shader, length, nullptr, log.data());
    *error = std::string(kind == GL_VERTEX_SHADER ? "vertex" : "fragment") +
             " shader: " + log.data();
    glDeleteShader(shader);
    return 0;
  }
  return shader;
}
}  // namespace

bool GlProgram::build(const std::string& vertex_source, const std::string& fragment_source,
                      std::string* error) {
  GLuint vertex = compile(GL_VERTEX_SHADER, vertex_source, error);
  if (!vertex) return false;
  GLuint fragment = compile(GL_FRAGMENT_SHADER, fragment_source, error);
  if (!fragment) {
    glDeleteShader(vertex);
    return false;
  }
  GLuint program = glCreateProgram();
  glAttachShader(program, vertex);
  glAttachShader(program, fragment);
  glLinkProgram(program);
  glDeleteShader(vertex);
  glDeleteShader(fragment);
  GLint ok = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    GLint length = 0;
    glGetProgramiv(program, GL_INFO_LOG_LENGTH, &length);
    std::vector<char> log(static_cast<size_t>(length) + 1, '\0');
    glGetProgramInfoLog(program, length, nullptr, log.data());
    *error = std::string("link: ") + log.data();
    glDeleteProgram(program);
    return false;
  }
  if (id_) glDeleteProgram(id_);
  id_ = program;
  return true;
}

}  // namespace al::gui
