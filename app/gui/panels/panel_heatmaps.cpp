// The matrices of the current step: what goes in (for one head) and what comes
// out (every head side by side, plus their average).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "model/stage_heads.hpp"
#include "teaching/explain.hpp"
#include "widgets/heatmap_rows.hpp"
#include "widgets/heatmap_widget.hpp"
#include "panels/panels.hpp"
#include "state/view_stages.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

struct StepViews {
  const Trace& trace;
  const Session& session;
  Index batch;
  Index heads;
};

const char* stage_symbol(Stage stage) {
  switch (stage) {
    case Stage::Q: return "Q";
    case Stage::K: return "K";
    case Stage::V: return "V";
    case Stage::Scores: return "S = QKᵀ";
    case Stage::Scaled: return "S′";  // + this session's scaling, scaled_scores_symbol()
    case Stage::Masked: return "S″";  // + a translated "(masked)"
    case Stage::Weights: return "α = softmax(S″)";
    case Stage::Dropped: return "α′ = dropout(α)";
    case Stage::Context: return "α′·V";
    case Stage::Concat:
    case Stage::Output: break;  // words, in the reader's language: stage_title()
    case Stage::XPos: return "X + PE";
    case Stage::XKvPos: return "X_kv + PE";
    case Stage::QRot: return "Q_rot";
    case Stage::KRot: return "K_rot";
    case Stage::Biased: return "B = S′ − m·|i−j|";
  }
  return "";
}

// The stage's own letter in ∂L/∂·.
const char* gradient_symbol(Stage stage) {
  switch (stage) {
    case Stage::Scores: return "S";
    case Stage::Scaled: return "S′";
    case Stage::Masked: return "S″";
    case Stage::Weights: return "α";
    case Stage::Dropped: return "α′";
    case Stage::Context: return "C";
    default: return stage_symbol(stage);
  }
}

// The heatmap's title: the stage's symbol (α·V without dropout, as the step's formula), or for
// the whole-stage results its translated name.
std::string stage_title(const AppState& app, Stage stage) {
  if (stage == Stage::Concat || stage == Stage::Output) return app.tr(std::string("heatmap.title.") + stage_name(stage));
  if (stage == Stage::Context && !app.model.session().config.dropout.active()) return "α·V";
  return stage_symbol(stage);
}

bool is_per_head(Stage stage) { return stage_is_per_head(stage); }
bool is_key_by_key(Stage stage) {
  return stage == Stage::Scores || stage == Stage::Scaled || stage == Stage::Biased || stage == Stage::Masked ||
         stage == Stage::Weights || stage == Stage::Dropped;
}

// The heads' average is an attention pattern only over the keys (a query's mean weight on a
// key): Q, K, V, their rotations and α·V hold each head's own d_k features, whose mean over
// heads no model computes, so those rows show the heads alone.
bool has_head_average(Stage stage) { return is_key_by_key(stage); }

// The ranges DerivedCache's symmetric_range / probability_range give, from the
// per-matrix maxima the core computed with the trace (on the worker thread for
// big sessions), so a new trace costs the UI thread no rescan of (n, n) stages.
ValueRange symmetric_range_of(const StageSummary& summary, Index first, Index count) {
  float largest = 0.0f;
  bool any_finite = false;  // a matrix's largest value is -inf when it has no finite one
  for (Index k = first; k < first + count; ++k) {
    largest = std::max(largest, summary.max_abs[static_cast<size_t>(k)]);
    any_finite = any_finite || summary.max_value[static_cast<size_t>(k)] > -std::numeric_limits<float>::infinity();
  }
  if (largest == 0.0f) largest = 1.0f;  // an all-zero matrix still gets a readable bar
  return ValueRange{-largest, largest, any_finite};
}
ValueRange probability_range_of(const StageSummary& summary, Index first, Index count, bool stretched) {
  float largest = -std::numeric_limits<float>::infinity();
  for (Index k = first; k < first + count; ++k) largest = std::max(largest, summary.max_value[static_cast<size_t>(k)]);
  return probability_range_from(largest, stretched);
}

