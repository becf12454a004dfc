// KV-cache decoding: the session run token by token as a decoder runs it at
// inference (numerics/decode.hpp). At step t the new token's q meets the cache
// of keys and values (growing, or rolling with a sliding window); the window
// shows q, the cache, the weights over it, the output row, and the cache's
// memory per token beside what plain multi-head attention would need.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "panels/panels.hpp"
#include "widgets/heatmap_widget.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

// Every step keeps its own copy of the cache: B · 2·H_kv·d_k floats per cached
// token, L·(L+1)/2 cached tokens over the steps (fewer with a window). Seed 000's
// 16 x 100 x 512 made causal would need 330 MB and seconds on the UI thread.
constexpr double kMaxDecodeBytes = 64.0 * (1 << 20);

double decode_bytes(const Session& s) {
  const double len = static_cast<double>(s.len_q());
  const double cached = s.config.mask.window > 0 ? len * static_cast<double>(s.config.mask.window) : len * (len + 1) / 2;
  return 4.0 * static_cast<double>(std::max<Index>(1, s.batch())) * 2.0 *
         static_cast<double>(kv_input_width(s.config)) * cached;
}

void compute_if_changed(AppState& app, DecodeLabState& lab) {
  if (lab.revision == app.model.revision()) return;
  lab.revision = app.model.revision();
  lab.run.reset();
  lab.error.clear();
  lab.compared_step = -1;
  const Session& session = app.model.session();
  if (decode_bytes(session) > kMaxDecodeBytes) {
    lab.error = app.i18n.format("labs.decode.too_big", {{"mb", std::to_string(static_cast<long long>(decode_bytes(session) / 1e6))}});
    return;
  }
  Result<DecodeRun> run = decode(session);
  if (!run) {
    // decode()'s reasons, in the learner's language where the session tells which.
    if (session.config.attention == AttentionKind::Cross) lab.error = app.tr("labs.decode.not_cross");
    else if (!session.config.mask.causal) lab.error = app.tr("labs.decode.not_causal");
    else lab.error = app.i18n.error_message(run.error());
    return;
  }
  lab.run = std::make_shared<const DecodeRun>(std::move(*run));
}

