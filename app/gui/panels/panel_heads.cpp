// Heads as a reshape: which columns of Q/K/V (and rows of W_O) belong to which
// head, a head-count slider at fixed d_model, and the check that concat·W_O is
// the sum over heads of context_h · W_O's rows for h (core/numerics/heads.hpp).
#include <algorithm>

#include "editing/config_edits.hpp"
#include "numerics/heads.hpp"
#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

ImU32 head_colour(Index head, int alpha = 255) {
  static const ImU32 kColours[] = {IM_COL32(230, 159, 0, 255),  IM_COL32(86, 180, 233, 255),
                                   IM_COL32(0, 158, 115, 255),  IM_COL32(240, 228, 66, 255),
                                   IM_COL32(0, 114, 178, 255),  IM_COL32(213, 94, 0, 255),
                                   IM_COL32(204, 121, 167, 255), IM_COL32(160, 160, 160, 255)};
  const ImU32 c = kColours[head % 8];
  return (c & 0x00FFFFFFu) | (static_cast<ImU32>(alpha) << 24);
}

// A bar of `columns` slots split into coloured blocks of d_k, labelled with `prefix` and their
// number; a slot is as wide as one of d_model's, so a narrower K/V bar looks narrower. A block of
// K/V head g takes the colour of its first query head, g·group.
void head_bar(const char* label, Index columns, Index d_model, Index d_k, const char* prefix, Index group = 1) {
  const float font = ImGui::GetFontSize();
  wrapped_text(label);
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float full = std::max(ImGui::GetContentRegionAvail().x, 10.0f * font);
  const float slot = full / static_cast<float>(d_model);
  const float height = 1.6f * font;
  ImGui::Dummy(ImVec2(slot * static_cast<float>(columns), height));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  for (Index h = 0; h < columns / d_k; ++h) {
    const ImVec2 a(at.x + h * d_k * slot, at.y), b(at.x + (h + 1) * d_k * slot, at.y + height);
    draw->AddRectFilled(a, b, head_colour(h * group, 200));
    draw->AddRect(a, b, IM_COL32(30, 30, 30, 255));
    // The head and its columns where they fit, else the head alone (narrow blocks of many heads).
    const std::string name = prefix + std::to_string(h);
    for (const std::string& text :
         {name + " [" + std::to_string(h * d_k) + ":" + std::to_string((h + 1) * d_k) + ")", name}) {
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      if (size.x >= b.x - a.x - 0.2f * font) continue;
      draw->AddText(ImVec2(0.5f * (a.x + b.x - size.x), a.y + 0.5f * (height - size.y)), IM_COL32(0, 0, 0, 255),
                    text.c_str());
      break;
    }
  }
}

}  // namespace

void draw_heads_window(AppState& app) {
  if (!app.teaching.heads_open) return;
  const float font = ImGui::GetFontSize();
  // Each view has its own first place, so several open at once don't cover each other.
  const ImVec2 work = ImGui::GetMainViewport()->WorkPos;
  ImGui::SetNextWindowPos(ImVec2(work.x + 2.0f * font, work.y + 3.0f * font), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(30.0f * font, 20.0f * font), ImGuiCond_FirstUseEver);
  const std::string title = std::string(app.tr("teach.heads.title")) + "###heads_window";
  if (!ImGui::Begin(title.c_str(), &app.teaching.heads_open)) {
    ImGui::End();
    return;
  }
  const Session& session = app.model.session();
  const Index d_model = session.config.d_model;
  // The head counts that divide d_model, as slider positions.
  std::vector<int> counts;
  for (Index h = 1; h <= d_model && h <= 64; ++h)
    if (d_model % h == 0) counts.push_back(static_cast<int>(h));
  int position = static_cast<int>(std::find(counts.begin(), counts.end(), session.config.num_heads) - counts.begin());
  const int heads = position < static_cast<int>(counts.size()) ? counts[static_cast<size_t>(position)] : 1;
  // Grouped K/V heads: K and V are h_kv·d_k wide, each block shared by a group of query heads.
  const Index kv_heads = session.config.kv_heads(), d_k = d_model / heads;
  const bool grouped = kv_heads < heads && heads % kv_heads == 0;
  const Index group = grouped ? heads / kv_heads : 1;
  wrapped_text(app.i18n.format(grouped ? "teach.heads.explain_grouped" : "teach.heads.explain",
                               {{"d_model", std::to_string(d_model)},
                                {"h", std::to_string(heads)},
                                {"d_k", std::to_string(d_k)},
                                {"h_kv", std::to_string(kv_heads)},
                                {"kv_width", std::to_string(kv_heads * d_k)},
                                {"group", std::to_string(group)}}));
  ImGui::SetNextItemWidth(14.0f * font);
  if (!counts.empty() &&
      ImGui::SliderInt((std::string(app.tr("teach.heads.count")) + "###heads_count").c_str(), &position, 0,
                       static_cast<int>(counts.size()) - 1, std::to_string(counts[static_cast<size_t>(
                           std::clamp<int>(position, 0, static_cast<int>(counts.size()) - 1))]).c_str())) {
    // As the Settings tab's heads field: K/V weights regrouped, the K/V heads kept where they still divide.
    const Index chosen = counts[static_cast<size_t>(std::clamp<int>(position, 0, static_cast<int>(counts.size()) - 1))];
    app.edit(with_heads(session, chosen, session.config.num_kv_heads), "edit.heads", "teach.heads.count",
             "teach.heads.count");
  }
  if (ImGui::IsItemDeactivated()) app.model.end_merge();
  app.widgets.add_last_item("heads.count");
  show_error_if_from(app, "teach.heads.count");

  app.widgets.set_fact("heads.kv_columns", std::to_string(kv_heads * d_k));
  if (grouped) {
    head_bar(app.tr("teach.heads.columns_q"), d_model, d_model, d_k, "h");
    head_bar(app.i18n.format("teach.heads.columns_kv", {{"group", std::to_string(group)}}).c_str(), kv_heads * d_k,
             d_model, d_k, "g", group);
  } else {
    head_bar(app.tr("teach.heads.columns"), d_model, d_model, d_k, "h");
  }
  if (session.weights.w_o) head_bar(app.tr("teach.heads.rows_wo"), d_model, d_model, d_k, "h");

  ImGui::Separator();
  auto trace = app.model.trace();
  if (trace) {
    auto check = check_head_sum(*trace, app.model.trace_session());
    wrapped_text(app.tr("teach.heads.check"));
    if (!check) {
      wrapped_text(app.i18n.error_message(check.error()));
    } else {
      const std::string diff = app.i18n.format("teach.heads.difference",
                                               {{"diff", lab_number(check->max_abs_difference)}});
      ImGui::TextUnformatted(diff.c_str());
      app.widgets.set_fact("heads.max_difference", lab_number(check->max_abs_difference));
      if (!check->has_w_o) wrapped_text_disabled(app.tr("teach.heads.no_wo"));
    }
  }
  ImGui::End();
}

}  // namespace al::gui