class HeatmapBuilder {
 public:
  HeatmapBuilder(AppState& app, const Trace& trace)
      : app_(app), trace_(trace), session_(app.model.session()) {
    batch_ = std::clamp<Index>(app.view.batch, 0, std::max<Index>(trace.dims.batch - 1, 0));
    heads_ = trace.dims.heads;
    const bool cross = session_.config.attention == AttentionKind::Cross;
    query_tokens_ = &session_.tokens;
    key_tokens_ = cross ? &session_.tokens_kv : &session_.tokens;
    if (trace.mask) mask_ = matrix_of(trace.mask, batch_);
  }

  Index heads() const { return heads_; }

  // The title of head `head` of `stage`: "head 2", or for K/V stages with
  // grouped-query attention the query heads that share it ("K/V head 0 · q heads 0–3").
  std::string head_label(Stage stage, Index head) const {
    const Dims& d = trace_.dims;
    if (!stage_is_kv(stage) || stage_heads(d, stage) == d.heads)
      return app_.i18n.format("heatmap.head", {{"n", std::to_string(head)}});
    const Index first = head * d.group(), last = first + d.group() - 1;
    return app_.i18n.format(first == last ? "heatmap.kv_head_one" : "heatmap.kv_head",
                            {{"n", std::to_string(head)}, {"first", std::to_string(first)}, {"last", std::to_string(last)}});
  }

  // One head of a trace stage (head -1: the average over heads); for K, V and k_rot a K/V head.
  HeatmapSpec stage(Stage stage, Index head) {
    HeatmapSpec spec;
    if (!trace_.has(stage)) return spec;  // an option that is off: no matrix, the row drops it
    const TensorPtr& tensor = trace_.stage_ptr(stage);
    const StageSummary* summary = trace_.summary(stage);  // null: derive here (and cache)
    const Index heads = stage_heads(trace_.dims, stage);  // K/V heads for k, v, k_rot
    std::string suffix;
    if (!is_per_head(stage)) {
      spec.values = matrix_of(tensor, batch_);
    } else if (head < 0) {
      spec.values = summary ? matrix_of(summary->head_mean, batch_) : app_.derived.head_average(tensor, batch_, heads);
      if (summary) with_peaks(spec.values, summary->mean_peaks, batch_, summary->peak_texels);
      suffix = app_.tr("heatmap.average");
    } else {
      spec.values = matrix_of(tensor, batch_ * heads + head);
      if (summary) with_peaks(spec.values, summary->peaks, batch_ * heads + head, summary->peak_texels);
      suffix = head_label(stage, head);
    }
    spec.name = std::string(stage_name(stage));
    if (is_per_head(stage)) spec.name += head < 0 ? ".avg" : ".h" + std::to_string(head);
    // The mask acts on S′, or with ALiBi on the biased scores B.
    spec.title = stage == Stage::Masked   ? std::string(!trace_.alibi_slopes.empty() ? "S″ = B " : "S″ = S′ ") +
                                              app_.tr("heatmap.masked_suffix")
                 : stage == Stage::Scaled ? "S′ = " + scaled_scores_symbol(session_, "S")
                                          : stage_title(app_, stage);
    if (!suffix.empty()) spec.title += "  " + suffix;
    spec.row_labels = stage_rows_are_keys(stage) ? key_tokens_ : query_tokens_;
    if (is_key_by_key(stage)) spec.col_labels = key_tokens_;
    const Index first = is_per_head(stage) ? batch_ * heads : batch_;
    const Index count = is_per_head(stage) ? heads : 1;
    if (stage == Stage::Weights || stage == Stage::Dropped) {
      const bool stretched = app_.view.stretch_weights;
      ValueRange range = summary ? probability_range_of(*summary, first, count, stretched)
                                 : app_.derived.probability_range(tensor, first, count, stretched);
      spec.style = {Colormap::Sequential, range.low, range.high};
      spec.no_finite_values = !range.any_finite;
    } else {
      const bool masked_cells = stage == Stage::Masked;
      // The core's Masked summary leaves masked cells out too.
      ValueRange range = summary ? symmetric_range_of(*summary, first, count)
                                 : app_.derived.symmetric_range(tensor, first, count,
                                                                masked_cells && mask_.valid() ? &mask_ : nullptr);
      spec.style = {Colormap::Diverging, range.low, range.high};
      spec.no_finite_values = !range.any_finite;
    }
    // Hatched where masked: the mask step's result and what follows it.
    if (stage == Stage::Masked || stage == Stage::Weights || stage == Stage::Dropped) spec.mask = mask_;
    if (stage == Stage::Dropped && head >= 0 && tensor != trace_.stage_ptr(Stage::Weights))
      spec.before_dropout = matrix_of(trace_.stage_ptr(Stage::Weights), batch_ * heads_ + head);
    return spec;
  }

