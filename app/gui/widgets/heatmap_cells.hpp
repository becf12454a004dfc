#pragma once
// How a heatmap's cells read, on screen and in slide pictures: labels, values as text,
// the text colour over a cell, and the colour bar's ramp.
#include <string>
#include <vector>

#include "gl/gl_heatmap.hpp"   // HeatmapStyle
#include "gl/matrix_view.hpp"

namespace al::gui {

// The label of row/col `index`: the token when there is one (line breaks and tabs as spaces), else the index.
std::string axis_label(const std::vector<std::string>* labels, Index index);
// `label` cut with "…" to `width` pixels of the current font: a long token stays in its label
// column instead of running into the heatmap to its left.
std::string fitted_label(std::string label, float width);
// A softmax weight on a masked key above this is a visible leak: the shader's kLeakVisible
// shows its colour inside a hatched frame, and the mask and softmax steps warn.
constexpr float kLeakVisible = 1e-3f;
// Whether `v`'s colour is dark enough to need white text on it.
bool dark_background(const HeatmapStyle& style, float v);
// A 1 x 64 matrix running from the style's low to its high value: the colour bar.
MatrixView colour_ramp(const HeatmapStyle& style);

}  // namespace al::gui
