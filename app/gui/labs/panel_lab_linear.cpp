// The linear-attention lab: φ(q)·φ(k) with φ = elu + 1 (core's linear_attention)
// beside the session's softmax attention: both attention matrices of one head
// (the linear one is implicit, built here only to be seen), both outputs and
// their difference, and the operation counts O(n²·d) vs O(n·d²) with a plot
// over n.
#include <algorithm>
#include <limits>
#include <cmath>

#include "widgets/heatmap_widget.hpp"
#include "teaching/lab_numbers.hpp"
#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

// Above this many cells over all heads the implicit matrix is not built (it is
// the O(n²) object linear attention exists to avoid).
constexpr Index kMaxMatrixCells = Index{4} << 20;
constexpr int kPlotPoints = 64;

// An operation count: exact while short, then lab_number's 4 digits.
std::string count_text(double v) { return v < 1e6 ? std::to_string(std::llround(v)) : lab_number(v); }

void compute_if_changed(AppState& app, LinearLabState& lab, const Trace& trace) {
  if (lab.revision == app.model.revision() && (lab.result || !lab.error.empty())) return;
  lab.revision = app.model.revision();
  lab.result.reset();
  lab.output_difference.reset();
  lab.error.clear();
  const Dims& d = trace.dims;
  const bool with_matrix = d.batch * d.heads * d.len_q * d.len_kv <= kMaxMatrixCells;
  auto result = linear_attention(app.model.trace_session(), with_matrix);
  if (!result) {
    lab.error = app.i18n.error_message(result.error());
    return;
  }
  lab.result = std::make_shared<const LinearAttentionResult>(std::move(*result));
  lab.output_difference = make_tensor(difference(lab.result->output, trace.stage(Stage::Output)));
}

// Softmax and linear attention matrices of one head, side by side, on the same 0..1 scale.
void attention_matrices(AppState& app, const LinearLabState& lab, const Trace& trace, Index batch) {
  const Session& session = app.model.trace_session();
  const std::vector<std::string>* keys =
      session.config.attention == AttentionKind::Cross ? &session.tokens_kv : &session.tokens;
  const Index matrix = batch * trace.dims.heads + lab.head;
  const float font = ImGui::GetFontSize();
  const float width = 0.5f * (ImGui::GetContentRegionAvail().x - 1.2f * font);
  HeatmapSpec softmax;
  softmax.name = "linear_lab.softmax_weights";
  softmax.title = app.i18n.format("linear_lab.softmax_weights", {{"scaled", softmax_input_symbol(session)}});
  softmax.values = matrix_of(trace.stage_ptr(Stage::Weights), matrix);
  if (trace.mask) softmax.mask = matrix_of(trace.mask, batch);
  softmax.style = {Colormap::Sequential, 0.0f, 1.0f};
  softmax.row_labels = &session.tokens;
  softmax.col_labels = keys;
  softmax.width = width;
  softmax.max_height = 11.0f * font;
  softmax.pin_on_click = false;
  heatmap_widget(app, softmax);
  ImGui::SameLine(0.0f, 1.2f * font);
  if (lab.result->attention.empty()) {
    const Dims& d = trace.dims;
    wrapped_text(app.i18n.format("linear_lab.no_matrix",
                                 {{"cells", std::to_string(d.batch * d.heads * d.len_q * d.len_kv)}}));
    return;
  }
  HeatmapSpec linear = softmax;
  linear.name = "linear_lab.linear_weights";
  linear.title = app.tr("linear_lab.linear_weights");
  linear.values = matrix_of(TensorPtr(lab.result, &lab.result->attention), matrix);
  heatmap_widget(app, linear);
}