  // dL/d(stage) of one head (or of the whole stage for concat and output).
  HeatmapSpec gradient(const Gradients& grads, Stage stage, Index head) {
    HeatmapSpec spec;
    const TensorPtr& tensor = grads.stages[static_cast<int>(stage)];
    if (!tensor) return spec;
    const bool per_head = is_per_head(stage);
    const Index heads = stage_heads(trace_.dims, stage);  // K/V heads for k, v, k_rot
    spec.values = matrix_of(tensor, per_head ? batch_ * heads + head : batch_);
    spec.name = "grad." + std::string(stage_name(stage)) + (per_head ? ".h" + std::to_string(head) : "");
    spec.title = "∂L/∂" + (per_head ? std::string(gradient_symbol(stage)) : stage_title(app_, stage));
    if (per_head) spec.title += "  " + head_label(stage, head);
    spec.row_labels = stage_rows_are_keys(stage) ? key_tokens_ : query_tokens_;
    if (is_key_by_key(stage)) spec.col_labels = key_tokens_;
    // One colour scale for all heads of the stage, symmetric about 0.
    const ValueRange range = app_.derived.symmetric_range(tensor, per_head ? batch_ * heads : batch_,
                                                          per_head ? heads : 1, nullptr);
    spec.style = {Colormap::Diverging, range.low, range.high};
    if (is_key_by_key(stage) && stage != Stage::Scores) spec.mask = mask_;
    return spec;
  }

  // dL/d(input) of batch item `batch` for x, x_q, x_kv, q, k, v.
  HeatmapSpec input_gradient(const NamedGradient& g) {
    HeatmapSpec spec;
    spec.values = matrix_of(g.gradient, batch_);
    spec.name = "grad.input." + g.name;
    const bool key_side = g.name == "x_kv" || g.name == "k" || g.name == "v";
    std::string symbol = g.name == "x" ? "X" : g.name == "x_q" ? "X_q" : g.name == "x_kv" ? "X_kv" : g.name;
    if (symbol.size() == 1) symbol[0] = static_cast<char>(std::toupper(symbol[0]));
    spec.title = "∂L/∂" + symbol;
    spec.row_labels = key_side ? key_tokens_ : query_tokens_;
    const ValueRange range = app_.derived.symmetric_range(g.gradient, batch_, 1, nullptr);
    spec.style = {Colormap::Diverging, range.low, range.high};
    return spec;
  }