// Rows [first_row, first_row + rows) of a tensor seen as (…, cols), owned by the run.
MatrixView rows_of(const DecodeLabState& lab, const Tensor& t, Index first_row, Index rows, const std::string& key) {
  MatrixView view;
  view.owner = lab.run;
  view.cols = t.cols();
  view.data = t.data.data() + first_row * view.cols;
  view.rows = rows;
  view.row_stride = view.cols;
  view.key = "decode/" + std::to_string(lab.revision) + "/" + std::to_string(lab.step) + "/" + key;
  return view;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

void heatmap(AppState& app, const std::string& name, const std::string& title, MatrixView values, bool weights,
             const std::vector<std::string>* row_labels, const std::vector<std::string>* col_labels, float width) {
  HeatmapSpec spec;
  spec.name = "labs.decode." + name;
  spec.title = title;
  float extent = 1e-6f;
  for (Index r = 0; r < values.rows; ++r)
    for (Index c = 0; c < values.cols; ++c) extent = std::max(extent, std::abs(values.at(r, c)));
  spec.style = weights ? HeatmapStyle{Colormap::Sequential, 0.0f, 1.0f} : HeatmapStyle{Colormap::Diverging, -extent, extent};
  spec.values = std::move(values);
  spec.row_labels = row_labels;
  spec.col_labels = col_labels;
  spec.width = width;
  spec.max_height = 14.0f * ImGui::GetFontSize();
  spec.max_cell = 2.2f * ImGui::GetFontSize();
  spec.pin_on_click = false;
  heatmap_widget(app, spec);
}

// This step against row t of the full trace: the largest differences of the weights (every batch
// item whose row sees a key, every head, at the cached positions) and of the output row. Null when
// there is nothing to compare. A row that sees no key is left out: with a finite fill the full pass
// spreads its weights over future keys too, which a decoder never has.
std::optional<std::pair<double, double>> differences_from_trace(const Trace& trace, const DecodeStep& step,
                                                                const Dims& d) {
  if (!trace.has(Stage::Weights) || !trace.has(Stage::Output)) return std::nullopt;
  const Dims& full = trace.dims;
  if (full.batch != d.batch || full.heads != d.heads || full.len_q != d.len_q || full.d_model != d.d_model)
    return std::nullopt;
  const Tensor& weights = trace.stage(Stage::Weights);  // (B, h, Lq, Lk)
  const Tensor& output = trace.stage(Stage::Output);    // (B, Lq, d_model)
  const Index n = static_cast<Index>(step.positions.size());
  double weight_diff = 0, output_diff = 0;
  bool compared = false;
  for (Index b = 0; b < d.batch; ++b) {
    if (step.fully_masked[static_cast<size_t>(b)]) continue;
    compared = true;
    for (Index h = 0; h < d.heads; ++h)
      for (Index j = 0; j < n; ++j) {
        const float full_weight = weights.at({b, h, step.t, step.positions[static_cast<size_t>(j)]});
        const float stepped = step.weights.data[static_cast<size_t>((b * d.heads + h) * n + j)];
        weight_diff = std::max(weight_diff, std::abs(static_cast<double>(stepped) - full_weight));
      }
    for (Index c = 0; c < d.d_model; ++c) {
      const float stepped = step.output.data[static_cast<size_t>(b * d.d_model + c)];
      output_diff = std::max(output_diff, std::abs(static_cast<double>(stepped) - output.at({b, step.t, c})));
    }
  }
  if (!compared) return std::nullopt;
  return std::make_pair(weight_diff, output_diff);
}

// The differences for the step on screen, from the trace the model holds when it is this session's
// own (not one still being replaced); recomputed only when the trace, the run (compute_if_changed
// clears compared_step) or the step changes, not every frame.
const std::optional<std::pair<double, double>>& cached_differences(const AppState& app, DecodeLabState& lab,
                                                                   const DecodeStep& step, const Dims& d) {
  static const std::optional<std::pair<double, double>> kNone;
  const std::shared_ptr<const Trace> trace = app.model.trace();
  if (!trace || app.model.computing() || app.model.error()) return kNone;
  if (lab.compared_step != lab.step || lab.compared_trace.lock() != trace) {
    lab.differences = differences_from_trace(*trace, step, d);
    lab.compared_trace = trace;
    lab.compared_step = lab.step;
  }
  return lab.differences;
}

// A row that sees no key (padding hides every cached one; the shown batch item's if it is one):
// what its weights are, and why it is not the full trace's row with a finite fill.
void draw_blind_row(AppState& app, const DecodeStep& step, Index shown_batch, const Dims& d) {
  Index b = shown_batch;
  if (!step.fully_masked[static_cast<size_t>(b)])
    b = std::find(step.fully_masked.begin(), step.fully_masked.end(), 1) - step.fully_masked.begin();
  const double fill = app.model.trace_session().config.mask_fill;
  const char* key = std::isinf(fill) && fill < 0 ? "labs.decode.no_key_nan" : "labs.decode.no_key_uniform";
  wrapped_text(app.i18n.format(key, {{"t", std::to_string(step.t)},
                                     {"b", std::to_string(b)},
                                     {"n", std::to_string(step.positions.size())},
                                     {"L", std::to_string(d.len_kv)}}));
  app.widgets.add_last_item("labs.decode.no_key");
  app.widgets.set_fact("labs.decode.no_key", key);
}

// The window's size in font units while it decodes; a refusal fits its text's height.
const ImVec2 kWindowFonts(60.0f, 50.0f);

void draw_body(AppState& app, DecodeLabState& lab) {
  const float font = ImGui::GetFontSize();
  compute_if_changed(app, lab);
  // A refusal's window is as tall as its text (AlwaysAutoResize), so the text wraps at a fixed
  // width: wrapped at the window's edge it would narrow the window frame after frame.
  const float text_width = lab.run ? 0.0f : lab_text_width(kWindowFonts);
  wrapped_text(app.tr("labs.decode.intro"), text_width);
  if (!lab.run) {
    wrapped_text_colored(kBadText, app.i18n.format("labs.decode.refused", {{"reason", lab.error}}), text_width);
    app.widgets.add_last_item("labs.decode.refused");
    app.widgets.set_fact("labs.decode.refused", "yes");
    const Session& session = app.model.session();
    if (!session.config.mask.causal && session.config.attention != AttentionKind::Cross &&
        decode_bytes(session) <= kMaxDecodeBytes) {
      // The one-click way out, as the mask tab offers for a cell the causal mask hides; not
      // for a session too big to step, which a causal mask would not make decodable.
      if (ImGui::Button((std::string(app.tr("labs.decode.turn_causal_on")) + "###decode_causal_on").c_str()))
        app.edit(with_causal(session, true), "edit.causal", "mask");
      app.widgets.add_last_item("labs.decode.turn_causal_on");
    }
    return;
  }
  const DecodeRun& run = *lab.run;
  const Dims& d = run.dims;
  if (run.steps.empty()) return;
  const int last = static_cast<int>(run.steps.size()) - 1;
  lab.step = std::clamp(lab.step, 0, last);
  lab.head = std::clamp(lab.head, 0, static_cast<int>(d.heads) - 1);

  // Step and head.
  if (ImGui::ArrowButton("##decode_prev", ImGuiDir_Left)) lab.step = std::max(0, lab.step - 1);
  app.widgets.add_last_item("labs.decode.prev");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(14.0f * font);
  ImGui::SliderInt((std::string(app.tr("labs.decode.step")) + "###decode_step").c_str(), &lab.step, 0, last);
  app.widgets.add_last_item("labs.decode.step");
  ImGui::SameLine();
  if (ImGui::ArrowButton("##decode_next", ImGuiDir_Right)) lab.step = std::min(last, lab.step + 1);
  app.widgets.add_last_item("labs.decode.next");
  if (d.heads > 1) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(7.0f * font);
    if (ImGui::InputInt((std::string(app.tr("labs.decode.head")) + "###decode_head").c_str(), &lab.head))
      lab.head = std::clamp(lab.head, 0, static_cast<int>(d.heads) - 1);
    app.widgets.add_last_item("labs.decode.head");
  }
  const DecodeStep& step = run.steps[static_cast<size_t>(lab.step)];
  const Index b = std::clamp<Index>(app.view.batch, 0, d.batch - 1);
  const Index h = lab.head, g = d.kv_head(h);
  const Index n = static_cast<Index>(step.positions.size());

  // The cache: which positions it holds, and what it costs.
  const Session& session = app.model.trace_session();
  std::vector<std::string> labels, numbers;
  for (Index p : step.positions) {
    labels.push_back(axis_label(&session.tokens, p));
    numbers.push_back(std::to_string(p));
  }
  wrapped_text(app.i18n.format("labs.decode.cache", {{"t", std::to_string(step.t)},
                                                     {"n", std::to_string(n)},
                                                     {"positions", joined(numbers)}}));
  app.widgets.add_last_item("labs.decode.cache");
  if (d.group() > 1)
    wrapped_text_disabled(app.i18n.format("labs.decode.shared", {{"h", std::to_string(h)}, {"g", std::to_string(g)},
                                                                 {"group", std::to_string(d.group())}}));
  // Per token of one sequence; the cache holds n tokens of each of the B sequences.
  const Index cached = n * d.batch;
  wrapped_text(app.i18n.format(
      "labs.decode.memory",
      {{"bytes", std::to_string(run.cache_bytes_per_token)},
       {"kv_heads", std::to_string(d.kv_heads)},
       {"d_k", std::to_string(d.d_k)},
       {"mha_bytes", std::to_string(run.multi_head_bytes_per_token)},
       {"heads", std::to_string(d.heads)},
       {"n", std::to_string(n)},
       {"batch", std::to_string(d.batch)},
       {"total", std::to_string(run.cache_bytes_per_token * cached)},
       {"mha_total", std::to_string(run.multi_head_bytes_per_token * cached)}}));
  app.widgets.add_last_item("labs.decode.memory");
  app.widgets.set_fact("labs.decode.cache_total_bytes", std::to_string(run.cache_bytes_per_token * cached));
  wrapped_text_disabled(app.tr("labs.decode.why"));
  if (step.any_fully_masked()) draw_blind_row(app, step, b, d);
  if (const auto& diffs = cached_differences(app, lab, step, d)) {
    const char* key = step.any_fully_masked() ? "labs.decode.matches_seen" : "labs.decode.matches";
    wrapped_text(app.i18n.format(key, {{"t", std::to_string(step.t)},
                                       {"weights", lab_number(diffs->first)},
                                       {"output", lab_number(diffs->second)}}));
    app.widgets.add_last_item(key);
    app.widgets.set_fact("labs.decode.weight_diff", lab_number(diffs->first));
    app.widgets.set_fact("labs.decode.output_diff", lab_number(diffs->second));
  }

  // Facts for tests: this step's weights for the batch item and head shown.
  std::vector<std::string> weights;
  for (Index j = 0; j < n; ++j) weights.push_back(std::to_string(step.weights.data[static_cast<size_t>((b * d.heads + h) * n + j)]));
  app.widgets.set_fact("labs.decode.t", std::to_string(step.t));
  app.widgets.set_fact("labs.decode.positions", joined(numbers));
  app.widgets.set_fact("labs.decode.weights", joined(weights));
  app.widgets.set_fact("labs.decode.cache_bytes", std::to_string(run.cache_bytes_per_token));
  app.widgets.set_fact("labs.decode.multi_head_bytes", std::to_string(run.multi_head_bytes_per_token));

  // q · K_cacheᵀ → weights → weights · V_cache → output.
  const float width = ImGui::GetContentRegionAvail().x;
  const std::vector<std::string> query = {axis_label(&session.tokens, step.t)};
  const std::string head = std::to_string(h), kv = std::to_string(g);
  heatmap(app, "q", app.i18n.format("labs.decode.q", {{"h", head}}),
          rows_of(lab, step.q, b * d.heads + h, 1, "q/" + head), false, &query, nullptr, 0.45f * width);
  ImGui::SameLine(0.0f, font);
  heatmap(app, "weights", app.i18n.format("labs.decode.weights", {{"h", head}}),
          rows_of(lab, step.weights, b * d.heads + h, 1, "w/" + head), true, &query, &labels, 0.5f * width);
  heatmap(app, "k_cache", app.i18n.format("labs.decode.k_cache", {{"g", kv}}),
          rows_of(lab, step.k_cache, (b * d.kv_heads + g) * n, n, "k/" + kv), false, &labels, nullptr, 0.45f * width);
  ImGui::SameLine(0.0f, font);
  heatmap(app, "v_cache", app.i18n.format("labs.decode.v_cache", {{"g", kv}}),
          rows_of(lab, step.v_cache, (b * d.kv_heads + g) * n, n, "v/" + kv), false, &labels, nullptr, 0.5f * width);
  heatmap(app, "output", app.tr("labs.decode.output"), rows_of(lab, step.output, b, 1, "out"), false, &query,
          nullptr, width);
}

}  // namespace

void draw_decode_lab(AppState& app) {
  DecodeLabState& lab = app.labs.decode;
  bool visible = false;
  bool refused = false, restore_size = false;
  open_if_asked(app, "decode", &lab.open);  // opened by --open, its first frame is already fitted if it refuses
  if (lab.open) {  // closed, it keeps `fitted` for when it opens again on a session it decodes
    compute_if_changed(app, lab);
    refused = !lab.run;
    restore_size = lab.fitted && !refused;
    lab.fitted = refused;
  }
  if (!begin_lab_window(app, "decode", "labs.decode.title", &lab.open, kWindowFonts, &visible, false, refused,
                        restore_size))
    return;
  if (visible) draw_body(app, lab);
  ImGui::End();
}

}  // namespace al::gui
