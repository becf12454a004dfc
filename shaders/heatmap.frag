#version 330 core
// Colours one matrix held in a float texture (R32F, one texel per cell).
// Colormaps are piecewise-linear through fixed stops, so a test can compute
// the expected colour of a value from the same table.
// The app builds one program per COLORMAP (0 sequential (viridis), 1 diverging
// (blue-white-red), 2 mask painter) and HAS_MASK (0, 1), defined after #version:
// llvmpipe runs both sides of a branch on a uniform for every pixel, so each program
// keeps only its own code (docs/performance.md, thirty-sixth pass). For the same reason
// main() picks its colour by selects, not by branches and an early return, and the
// colormaps sum their segments rather than index a table by a value (fifty-second pass).
#ifndef COLORMAP
#define COLORMAP 0
#endif
#ifndef HAS_MASK
#define HAS_MASK 0
#endif
in vec2 v_uv;
out vec4 frag_colour;

uniform sampler2D u_values;   // (rows, cols) values
uniform sampler2D u_mask;     // (rows, cols) 1 = attend, 0 = masked; read when HAS_MASK
uniform float u_low;          // value drawn at the start of the colormap
uniform float u_high;         // value drawn at its end
uniform vec2 u_cells;         // (cols, rows)
uniform vec2 u_cell_pixels;   // on-screen size of one cell, for the grid lines
uniform vec3 u_grid_colour;

const vec3 kNaN = vec3(1.0, 0.0, 1.0);          // magenta: never a colormap colour
const vec3 kMaskedLight = vec3(0.62, 0.62, 0.62);
const vec3 kMaskedDark = vec3(0.40, 0.40, 0.40);
const vec3 kAttend = vec3(0.30, 0.69, 0.49);
const float kLeakVisible = 1e-3;  // as the trace's masked_weight_max warning
const float kLeakBorder = 3.0;    // pixels of hatched frame around a leaked cell

// viridis at t = 0, 1/9, ..., 1
const vec3 kViridis[10] = vec3[10](
    vec3(68, 1, 84) / 255.0, vec3(72, 40, 120) / 255.0, vec3(62, 73, 137) / 255.0,
    vec3(49, 104, 142) / 255.0, vec3(38, 130, 142) / 255.0, vec3(31, 158, 137) / 255.0,
    vec3(53, 183, 121) / 255.0, vec3(110, 206, 88) / 255.0, vec3(181, 222, 43) / 255.0,
    vec3(253, 231, 37) / 255.0);
// RdBu reversed: negative blue, zero near-white, positive red; t = 0, 1/6, ..., 1
const vec3 kDiverging[7] = vec3[7](
    vec3(33, 102, 172) / 255.0, vec3(103, 169, 207) / 255.0, vec3(209, 229, 240) / 255.0,
    vec3(247, 247, 247) / 255.0, vec3(253, 219, 199) / 255.0, vec3(239, 138, 98) / 255.0,
    vec3(178, 24, 43) / 255.0);

// Piecewise linear through the stops: the first stop plus each segment's rise times how
// much of that segment lies below x (x counted in stops, 0 .. N - 1), the same colours as
// mixing the two stops around x.
vec3 viridis(float t) {
  float x = clamp(t, 0.0, 1.0) * 9.0;
  vec3 colour = kViridis[0];
  for (int i = 0; i < 9; ++i) colour += (kViridis[i + 1] - kViridis[i]) * clamp(x - float(i), 0.0, 1.0);
  return colour;
}

vec3 diverging(float t) {
  float x = clamp(t, 0.0, 1.0) * 6.0;
  vec3 colour = kDiverging[0];
  for (int i = 0; i < 6; ++i) colour += (kDiverging[i + 1] - kDiverging[i]) * clamp(x - float(i), 0.0, 1.0);
  return colour;
}

// Diagonal hatching, in screen pixels so it reads the same at any zoom.
vec3 hatching() {
  bool stripe = mod(gl_FragCoord.x + gl_FragCoord.y, 8.0) < 4.0;
  return stripe ? kMaskedDark : kMaskedLight;
}

void main() {
  vec2 cell_f = v_uv * u_cells;
  ivec2 cell = ivec2(min(floor(cell_f), u_cells - 1.0));
  // A one-pixel gap between cells once they are big enough to tell apart.
  vec2 inside = fract(cell_f) * u_cell_pixels;
  bool grid_line = u_cell_pixels.x >= 6.0 && u_cell_pixels.y >= 6.0 && (inside.x < 1.0 || inside.y < 1.0);
  float value = texelFetch(u_values, cell, 0).r;
#if HAS_MASK
  bool masked = texelFetch(u_mask, cell, 0).r < 0.5;
#else
  const bool masked = false;
#endif
  // A softmax weight on a masked key that is not ~0 (a fill like -1e-20) must be
  // seen, not hidden under the hatching.
  bool leaked = masked && COLORMAP == 0 && value > kLeakVisible;
  // From the weakest claim on the pixel to the strongest.
  vec3 colour;
  if (COLORMAP == 2) {
    colour = kAttend;
  } else {
    float t = (u_high > u_low) ? (value - u_low) / (u_high - u_low) : 0.5;
    colour = (COLORMAP == 1) ? diverging(t) : viridis(t);
  }
  // A hatched frame says "masked", the inside shows the weight it still got.
  bool leak_frame = leaked && min(u_cell_pixels.x, u_cell_pixels.y) >= 4.0 * kLeakBorder &&
                    (min(inside.x, inside.y) < kLeakBorder || inside.x > u_cell_pixels.x - kLeakBorder ||
                     inside.y > u_cell_pixels.y - kLeakBorder);
  bool hatched = (masked && !leaked) || (COLORMAP == 2 && value < 0.5) || leak_frame;
  colour = hatched ? hatching() : colour;
  // NaN is shown even on masked cells: a fully masked row with -inf fill gives NaN.
  colour = isnan(value) ? kNaN : colour;
  frag_colour = vec4(grid_line ? u_grid_colour : colour, 1.0);
}
