// Cell-by-cell editing of any input matrix: X, the weights (whole or one
// head's slice), Q/K/V in direct mode. Drag a cell (one undo step per drag) or
// double-click / Ctrl+click it to type a value; fill with random, zero, identity.
#include <imgui_internal.h>  // TempInputIsActive, GetInputTextState: the text typed into a cell

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "panels/panels.hpp"

namespace al::gui {

namespace {

std::vector<InputId> editable_inputs(const Session& s) {
  std::vector<InputId> ids;
  if (s.config.mode == InputMode::Direct) {
    ids = {InputId::Q, InputId::K, InputId::V};
  } else {
    ids.push_back(InputId::X);
    if (s.config.attention == AttentionKind::Cross) ids.push_back(InputId::XKv);
    if (s.weights.fused()) ids.insert(ids.end(), {InputId::WQkv, InputId::BQkv});
    else ids.insert(ids.end(), {InputId::WQ, InputId::BQ, InputId::WK, InputId::BK, InputId::WV, InputId::BV});
  }
  ids.insert(ids.end(), {InputId::WO, InputId::BO});
  ids.erase(std::remove_if(ids.begin(), ids.end(), [&](InputId id) { return !input(s, id); }), ids.end());
  return ids;
}

// Which part of a weight belongs to query head `head`: columns of W_Q, of W_K / W_V the
// columns of the K/V head it reads (grouped-query sessions have fewer), rows of W_O.
struct Slice {
  Index first_row = 0, rows = 0, first_col = 0, cols = 0;
};

bool is_kv_weight(InputId id) {
  return id == InputId::WK || id == InputId::WV || id == InputId::BK || id == InputId::BV;
}

// How many query heads read one K/V head (1 without grouping).
Index kv_group(const Config& c) {
  return c.kv_heads() > 0 && c.num_heads % c.kv_heads() == 0 ? c.num_heads / c.kv_heads() : 1;
}

Slice head_slice(InputId id, const Tensor& t, const Config& c, int head) {
  Slice all{0, t.rows(), 0, t.cols()};
  if (head < 0 || c.num_heads <= 0 || c.d_model % c.num_heads != 0) return all;
  const Index d_k = c.d_model / c.num_heads;
  Slice part = all;
  switch (id) {
    case InputId::WQ: case InputId::BQ:
      part = {0, t.rows(), head * d_k, d_k};
      break;
    case InputId::WK: case InputId::WV: case InputId::BK: case InputId::BV:
      part = {0, t.rows(), head / kv_group(c) * d_k, d_k};
      break;
    case InputId::WO:
      part = {head * d_k, d_k, 0, t.cols()};
      break;
    default:
      break;
  }
  const bool inside = part.first_row + part.rows <= t.rows() && part.first_col + part.cols <= t.cols();
  return inside ? part : all;
}

bool has_head_slices(InputId id) {
  return id == InputId::WQ || id == InputId::WK || id == InputId::WV || id == InputId::BQ ||
         id == InputId::BK || id == InputId::BV || id == InputId::WO;
}

bool is_number_character(ImWchar c) {
  return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' || c == ' ';
}

// ImGui silently drops characters that cannot be part of a number and keeps the
// old value for text it cannot read ("abc", "nan", "1e"): both get a message.
// Called just before the cell's DragFloat (the typed characters are still queued).
void watch_typing_before(AppState& app, ImGuiID id) {
  if (!ImGui::TempInputIsActive(id)) return;
  for (ImWchar c : ImGui::GetIO().InputQueueCharacters) {
    if (is_number_character(c)) continue;
    char utf8[5];
    refuse_typing(app, "editor.typing_message", "editor.not_a_number_char", {{"char", ImTextCharToUtf8(utf8, c)}});
  }
}

// Called just after it: remembers the text while typing, judges it when typing ends.
void watch_typing_after(AppState& app, ImGuiID id) {
  ViewState& view = app.view;
  if (ImGui::TempInputIsActive(id)) {
    if (const ImGuiInputTextState* state = ImGui::GetInputTextState(id)) {
      std::string text(static_cast<size_t>(state->CurLenA) + 1, '\0');
      const int length = ImTextStrToUtf8(text.data(), static_cast<int>(text.size()), state->TextW.Data,
                                         state->TextW.Data + state->CurLenW);
      text.resize(static_cast<size_t>(length));
      view.typing_cell = id;
      view.typed_text = text;
    }
    return;
  }
  if (view.typing_cell != id) return;
  view.typing_cell = 0;
  const char* begin = view.typed_text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  while (end && *end == ' ') ++end;
  const bool number = end != begin && end && *end == '\0' && std::isfinite(value);
  if (!number && !ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
    refuse_typing(app, "editor.typing_message", "editor.not_a_number", {{"text", view.typed_text}});
}

}  // namespace

void draw_matrix_editor(AppState& app) {
  // A copy: an edit below replaces the model's session while we still read this one.
  const Session s = app.model.session();
  const float font = ImGui::GetFontSize();
  ViewState& view = app.view;
  const auto ids = editable_inputs(s);
  if (ids.empty()) return;
  if (std::find(ids.begin(), ids.end(), view.editor_input) == ids.end()) view.editor_input = ids.front();

  ImGui::SetNextItemWidth(10.0f * font);
  if (ImGui::BeginCombo((std::string(app.tr("editor.matrix")) + "###editor_matrix").c_str(),
                        input_name(view.editor_input))) {
    for (InputId id : ids) {
      if (ImGui::Selectable(input_name(id), id == view.editor_input)) view.editor_input = id;
      app.widgets.add_last_item("editor.matrix." + std::string(input_name(id)));
    }
    ImGui::EndCombo();
  }
  app.widgets.add_last_item("editor.matrix");

  const InputId id = view.editor_input;
  TensorPtr tensor = input(s, id);
  const Tensor& t = *tensor;
  if (t.matrices() > 1) {
    int batch = static_cast<int>(std::clamp<Index>(view.editor_batch, 0, t.matrices() - 1));
    ImGui::SetNextItemWidth(7.0f * font);
    if (ImGui::InputInt((std::string(app.tr("editor.batch")) + "###editor_batch").c_str(), &batch))
      view.editor_batch = std::clamp<Index>(batch, 0, t.matrices() - 1);
  } else {
    view.editor_batch = 0;
  }
  const Index k = std::clamp<Index>(view.editor_batch, 0, t.matrices() - 1);

  if (has_head_slices(id) && s.config.num_heads > 1) {
    ImGui::SetNextItemWidth(10.0f * font);
    // W_K and W_V list their K/V heads, each with the query heads reading it (as the
    // heatmaps title them); picking one keeps the first of those query heads.
    const Index group = is_kv_weight(id) ? kv_group(s.config) : 1;
    view.editor_head = std::min(view.editor_head, static_cast<int>(s.config.num_heads) - 1);
    auto head_label = [&](int h) {
      if (group == 1) return app.i18n.format("heatmap.head", {{"n", std::to_string(h)}});
      const Index first = h / group * group;
      return app.i18n.format("heatmap.kv_head", {{"n", std::to_string(h / group)}, {"first", std::to_string(first)},
                                                 {"last", std::to_string(first + group - 1)}});
    };
    const std::string current = view.editor_head < 0 ? std::string(app.tr("editor.all_heads")) : head_label(view.editor_head);
    if (ImGui::BeginCombo((std::string(app.tr("editor.slice")) + "###editor_slice").c_str(), current.c_str())) {
      if (ImGui::Selectable(app.tr("editor.all_heads"), view.editor_head < 0)) view.editor_head = -1;
      for (int h = 0; h < s.config.num_heads; h += static_cast<int>(group)) {
        ImGui::PushID(h);
        if (ImGui::Selectable(head_label(h).c_str(), view.editor_head >= 0 && view.editor_head / group == h / group))
          view.editor_head = h;
        app.widgets.add_last_item("editor.slice." + std::to_string(h / group));
        ImGui::PopID();
      }
      ImGui::EndCombo();
    }
    app.widgets.add_last_item("editor.slice");
  } else {
    view.editor_head = -1;
  }

  // Whole-matrix fills.
  if (ImGui::Button((std::string(app.tr("editor.randomise")) + "###randomise").c_str()))
    app.edit(with_filled(s, id, Fill::Random, static_cast<std::uint64_t>(view.random_seed)),
             "edit.randomise", "editor");
  app.widgets.add_last_item("editor.randomise");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(6.0f * font);
  ImGui::InputInt((std::string(app.tr("editor.seed")) + "###random_seed").c_str(), &view.random_seed);
  if (ImGui::Button((std::string(app.tr("editor.zero")) + "###zero").c_str()))
    app.edit(with_filled(s, id, Fill::Zero), "edit.zero", "editor");
  ImGui::SameLine();
  if (ImGui::Button((std::string(app.tr("editor.identity")) + "###identity").c_str()))
    app.edit(with_filled(s, id, Fill::Identity), "edit.identity", "editor");
  show_error_if_from(app, "editor");
  ImGui::TextDisabled("%s", app.tr("editor.hint"));
  show_refusal(app, "editor.typing_message");

  // The cells, clipped to what is visible (matrices can have thousands of rows).
  // Wide matrices show a window of columns with a scroller: ImGui tables take
  // at most 64 columns (the label column counts), so never one per matrix column.
  const Slice slice = head_slice(id, t, s.config, view.editor_head);
  constexpr Index kWindowColumns = 32;
  const Index shown_cols = std::min(slice.cols, kWindowColumns);
  const Index last_first_col = slice.cols - shown_cols;
  view.editor_first_col = static_cast<int>(std::clamp<Index>(view.editor_first_col, 0, last_first_col));
  if (last_first_col > 0) {
    ImGui::SetNextItemWidth(std::min(ImGui::GetContentRegionAvail().x, 24.0f * font));
    const std::string columns = app.i18n.format(
        "editor.columns", {{"first", std::to_string(slice.first_col + view.editor_first_col)},
                           {"last", std::to_string(slice.first_col + view.editor_first_col + shown_cols - 1)},
                           {"count", std::to_string(slice.cols)}});
    ImGui::SliderInt("###editor_first_col", &view.editor_first_col, 0, static_cast<int>(last_first_col),
                     columns.c_str(), ImGuiSliderFlags_AlwaysClamp);
    app.widgets.add_last_item("editor.first_col");
  }
  const Index window_first_col = slice.first_col + view.editor_first_col;
  const bool token_rows = id == InputId::X || id == InputId::Q;
  const auto& row_tokens = (id == InputId::XKv || id == InputId::K || id == InputId::V) &&
                                   s.config.attention == AttentionKind::Cross
                               ? s.tokens_kv
                               : s.tokens;
  const ImGuiTableFlags flags = ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("cells", static_cast<int>(shown_cols) + 1, flags,
                        ImVec2(0.0f, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 3.0f * font);
    for (Index c = 0; c < shown_cols; ++c)
      ImGui::TableSetupColumn(std::to_string(window_first_col + c).c_str(), ImGuiTableColumnFlags_WidthFixed,
                              3.6f * font);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(slice.rows));
    while (clipper.Step()) {
      for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
        const Index r = slice.first_row + row;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        const bool has_token = token_rows && r < static_cast<Index>(row_tokens.size());
        ImGui::TextUnformatted(has_token ? row_tokens[r].c_str() : std::to_string(r).c_str());
        ImGui::PushID(row);
        for (Index col = 0; col < shown_cols; ++col) {
          const Index c = window_first_col + col;
          ImGui::TableNextColumn();
          ImGui::PushID(static_cast<int>(col));
          const Index flat = k * t.rows() * t.cols() + r * t.cols() + c;
          // Shown as 0 when "%.3f" would write "-0.000" (a drag then starts from 0).
          const float stored = t.data[static_cast<size_t>(flat)];
          float value = std::fabs(stored) < 5e-4f ? 0.0f : stored;
          ImGui::SetNextItemWidth(-1.0f);
          const ImGuiID cell_id = ImGui::GetID("##cell");
          watch_typing_before(app, cell_id);
          const bool changed = ImGui::DragFloat("##cell", &value, 0.01f, 0.0f, 0.0f, "%.3f");
          watch_typing_after(app, cell_id);
          if (ImGui::IsItemActivated()) ++view.drag_generation;
          if (changed) view.refusal.reset();
          if (changed)
            app.edit(with_cell(s, id, flat, value), "edit.cell", "editor",
                     "cell/" + std::string(input_name(id)) + "/" + std::to_string(flat) + "/" +
                         std::to_string(view.drag_generation));
          if (row < 16 && col < 16)
            app.widgets.add_last_item("editor.cell." + std::to_string(r) + "." + std::to_string(c));
          ImGui::PopID();
        }
        ImGui::PopID();
      }
    }
    ImGui::EndTable();
  }
}

}  // namespace al::gui
