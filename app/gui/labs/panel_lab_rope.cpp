// RoPE (rotary position embedding): each pair of a head's dimensions is a 2-D
// arrow that turns by θ = p·base^(−2i/d_k) at position p (numerics/positions.hpp),
// and the score between a query at i and a key at j, rot(q, i)·rot(k, j),
// plotted against i − j for two different starting positions: the two curves
// coincide, because turning both by the same extra angle changes nothing.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "numerics/positions.hpp"
#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

constexpr int kMaxPairsDrawn = 8;
constexpr int kOffsets = 12;  // i − j from −kOffsets to kOffsets

// v (d_k) turned by position p, pair by pair.
std::vector<double> rotated(const std::vector<double>& v, Index p, const PositionalSpec& spec) {
  const Index d_k = static_cast<Index>(v.size());
  std::vector<double> out = v;
  for (Index pair = 0; pair < d_k / 2; ++pair) {
    const auto [a, b] = rope_dimensions(pair, d_k, spec.rope_style);
    const double theta = rope_angle(p, pair, d_k, spec.rope_base);
    out[a] = v[a] * std::cos(theta) - v[b] * std::sin(theta);
    out[b] = v[b] * std::cos(theta) + v[a] * std::sin(theta);
  }
  return out;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// Row `row` of matrix `matrix` of a (…, R, d_k) stage.
std::vector<double> stage_row(const Tensor& t, Index matrix, Index row) {
  std::vector<double> out(static_cast<size_t>(t.cols()));
  for (Index c = 0; c < t.cols(); ++c) out[static_cast<size_t>(c)] = t.data[static_cast<size_t>((matrix * t.rows() + row) * t.cols() + c)];
  return out;
}

// One circle per pair: the arrow of (v_a, v_b) at position 0 (faint) and turned to position p.
void draw_arrows(AppState& app, const std::vector<double>& v, Index p, const PositionalSpec& spec) {
  const float font = ImGui::GetFontSize();
  const Index d_k = static_cast<Index>(v.size());
  const int pairs = static_cast<int>(std::min<Index>(d_k / 2, kMaxPairsDrawn));
  const float radius = 2.6f * font;
  const std::vector<double> turned = rotated(v, p, spec);
  double longest = 1e-9;
  for (int i = 0; i < pairs; ++i) {
    const auto [a, b] = rope_dimensions(i, d_k, spec.rope_style);
    longest = std::max(longest, std::hypot(v[a], v[b]));
  }
  for (int i = 0; i < pairs; ++i) {
    ImGui::PushID(i);
    if (i > 0) ImGui::SameLine(0.0f, 0.8f * font);
    ImGui::BeginGroup();
    const auto [a, b] = rope_dimensions(i, d_k, spec.rope_style);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("pair", ImVec2(2.0f * radius + 0.4f * font, 2.0f * radius + 0.4f * font));
    const ImVec2 centre(origin.x + radius + 0.2f * font, origin.y + radius + 0.2f * font);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddCircle(centre, radius, ImGui::GetColorU32(ImGuiCol_TextDisabled), 48);
    const float scale = static_cast<float>(radius / longest);
    auto arrow = [&](double x, double y, ImU32 colour) {
      const ImVec2 tip(centre.x + scale * static_cast<float>(x), centre.y - scale * static_cast<float>(y));
      draw->AddLine(centre, tip, colour, 0.15f * font);
      draw->AddCircleFilled(tip, 0.2f * font, colour);
    };
    arrow(v[a], v[b], IM_COL32(150, 150, 150, 160));
    arrow(turned[a], turned[b], kScaledColour);
    const double degrees = std::fmod(rope_angle(p, i, d_k, spec.rope_base) * 180.0 / 3.14159265358979323846, 360.0);
    ImGui::Text("(%d, %d)", static_cast<int>(a), static_cast<int>(b));
    ImGui::Text("%s°", lab_number(degrees).c_str());
    ImGui::EndGroup();
    app.widgets.add_last_item("labs.rope.pair." + std::to_string(i));
    ImGui::PopID();
  }
}

void draw_body(AppState& app, RopeLabState& lab) {
  const float font = ImGui::GetFontSize();
  wrapped_text(app.tr("labs.rope.intro"));
  auto trace = app.model.trace();
  const Session& session = app.model.trace_session();
  PositionalSpec spec = session.config.positional;
  const bool rope_on = spec.type == PositionalType::Rope;
  if (!rope_on) {
    spec = PositionalSpec{};
    spec.type = PositionalType::Rope;
    wrapped_text_disabled(app.tr("labs.rope.off"));
  }

  // The vectors: the session's q (row 0 of a query head) and k (row 0 of its K/V
  // head) before rotation, or a fixed pair.
  const bool can_use_session = trace && trace->dims.d_k >= 2 && trace->dims.d_k % 2 == 0;
  if (can_use_session) {
    ImGui::Checkbox((std::string(app.tr("labs.rope.use_session")) + "###rope_use_session").c_str(), &lab.use_session);
    app.widgets.add_last_item("labs.rope.use_session");
  }
  std::vector<double> q, k;
  if (can_use_session && lab.use_session) {
    const Dims& d = trace->dims;
    lab.head = std::clamp(lab.head, 0, static_cast<int>(d.heads) - 1);
    if (d.heads > 1) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(7.0f * font);
      if (ImGui::InputInt((std::string(app.tr("labs.rope.head")) + "###rope_head").c_str(), &lab.head))
        lab.head = std::clamp(lab.head, 0, static_cast<int>(d.heads) - 1);
      app.widgets.add_last_item("labs.rope.head");
    }
    const Index b = std::clamp<Index>(app.view.batch, 0, d.batch - 1);
    q = stage_row(trace->stage(Stage::Q), b * d.heads + lab.head, 0);
    k = stage_row(trace->stage(Stage::K), b * d.kv_heads + d.kv_head(lab.head), 0);
  } else {
    q = {1.0, 0.5, -0.5, 1.0, 0.8, -0.3, 0.2, 0.9};
    k = {0.7, -0.2, 1.0, 0.4, -0.6, 0.5, 0.9, 0.1};
  }
  const Index d_k = static_cast<Index>(q.size());
  const std::string settings_lines = wrapped_text(app.i18n.format("labs.rope.settings", {{"d_k", std::to_string(d_k)},
                                                      {"base", rope_base_text(spec.rope_base)},
                                                      {"style", app.tr(spec.rope_style == RopeStyle::Half
                                                                           ? "config.rope_half"
                                                                           : "config.rope_interleaved")}}));
  app.widgets.set_fact("labs.rope.settings", settings_lines);

  ImGui::SetNextItemWidth(14.0f * font);
  ImGui::SliderInt((std::string(app.tr("labs.rope.position")) + "###rope_position").c_str(), &lab.position, 0, 31);
  app.widgets.add_last_item("labs.rope.position");
  wrapped_text_disabled(app.tr("labs.rope.arrows"));
  draw_arrows(app, q, lab.position, spec);

  // Score against i − j, from two different starting positions.
  const Index starts[] = {kOffsets, kOffsets + 20};
  std::vector<double> series[2];
  std::vector<std::string> x_labels;
  double worst = 0;
  for (int off = -kOffsets; off <= kOffsets; ++off) {
    x_labels.push_back(std::to_string(off));
    for (int s = 0; s < 2; ++s) {
      const Index j = starts[s], i = starts[s] + off;
      series[s].push_back(dot(rotated(q, i, spec), rotated(k, j, spec)));
    }
    worst = std::max(worst, std::abs(series[0].back() - series[1].back()));
  }
  lab_plot("rope_scores", app.tr("labs.rope.plot"), x_labels,
           {{&series[0], kRawColour}, {&series[1], kScaledColour}}, false,
           ImVec2(ImGui::GetContentRegionAvail().x, 12.0f * font));
  app.widgets.add_last_item("labs.rope.plot");
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kRawColour), "%s",
                     app.i18n.format("labs.rope.series", {{"j", std::to_string(starts[0])}}).c_str());
  ImGui::SameLine(0.0f, 2.0f * font);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kScaledColour), "%s",
                     app.i18n.format("labs.rope.series", {{"j", std::to_string(starts[1])}}).c_str());
  wrapped_text(app.i18n.format("labs.rope.same", {{"diff", lab_number(worst)}}));
  app.widgets.set_fact("labs.rope.max_diff", lab_number(worst));
  app.widgets.set_fact("labs.rope.source", can_use_session && lab.use_session ? "session" : "fixed");
  char score[32];  // full precision: a test compares it with q·k
  std::snprintf(score, sizeof score, "%.9g", series[0][kOffsets]);
  app.widgets.set_fact("labs.rope.score_at_0", score);
}

}  // namespace

void draw_rope_lab(AppState& app) {
  RopeLabState& lab = app.labs.rope;
  bool visible = false;
  if (!begin_lab_window(app, "rope", "labs.rope.title", &lab.open, ImVec2(60.0f, 40.0f), &visible)) return;
  if (visible) draw_body(app, lab);
  ImGui::End();
}

}  // namespace al::gui