void outputs(AppState& app, const LinearLabState& lab, const Trace& trace, Index batch) {
  const Session& session = app.model.trace_session();
  const float font = ImGui::GetFontSize();
  ImGui::TextDisabled("%s", app.i18n.format("linear_lab.outputs", {{"b", std::to_string(batch)}}).c_str());
  const TensorPtr softmax_output = trace.stage_ptr(Stage::Output);
  const TensorPtr linear_output(lab.result, &lab.result->output);
  // One colour scale for both outputs, so equal colours mean equal numbers.
  const ValueRange a = app.derived.symmetric_range(softmax_output, batch, 1, nullptr);
  const ValueRange b = app.derived.symmetric_range(linear_output, batch, 1, nullptr);
  const HeatmapStyle shared{Colormap::Diverging, std::min(a.low, b.low), std::max(a.high, b.high)};
  const float width = (ImGui::GetContentRegionAvail().x - 2.4f * font) / 3.0f;
  struct Panel {
    const char* name;
    const char* title;
    TensorPtr tensor;
  };
  const Panel panels[] = {{"linear_lab.softmax_output", "linear_lab.softmax_output", softmax_output},
                          {"linear_lab.linear_output", "linear_lab.linear_output", linear_output},
                          {"linear_lab.difference", "linear_lab.difference", lab.output_difference}};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) ImGui::SameLine(0.0f, 1.2f * font);
    HeatmapSpec spec;
    spec.name = panels[i].name;
    spec.title = app.tr(panels[i].title);
    spec.values = matrix_of(panels[i].tensor, batch);
    if (i < 2) {
      spec.style = shared;
    } else {  // the difference gets its own scale: it is small
      const ValueRange range = app.derived.symmetric_range(panels[i].tensor, batch, 1, nullptr);
      spec.style = {Colormap::Diverging, range.low, range.high};
    }
    spec.row_labels = &session.tokens;
    spec.width = width;
    spec.max_height = 7.0f * font;
    spec.max_cell = 1.3f * font;
    spec.pin_on_click = false;
    heatmap_widget(app, spec);
  }
  // Over the batch item the heatmaps above show, as their colour scale is.
  const Tensor& softmax_all = *softmax_output;  // (B, Lq, d_model), as the linear output
  const Index item = softmax_all.size() / std::max<Index>(1, softmax_all.dim(0));
  const double diff = softmax_all.size() == lab.result->output.size()
                          ? max_abs_difference(lab.result->output.data.data() + batch * item,
                                               softmax_all.data.data() + batch * item, item)
                          : std::numeric_limits<double>::quiet_NaN();
  app.widgets.set_fact("linear_lab.max_difference", lab_number(diff));
  wrapped_text(app.i18n.format("linear_lab.max_difference",
                               {{"diff", lab_number(diff)}, {"scaled", scaled_scores_symbol(app.model.trace_session())}}));
  if (session.config.dropout.active())
    wrapped_text_disabled(app.tr("linear_lab.dropout_note"));
}

