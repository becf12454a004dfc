// Token lines: queries on the left, keys on the right, one line per pair whose
// thickness and opacity are the attention weight; per head or averaged; hovering
// a token keeps only its lines.
#include <algorithm>
#include <cmath>

#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {
constexpr Index kMaxTokens = 64;  // beyond this the lines are a grey smear
}

void draw_token_lines_window(AppState& app) {
  if (!app.teaching.token_lines_open) return;
  const float font = ImGui::GetFontSize();
  // Each view has its own first place, so several open at once don't cover each other.
  // Bottom left, and never taller than the screen (its last token was cut off at 800 px).
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  const float window_height = std::min(28.0f * font, viewport->WorkSize.y - 4.0f * font);
  ImGui::SetNextWindowPos(ImVec2(viewport->WorkPos.x + 2.0f * font,
                                 viewport->WorkPos.y + viewport->WorkSize.y - 1.5f * font),
                          ImGuiCond_FirstUseEver, ImVec2(0.0f, 1.0f));
  ImGui::SetNextWindowSize(ImVec2(26.0f * font, window_height), ImGuiCond_FirstUseEver);
  const std::string title = std::string(app.tr("teach.lines.title")) + "###token_lines_window";
  if (!ImGui::Begin(title.c_str(), &app.teaching.token_lines_open)) {
    ImGui::End();
    return;
  }
  auto trace = app.model.trace();
  if (!trace) {
    ImGui::End();
    return;
  }
  const Dims& d = trace->dims;
  const Session& session = app.model.trace_session();
  const Index batch = std::clamp<Index>(app.view.batch, 0, d.batch - 1);
  int& chosen = app.teaching.token_lines_head;  // -1: the average
  chosen = std::clamp<int>(chosen, -1, static_cast<int>(d.heads) - 1);
  const int head = d.heads == 1 ? 0 : chosen;  // one head: nothing to average, and the choice is kept

  // Head: the average of several, or one head.
  const std::string average = app.tr("teach.lines.average");
  const std::string current =
      head < 0 ? average : app.i18n.format("heatmap.head", {{"n", std::to_string(head)}});
  app.widgets.set_fact("token_lines.head", current);  // tests read it
  ImGui::SetNextItemWidth(12.0f * font);
  if (ImGui::BeginCombo((std::string(app.tr("teach.lines.head")) + "###lines_head").c_str(), current.c_str())) {
    if (d.heads > 1 && ImGui::Selectable(average.c_str(), head < 0)) chosen = -1;
    for (int h = 0; h < d.heads; ++h) {
      ImGui::PushID(h);
      if (ImGui::Selectable(app.i18n.format("heatmap.head", {{"n", std::to_string(h)}}).c_str(), head == h)) chosen = h;
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  wrapped_text(app.tr("teach.lines.hint"));
  if (d.len_q > kMaxTokens || d.len_kv > kMaxTokens) {
    wrapped_text(app.i18n.format("teach.lines.too_many",
                                 {{"n", std::to_string(std::max(d.len_q, d.len_kv))}}));
    ImGui::End();
    return;
  }
  const TensorPtr& weights = trace->stage_ptr(Stage::Weights);  // (B, h, Lq, Lk)
  const MatrixView w = head < 0 ? app.derived.head_average(weights, batch, d.heads)
                                : matrix_of(weights, batch * d.heads + head);
  const bool cross = session.config.attention == AttentionKind::Cross;
  const std::vector<std::string>& query_tokens = session.tokens;
  const std::vector<std::string>& key_tokens = cross ? session.tokens_kv : session.tokens;

  // Layout: labels in two columns, lines between them.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float header = 1.4f * font;
  const float height = std::max(6.0f * font, avail.y - 0.5f * font);
  const float label_width = 6.0f * font;
  const float left_x = origin.x + label_width, right_x = origin.x + std::max(avail.x, 14.0f * font) - label_width;
  auto y_of = [&](Index k, Index n) {
    return origin.y + header + (static_cast<float>(k) + 0.5f) * (height - header) / static_cast<float>(n);
  };
  ImGui::InvisibleButton("lines_canvas", ImVec2(std::max(avail.x, 14.0f * font), height));
  app.widgets.add_last_item("token_lines.canvas");
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  // A hovered token: a query on the left or a key on the right.
  Index hover_query = -1, hover_key = -1;
  if (hovered) {
    if (mouse.x < left_x + 0.5f * font)
      hover_query = std::clamp<Index>(static_cast<Index>((mouse.y - origin.y - header) / ((height - header) / d.len_q)), 0, d.len_q - 1);
    else if (mouse.x > right_x - 0.5f * font)
      hover_key = std::clamp<Index>(static_cast<Index>((mouse.y - origin.y - header) / ((height - header) / d.len_kv)), 0, d.len_kv - 1);
  }
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  draw->AddText(ImVec2(origin.x, origin.y), text, app.tr("teach.lines.queries"));
  const char* keys_label = app.tr("teach.lines.keys");
  draw->AddText(ImVec2(right_x + 0.5f * font, origin.y), text, keys_label);
  for (Index i = 0; i < d.len_q; ++i)
    for (Index j = 0; j < d.len_kv; ++j) {
      if ((hover_query >= 0 && i != hover_query) || (hover_key >= 0 && j != hover_key)) continue;
      const float weight = w.at(i, j);
      if (!std::isfinite(weight) || weight <= 0.002f) continue;
      const float alpha = std::clamp(weight, 0.0f, 1.0f);
      draw->AddLine(ImVec2(left_x, y_of(i, d.len_q)), ImVec2(right_x, y_of(j, d.len_kv)),
                    IM_COL32(255, 170, 40, static_cast<int>(40 + 215 * alpha)), 0.1f * font + 0.45f * font * alpha);
    }
  auto label = [&](const std::vector<std::string>& tokens, Index k) {
    return k < static_cast<Index>(tokens.size()) && !tokens[static_cast<size_t>(k)].empty()
               ? tokens[static_cast<size_t>(k)] : std::to_string(k);
  };
  for (Index i = 0; i < d.len_q; ++i) {
    const std::string t = label(query_tokens, i);
    const ImVec2 size = ImGui::CalcTextSize(t.c_str());
    draw->AddText(ImVec2(left_x - size.x - 0.4f * font, y_of(i, d.len_q) - 0.5f * size.y),
                  i == hover_query ? IM_COL32(255, 200, 0, 255) : text, t.c_str());
  }
  for (Index j = 0; j < d.len_kv; ++j) {
    const std::string t = label(key_tokens, j);
    const ImVec2 size = ImGui::CalcTextSize(t.c_str());
    draw->AddText(ImVec2(right_x + 0.4f * font, y_of(j, d.len_kv) - 0.5f * size.y),
                  j == hover_key ? IM_COL32(255, 200, 0, 255) : text, t.c_str());
  }
  ImGui::End();
}

}  // namespace al::gui
