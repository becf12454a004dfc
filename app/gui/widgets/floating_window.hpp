#pragma once
// The small floating windows (Explain, Export, Quiz) first open over the editors' column
// on the left of the main window, so the heatmaps they talk about stay in view.
#include <imgui.h>

namespace al::gui {

// Width of the editors' column for `available_width` of main window (main_window.cpp lays it out).
float editors_column_width(float available_width);

// Sets the next window's first size and place: over the editors' column and as wide as it,
// `height_in_fonts` tall, its top `top_in_fonts` below the menu bar, or with `from_bottom`
// its bottom that far above the status bar; never past the screen's edges.
void place_over_editors(float height_in_fonts, float top_in_fonts, bool from_bottom = false);

}  // namespace al::gui
