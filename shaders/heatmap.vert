#version 330 core
// One screen-space quad per matrix; the fragment shader finds the cell.
layout(location = 0) in vec2 a_position;  // ImGui screen coordinates
layout(location = 1) in vec2 a_uv;        // (0,0) top-left .. (1,1) bottom-right of the matrix
uniform mat4 u_projection;                 // the same orthographic projection ImGui uses
out vec2 v_uv;
void main() {
  v_uv = a_uv;
  gl_Position = u_projection * vec4(a_position, 0.0, 1.0);
}