  // A session input (the k-th trailing matrix), optionally a column slice.
  HeatmapSpec input(InputId id, const std::string& title, Index k, Index first_col = -1,
                    Index col_count = 0) {
    HeatmapSpec spec;
    TensorPtr tensor = al::input(session_, id);
    spec.values = matrix_of(tensor, k);
    if (first_col >= 0) spec.values = column_slice(spec.values, first_col, col_count);
    spec.name = std::string("input.") + input_name(id);
    spec.title = title;
    if (id == InputId::X || id == InputId::Q) spec.row_labels = query_tokens_;
    if (id == InputId::XKv || id == InputId::K || id == InputId::V) spec.row_labels = key_tokens_;
    if (tensor) {
      ValueRange range = app_.derived.symmetric_range(tensor, k, 1, nullptr);
      spec.style = {Colormap::Diverging, range.low, range.high};
    }
    return spec;
  }

  HeatmapSpec mask() {
    HeatmapSpec spec;
    spec.values = mask_;
    spec.name = "mask";
    spec.title = app_.tr("heatmap.mask");
    spec.row_labels = query_tokens_;
    spec.col_labels = key_tokens_;
    spec.style = {Colormap::Mask, 0.0f, 1.0f};
    return spec;
  }

  // Query head `head`'s columns of W_Q (d_model, d_model), or of W_K / W_V
  // (d_model, h_kv·d_k) the columns of the K/V head it reads; in a fused W_qkv
  // (d_model, d_model + 2·h_kv·d_k) the same columns of block `block` (0 = Q, 1 = K, 2 = V).
  HeatmapSpec weight_slice(InputId separate, int block, const char* name, Index head) {
    const Dims& d = trace_.dims;
    const Index d_k = d.d_k;
    const Stage stage = block == 0 ? Stage::Q : block == 1 ? Stage::K : Stage::V;
    const Index own = block == 0 ? head : d.kv_head(head);
    const std::string title = std::string(name) + "[:, " + head_label(stage, own) + "]";
    const Index kv_width = stage_heads(d, Stage::K) * d_k;
    const Index begin = block == 0 ? 0 : block == 1 ? d.d_model : d.d_model + kv_width;
    if (session_.weights.fused()) return input(InputId::WQkv, title, 0, begin + own * d_k, d_k);
    return input(separate, title, 0, own * d_k, d_k);
  }

  Index batch() const { return batch_; }

 private:
  AppState& app_;
  const Trace& trace_;
  const Session& session_;
  Index batch_ = 0, heads_ = 1;
  const std::vector<std::string>* query_tokens_;
  const std::vector<std::string>* key_tokens_;
  MatrixView mask_;
};

// Over many keys every weight is small (about 1/n), so on the 0-to-1 scale all heads look one flat
// colour; stretched, the colours end at the largest weight shown and each head's pattern shows.
void draw_weights_scale(AppState& app) {
  if (ImGui::Checkbox((std::string(app.tr("heatmap.stretch_weights")) + "###stretch_weights").c_str(),
                      &app.view.stretch_weights))
    app.keep_drawing = true;
  app.widgets.add_last_item("heatmap.stretch_weights");
}

// The one heatmap the learner enlarged, filling the panel, with the way back.
void draw_enlarged(AppState& app, HeatmapSpec spec) {
  const float font = ImGui::GetFontSize();
  const bool escape = !ImGui::GetIO().WantTextInput && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false);
  const bool back = ImGui::Button(app.tr("zoom.back"));
  app.widgets.add_last_item("zoom.back");
  if (back || escape) {
    app.view.enlarged.clear();
    app.keep_drawing = true;
    return;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("%s", app.tr("zoom.hint"));
  const ImVec2 available = ImGui::GetContentRegionAvail();
  spec.width = available.x;
  spec.max_height = std::max(4.0f * font, available.y - 5.5f * font);  // title, extent line, colour bar
  spec.max_cell = std::max(available.x, available.y);
  spec.enlarged = true;
  heatmap_widget(app, spec);
}

}  // namespace