void costs(AppState& app, const Trace& trace) {
  const Dims& d = trace.dims;
  const AttentionCosts c = attention_costs(d);
  ImGui::TextUnformatted(app.i18n.format("linear_lab.costs_title",
                                         {{"bh", std::to_string(d.batch * d.heads)},
                                          {"lq", std::to_string(d.len_q)},
                                          {"lk", std::to_string(d.len_kv)},
                                          {"dk", std::to_string(d.d_k)}}).c_str());
  if (ImGui::BeginTable("linear_costs", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn(app.tr("linear_lab.col_what"));
    ImGui::TableSetupColumn(app.tr("linear_lab.col_softmax"));
    ImGui::TableSetupColumn(app.tr("linear_lab.col_linear"));
    ImGui::TableHeadersRow();
    auto row = [&](const char* key, Index softmax, Index linear) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(app.tr(key));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(count_text(static_cast<double>(softmax)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(count_text(static_cast<double>(linear)).c_str());
    };
    row("linear_lab.multiply_adds", c.softmax.multiply_adds, c.linear.multiply_adds);
    row("linear_lab.exponentials", c.softmax.exponentials, c.linear.exponentials);
    row("linear_lab.divisions", c.softmax.divisions, c.linear.divisions);
    ImGui::EndTable();
  }
  app.widgets.set_fact("linear_lab.softmax_multiply_adds", std::to_string(c.softmax.multiply_adds));
  app.widgets.set_fact("linear_lab.linear_multiply_adds", std::to_string(c.linear.multiply_adds));
}

// Both multiply-add counts of one head over n, on one linear scale, with this session's n marked.
void cost_plot(AppState& app, const Trace& trace) {
  const Dims& d = trace.dims;
  const Index break_even = linear_break_even_length(d.d_k);
  const Index n = std::max(d.len_q, d.len_kv);
  const Index n_max = std::max({Index{8}, 4 * n, 3 * break_even});
  const CostCurve curve = cost_curve(d.d_k, n_max, kPlotPoints);
  const float font = ImGui::GetFontSize();
  wrapped_text(app.i18n.format("linear_lab.plot_title", {{"dk", std::to_string(d.d_k)}}));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size(std::min(ImGui::GetContentRegionAvail().x, 36.0f * font), 7.0f * font);
  ImGui::Dummy(size);
  app.widgets.add("linear_lab.plot", origin, ImVec2(origin.x + size.x, origin.y + size.y));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), ImGui::GetColorU32(ImGuiCol_FrameBg));
  double top = 1.0;
  for (size_t i = 0; i < curve.lengths.size(); ++i)
    top = std::max({top, curve.softmax_multiply_adds[i], curve.linear_multiply_adds[i]});
  auto point = [&](Index length, double value) {
    return ImVec2(origin.x + size.x * static_cast<float>(length) / static_cast<float>(n_max),
                  origin.y + size.y * (1.0f - static_cast<float>(value / top)));
  };
  const ImU32 softmax_colour = IM_COL32(239, 138, 98, 255), linear_colour = IM_COL32(103, 169, 207, 255);
  for (size_t i = 1; i < curve.lengths.size(); ++i) {
    draw->AddLine(point(curve.lengths[i - 1], curve.softmax_multiply_adds[i - 1]),
                  point(curve.lengths[i], curve.softmax_multiply_adds[i]), softmax_colour, 0.12f * font);
    draw->AddLine(point(curve.lengths[i - 1], curve.linear_multiply_adds[i - 1]),
                  point(curve.lengths[i], curve.linear_multiply_adds[i]), linear_colour, 0.12f * font);
  }
  const float x = point(n, 0).x;
  draw->AddLine(ImVec2(x, origin.y), ImVec2(x, origin.y + size.y), ImGui::GetColorU32(ImGuiCol_Text), 1.0f);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  draw->AddText(ImVec2(x + 0.2f * font, origin.y + size.y - 1.2f * font), text, ("n = " + std::to_string(n)).c_str());
  draw->AddText(ImVec2(origin.x + 0.2f * font, origin.y + 0.1f * font), text, count_text(top).c_str());
  const std::string right = "n = " + std::to_string(n_max);
  draw->AddText(ImVec2(origin.x + size.x - ImGui::CalcTextSize(right.c_str()).x - 0.2f * font,
                       origin.y + size.y - 1.2f * font), text, right.c_str());
  ImGui::TextColored(ImColor(softmax_colour), "— %s", app.tr("linear_lab.plot_softmax"));
  ImGui::SameLine();
  ImGui::TextColored(ImColor(linear_colour), "— %s", app.tr("linear_lab.plot_linear"));
  wrapped_text(app.i18n.format("linear_lab.break_even", {{"n", std::to_string(break_even)}}));
  wrapped_text(app.tr("linear_lab.seed_table"));
}

}  // namespace

void draw_linear_lab(AppState& app) {
  LinearLabState& lab = app.linear_lab;
  if (app.frame == 0 && std::count(app.options.open_windows.begin(), app.options.open_windows.end(), "linear"))
    lab.open = true;
  if (!lab.open) return;
  const float font = ImGui::GetFontSize();
  const ImVec2 screen = ImGui::GetMainViewport()->WorkSize;  // the window fits on it: its text wraps at the edge
  ImGui::SetNextWindowSize(ImVec2(std::min(58.0f * font, screen.x - 7.0f * font), std::min(60.0f * font, screen.y - 3.5f * font)),
                           ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowPos(ImVec2(6.0f * font, 2.5f * font), ImGuiCond_FirstUseEver);
  if (ImGui::Begin((std::string(app.tr("linear_lab.title")) + "###linear_lab").c_str(), &lab.open)) {
    wrapped_text(app.i18n.format("linear_lab.intro", {{"scaled", scaled_scores_symbol(app.model.trace_session())}}));
    auto trace = app.model.trace();
    if (!trace) {
      wrapped_text_disabled(no_trace_text(app));
    } else {
      compute_if_changed(app, lab, *trace);
      if (!lab.error.empty()) {
        wrapped_text_colored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), lab.error);
      } else {
        const Index batch = std::clamp<Index>(app.view.batch, 0, trace->dims.batch - 1);
        if (trace->dims.heads > 1) {
          ImGui::SetNextItemWidth(7.0f * font);
          ImGui::InputInt((std::string(app.tr("linear_lab.head")) + "###linear_head").c_str(), &lab.head);
        }
        lab.head = std::clamp(lab.head, 0, static_cast<int>(trace->dims.heads) - 1);
        attention_matrices(app, lab, *trace, batch);
        ImGui::Separator();
        outputs(app, lab, *trace, batch);
      }
      ImGui::Separator();
      costs(app, *trace);
      cost_plot(app, *trace);
    }
  }
  ImGui::End();
}

}  // namespace al::gui