void draw_heatmaps(AppState& app) {
  auto trace_ptr = app.model.trace();
  // Too large to keep whole: the reason, and the way to see this view anyway.
  if (app.model.error() && app.model.error()->code == ErrorCode::TooLarge) {
    wrapped_text_colored(ImVec4(1.0f, 0.35f, 0.35f, 1.0f), app.i18n.error_message(*app.model.error()));
    app.widgets.add_last_item("heatmaps.too_large");
    draw_keep_offer(app, "heatmaps");
  }
  if (!trace_ptr) {
    ImGui::TextWrapped("%s", no_trace_text(app));
    app.widgets.add_last_item(awaits_trace(app) ? "heatmaps.computing" : "heatmaps.no_trace");
    return;
  }
  const Trace& trace = *trace_ptr;
  const StageSet shown = stages_step_shows(app.model.session(), app.view.step);
  // This step's stages that the trace did not keep: said so, with the way to keep them.
  draw_not_kept(app, shown, "heatmaps");
  // The next traces come with this step's stages reduced for their heatmaps (TextureCache::screen).
  app.model.set_peak_stages(shown);
  // Not over an enlarged heatmap, which keeps the whole panel (it follows the choice made here).
  const bool shows_weights = shown[static_cast<size_t>(Stage::Weights)] || shown[static_cast<size_t>(Stage::Dropped)];
  if (shows_weights && app.view.enlarged.empty()) draw_weights_scale(app);
  HeatmapBuilder build(app, trace);
  const Session& session = app.model.session();
  const float font = ImGui::GetFontSize();
  const Index heads = build.heads();
  app.view.input_head = std::clamp<Index>(app.view.input_head, 0, std::max<Index>(heads - 1, 0));
  const Index hd = app.view.input_head;
  const bool direct = session.config.mode == InputMode::Direct;
  // Cross attention's query-side input is X_q, as the step formulas write it.
  const char* x_name = session.config.attention == AttentionKind::Cross ? "X_q" : "X";
  const float region = ImGui::GetContentRegionAvail().y;
  const float tall = std::max(8.0f * font, 0.42f * region);
  const float short_height = std::max(6.0f * font, 0.28f * region);
  // The gradient view: each result with its gradient ∂L/∂(result) beside it.
  const Gradients* grads = current_gradients(app);

  // Every head of a per-head stage, plus the average where it is an attention pattern; or the one asked for.
  // With the gradient view on, each head's gradient follows it (and the
  // average, which no loss reads, makes room for them).
  // K, V and k_rot have the K/V heads: with grouped-query attention fewer, each labelled
  // with the query heads that share it; "only head n" shows the K/V head query head n reads.
  auto all_heads = [&](Stage stage) {
    std::vector<HeatmapSpec> specs;
    if (!trace.has(stage)) return specs;
    const Index count = stage_heads(trace.dims, stage);
    auto add = [&](Index h) {
      specs.push_back(build.stage(stage, h));
      if (grads) specs.push_back(build.gradient(*grads, stage, h));
    };
    if (app.view.only_head >= 0 && app.view.only_head < heads) {
      add(stage_is_kv(stage) ? trace.dims.kv_head(app.view.only_head) : app.view.only_head);
      return specs;
    }
    for (Index h = 0; h < count; ++h) add(h);
    if (count > 1 && !grads && has_head_average(stage)) specs.push_back(build.stage(stage, -1));
    return specs;
  };
  const Index kv_hd = trace.dims.kv_head(hd);  // the K/V head the input head reads
  // A stage that is one matrix (concat, output), and its gradient.
  auto whole = [&](Stage stage) {
    std::vector<HeatmapSpec> specs = {build.stage(stage, 0)};
    if (grads) specs.push_back(build.gradient(*grads, stage, 0));
    return specs;
  };
  // The inputs at step X, each followed by its gradient.
  auto with_input_gradients = [&](std::vector<HeatmapSpec> specs) {
    if (!grads) return specs;
    std::vector<HeatmapSpec> out;
    for (HeatmapSpec& spec : specs) {
      const std::string name = spec.name.substr(spec.name.find('.') + 1);  // "input.x" -> "x"
      out.push_back(std::move(spec));
      for (const NamedGradient& g : grads->inputs)
        if (g.name == name) out.push_back(build.input_gradient(g));
    }
    return out;
  };
  std::vector<HeatmapRow> rows;
  auto add_row = [&rows](const char* label, std::vector<HeatmapSpec> specs, float max_height, bool select_head,
                         Index head_group = 1) {
    specs.erase(std::remove_if(specs.begin(), specs.end(), [](const HeatmapSpec& s) { return !s.values.valid(); }),
                specs.end());
    rows.push_back(HeatmapRow{label, std::move(specs), max_height, select_head, head_group});
  };
  const Index group = trace.dims.group();
  // "Click a head below to switch" only where there is another head to click.
  const std::string inputs_label =
      app.i18n.format(heads > 1 ? "heatmap.inputs_of_head" : "heatmap.inputs_of_only_head", {{"n", std::to_string(hd)}});
  // The label over a row of all_heads(stage) says what it shows: the heads' average only where
  // all_heads adds it, and no "every head" over one head or one whole matrix.
  auto heads_label = [&](Stage stage) {
    const bool one = stage_heads(trace.dims, stage) == 1 || (app.view.only_head >= 0 && app.view.only_head < heads);
    return app.tr(one ? "heatmap.result" : grads || !has_head_average(stage) ? "heatmap.outputs_heads" : "heatmap.outputs");
  };

  switch (app.view.step) {
    case Step::X:
      if (direct) {
        add_row(app.tr("heatmap.inputs"),
                with_input_gradients({build.input(InputId::Q, "Q", build.batch()),
                                      build.input(InputId::K, "K", build.batch()),
                                      build.input(InputId::V, "V", build.batch())}), tall, false);
      } else {
        std::vector<HeatmapSpec> specs = {build.input(InputId::X, x_name, build.batch())};
        if (session.config.attention == AttentionKind::Cross)
          specs.push_back(build.input(InputId::XKv, "X_kv", build.batch()));
        add_row(app.tr("heatmap.inputs"), with_input_gradients(specs), tall, false);
      }
      break;
    case Step::Qkv:
      if (!direct) {
        // With sinusoidal positions the projections read X + PE (the positions step's result).
        const bool positioned = trace.has(Stage::XPos);
        std::vector<HeatmapSpec> specs = {positioned ? build.stage(Stage::XPos, 0)
                                                     : build.input(InputId::X, x_name, build.batch())};
        if (session.config.attention == AttentionKind::Cross)  // K and V are projected from X_kv
          specs.push_back(positioned ? build.stage(Stage::XKvPos, 0) : build.input(InputId::XKv, "X_kv", build.batch()));
        specs.push_back(build.weight_slice(InputId::WQ, 0, "W_Q", hd));
        specs.push_back(build.weight_slice(InputId::WK, 1, "W_K", hd));
        specs.push_back(build.weight_slice(InputId::WV, 2, "W_V", hd));
        add_row(inputs_label.c_str(), specs, short_height, false);
      }
      add_row(heads_label(Stage::Q), all_heads(Stage::Q), short_height, true);
      add_row("", all_heads(Stage::K), short_height, true, group);
      add_row("", all_heads(Stage::V), short_height, true, group);
      break;
    case Step::Positions: {
      std::vector<HeatmapSpec> inputs = {build.input(InputId::X, x_name, build.batch())};
      std::vector<HeatmapSpec> outputs = {build.stage(Stage::XPos, 0)};
      if (session.config.attention == AttentionKind::Cross) {
        inputs.push_back(build.input(InputId::XKv, "X_kv", build.batch()));
        outputs.push_back(build.stage(Stage::XKvPos, 0));
      }
      add_row(app.tr("heatmap.inputs"), inputs, short_height, false);
      add_row(app.tr("heatmap.result"), outputs, tall, false);  // one matrix, not one per head
      break;
    }
    case Step::Rope:
      add_row(inputs_label.c_str(), {build.stage(Stage::Q, hd), build.stage(Stage::K, kv_hd)}, short_height, false);
      add_row(heads_label(Stage::QRot), all_heads(Stage::QRot), short_height, true);
      add_row("", all_heads(Stage::KRot), short_height, true, group);
      break;
    case Step::Scores:
      add_row(inputs_label.c_str(), {build.stage(trace.scored_q(), hd), build.stage(trace.scored_k(), kv_hd)},
                  short_height, false);
      add_row(heads_label(Stage::Scores), all_heads(Stage::Scores), tall, true);
      break;
    case Step::Alibi:
      add_row(inputs_label.c_str(), {build.stage(Stage::Scaled, hd)}, short_height, false);
      add_row(heads_label(Stage::Biased), all_heads(Stage::Biased), tall, true);
      break;
    case Step::Scaled:
      add_row(inputs_label.c_str(), {build.stage(Stage::Scores, hd)}, short_height, false);
      add_row(heads_label(Stage::Scaled), all_heads(Stage::Scaled), tall, true);
      break;
    case Step::Masked:
      add_row(inputs_label.c_str(), {build.stage(trace.before_mask(), hd), build.mask()},
                  short_height, false);
      add_row(heads_label(Stage::Masked), all_heads(Stage::Masked), tall, true);
      break;
    case Step::Weights:
      add_row(inputs_label.c_str(), {build.stage(Stage::Masked, hd)}, short_height, false);
      add_row(heads_label(Stage::Weights), all_heads(Stage::Weights), tall, true);
      break;
    case Step::Dropped:
      add_row(inputs_label.c_str(), {build.stage(Stage::Weights, hd)}, short_height, false);
      add_row(heads_label(Stage::Dropped), all_heads(Stage::Dropped), tall, true);
      break;
    case Step::Context: {
      add_row(inputs_label.c_str(), {build.stage(context_weights(session), hd), build.stage(Stage::V, kv_hd)},
              short_height, false);
      add_row(heads_label(Stage::Context), all_heads(Stage::Context), tall, true);
      break;
    }
    case Step::Concat: {
      std::vector<HeatmapSpec> specs;
      for (Index h = 0; h < heads; ++h) specs.push_back(build.stage(Stage::Context, h));
      add_row(app.tr("heatmap.inputs"), specs, short_height, true);
      add_row(app.tr("heatmap.result"), whole(Stage::Concat), tall, false);
      break;
    }
    case Step::WO:
      add_row(app.tr("heatmap.inputs"),
                  {build.stage(Stage::Concat, 0), build.input(InputId::WO, "W_O", 0)}, short_height, false);
      add_row(app.tr("heatmap.result"), whole(Stage::Output), tall, false);
      break;
    case Step::Output:
      add_row(app.tr("heatmap.inputs"),
                  {direct ? build.input(InputId::Q, "Q", build.batch())
                          : build.input(InputId::X, x_name, build.batch()),
                   build.stage(Stage::Weights, heads > 1 ? -1 : 0)}, short_height, false);  // the average of several
      add_row(app.tr("heatmap.result"), whole(Stage::Output), tall, false);
      break;
  }

  // A quiz hides values by heatmap and cell: an enlarged, zoomed copy must not show them.
  if (!app.labs.quiz.covered_heatmaps.empty()) app.view.enlarged.clear();
  if (!app.view.enlarged.empty()) {
    for (const HeatmapRow& row : rows)
      for (const HeatmapSpec& spec : row.specs)
        if (spec.name == app.view.enlarged) return draw_enlarged(app, spec);
    app.view.enlarged.clear();  // this step does not show it
  }
  draw_heatmap_rows(app, std::move(rows), region);
}

}  // namespace al::gui
