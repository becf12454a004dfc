// "Explain this cell": the hovered (else the pinned) cell of any stage heatmap,
// with the real numbers that made it (core/teaching/explain.hpp), and outlines on the
// input rows/columns it came from. Also the View menu and --open/--pin.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "model/stage_heads.hpp"
#include "teaching/explain.hpp"
#include "io/session_io.hpp"
#include "panels/panels.hpp"
#include "widgets/text_wrap.hpp"
#include "widgets/floating_window.hpp"

namespace al::gui {

std::optional<CellAddress> cell_address_of(const CellRef& ref, Index batch) {
  const auto dot = ref.heatmap.find('.');
  const auto stage = stage_from_name(ref.heatmap.substr(0, dot));
  if (!stage) return std::nullopt;
  CellAddress cell{*stage, batch, 0, ref.row, ref.col};
  if (dot != std::string::npos) {
    const std::string head = ref.heatmap.substr(dot + 1);
    if (head == "avg") cell.head = -1;
    else if (head.size() > 1 && head[0] == 'h') cell.head = std::atoll(head.c_str() + 1);
    else return std::nullopt;
  }
  return cell;
}

namespace {

std::string num(double v) { return lab_number(v); }

// A sum written out, its grouped rest ("+ 5 smaller terms") in the app's language.
std::string sum_text(AppState& app, const TermSum& sum, const std::string& bias_symbol = "b") {
  return format_term_sum(sum, bias_symbol, app.tr("teach.explain.smaller_terms"));
}

// The heatmaps on screen (panel_heatmaps.cpp's names) that show a source line.
void add_highlights(AppState& app, const Explanation& e, const Dims& dims) {
  const Index d_k = dims.d_k;
  auto add = [&](const std::string& heatmap, bool is_row, Index index) {
    auto it = std::find_if(app.teaching.highlights.begin(), app.teaching.highlights.end(),
                           [&](const HeatmapHighlight& h) { return h.heatmap == heatmap; });
    if (it == app.teaching.highlights.end()) {
      app.teaching.highlights.push_back({heatmap, {}, {}});
      it = app.teaching.highlights.end() - 1;
    }
    (is_row ? it->rows : it->cols).push_back(index);
  };
  for (const SourceLine& s : e.sources) {
    if (s.matrix == "mask") {
      add("mask", s.is_row, s.index);
    } else if (stage_from_name(s.matrix) && s.head >= 0) {
      add(s.matrix + ".h" + std::to_string(s.head), s.is_row, s.index);
    } else if (stage_from_name(s.matrix) && !stage_is_per_head(*stage_from_name(s.matrix))) {  // x_pos, concat, output
      add(s.matrix, s.is_row, s.index);
    } else if (s.matrix == "concat" || s.matrix == "output") {
      add(s.matrix, s.is_row, s.index);
    } else if (s.matrix == "w_qkv" && e.fused_slice) {
      // The fused lab's W_qkv: the whole block that is this projection's W_Q, W_K or W_V.
      for (Index c = e.fused_slice->begin; c < e.fused_slice->end; ++c) add("labs.fused.W_qkv", false, c);
    } else if (!s.is_row && (s.matrix == "w_q" || s.matrix == "w_k" || s.matrix == "w_v")) {
      // The inputs row shows the input head's slice of W_Q, and of W_K/W_V the K/V head it reads.
      const Index own = s.matrix == "w_q" ? app.view.input_head : dims.kv_head(app.view.input_head);
      const Index local = s.index - own * d_k;
      if (local >= 0 && local < d_k) add("input." + s.matrix, false, local);
    } else {
      add("input." + s.matrix, s.is_row, s.index);  // x, x_kv, w_o, and direct-mode q/k/v
    }
  }
}

// The name a learner knows for a stage or input ("W_Q", "scaled scores S′"), not its internal one.
std::string learner_name(AppState& app, const std::string& matrix) {
  const bool cross = app.model.trace_session().config.attention == AttentionKind::Cross;
  return app.tr("teach.matrix." + (matrix == "x" && cross ? std::string("x_q") : matrix));
}

// Says in which order a sum's terms are listed: all in index order, or the largest first.
void term_order(AppState& app, const TermSum& sum) {
  if (sum.terms.empty()) return;
  wrapped_text_disabled(sum.capped() ? app.i18n.format("teach.explain.order_largest",
                                                       {{"n", std::to_string(sum.terms.size())},
                                                        {"total", std::to_string(sum.total_terms)}})
                                     : app.tr("teach.explain.order_index"));
}

std::string source_text(AppState& app, const SourceLine& s) {
  const char* what = app.tr(s.is_row ? "teach.explain.row" : "teach.explain.column");
  std::string text = app.i18n.format("teach.explain.source", {{"line", what}, {"index", std::to_string(s.index)},
                                                              {"matrix", learner_name(app, s.matrix)}});
  if (s.head >= 0) text += " " + app.i18n.format("heatmap.head", {{"n", std::to_string(s.head)}});
  return text;
}

// A formula line, in the accent colour so it stands out from the prose. Each line is also the
// fact explain.text, for the tests that read what a learner reads.
void formula(AppState& app, const std::string& text) {
  wrapped_text_colored(kFormulaColour, text);
  app.widgets.append_fact("explain.text", text);
}
void prose(AppState& app, const std::string& text) {
  wrapped_text(text);
  app.widgets.append_fact("explain.text", text);
}

void explain_body(AppState& app, const Explanation& e, bool dropout) {
  const CellAddress& c = e.cell;
  const Index i = c.row, j = c.col;
  switch (e.kind) {
    case ExplainKind::Given:
      prose(app, app.tr("teach.explain.given"));
      break;
    case ExplainKind::Projection:
      prose(app, app.tr(e.sum.has_bias ? "teach.explain.projection" : "teach.explain.projection_no_bias"));
      term_order(app, e.sum);
      formula(app, std::string(e.sum.has_bias ? "Σ_p x_ip · W[p, c] + b_c = " : "Σ_p x_ip · W[p, c] = ") +
                       sum_text(app, e.sum, "b_c"));
      if (e.fused_slice) {
        const FusedWeightSlice& f = *e.fused_slice;
        const char* weight = f.weight == InputId::WQ ? "W_Q" : f.weight == InputId::WK ? "W_K" : "W_V";
        prose(app, app.i18n.format("teach.explain.fused_slice",
                              {{"slice", "W_qkv[:, " + std::to_string(f.begin) + ":" + std::to_string(f.end) + "]"},
                               {"weight", weight},
                               {"column", "W_qkv[:, " + std::to_string(f.column) + "]"}}));
      }
      break;
    case ExplainKind::Score:
      prose(app, app.tr("teach.explain.score"));
      term_order(app, e.sum);
      formula(app, "q_" + std::to_string(i) + "·k_" + std::to_string(j) + " = " + sum_text(app, e.sum));
      break;
    case ExplainKind::Scaled:
      if (e.scale_mode == ScaleMode::SqrtDk) {
        prose(app, app.tr("teach.explain.scaled_sqrt"));
        formula(app, num(e.input) + " ÷ √" + std::to_string(e.d_k) + " = " + num(e.value));
      } else if (e.scale_mode == ScaleMode::Custom) {
        prose(app, app.tr("teach.explain.scaled_custom"));
        formula(app, num(e.input) + " × " + num(e.scale) + " = " + num(e.value));
      } else {
        prose(app, app.tr("teach.explain.scaled_none"));
        formula(app, num(e.input) + " = " + num(e.value));
      }
      break;
    case ExplainKind::Masked:
      if (!e.has_mask) prose(app, app.tr(e.biased ? "teach.explain.no_mask_biased" : "teach.explain.no_mask"));
      else if (!e.masked) prose(app, app.tr("teach.explain.attends"));
      else prose(app, app.i18n.format("teach.explain.masked", {{"fill", num(e.fill)}}));
      formula(app, (e.masked ? num(e.fill) : num(e.input)) + " = " + num(e.value));
      break;
    case ExplainKind::Weight: {
      prose(app, app.tr("teach.explain.weight"));
      if (e.row_fully_masked && std::isnan(e.value)) {
        prose(app, app.tr("teach.explain.fully_masked_nan"));
        break;
      }
      if (e.row_fully_masked) prose(app, app.tr("teach.explain.fully_masked_uniform"));
      formula(app, app.i18n.format("teach.explain.row_max", {{"max", num(e.row_max)}}));
      std::string exps;
      for (const SumTerm& t : e.row_exps)
        exps += (exps.empty() ? "" : ", ") + format_shifted_exp(t.factor_a, e.row_max) + " = " + num(t.value);
      if (static_cast<Index>(e.row_exps.size()) < e.row_length)
        exps += " … (+" + std::to_string(e.row_length - static_cast<Index>(e.row_exps.size())) + ")";
      formula(app, exps);
      formula(app, app.i18n.format("teach.explain.row_sum", {{"sum", num(e.row_sum)}}));
      formula(app, format_shifted_exp(e.input, e.row_max) + " ÷ " + num(e.row_sum) + " = " + num(e.exp_shifted) +
              " ÷ " + num(e.row_sum) + " = " + num(e.value));
      break;
    }
    case ExplainKind::Dropped:
      if (!e.dropout_active) {
        prose(app, app.tr("teach.explain.dropout_off"));
        formula(app, num(e.input) + " = " + num(e.value));
      } else if (e.kept) {
        prose(app, app.i18n.format("teach.explain.dropout_kept", {{"p", num(e.dropout_p)}}));
        formula(app, num(e.input) + " × 1/(1 − " + num(e.dropout_p) + ") = " + num(e.input) + " × " + num(e.keep_scale) +
                " = " + num(e.value));
      } else {
        prose(app, app.i18n.format("teach.explain.dropout_zeroed", {{"p", num(e.dropout_p)}}));
        formula(app, num(e.input) + " → 0");
      }
      break;
    case ExplainKind::Context:
      prose(app, app.tr(dropout ? "teach.explain.context_dropout" : "teach.explain.context"));
      term_order(app, e.sum);
      formula(app, std::string("Σ_j ") + (dropout ? "α′_" : "α_") + std::to_string(i) + "j · v_j[" + std::to_string(j) + "] = " + sum_text(app, e.sum));
      break;
    case ExplainKind::Concat:
      prose(app, app.i18n.format("teach.explain.concat", {{"head", std::to_string(e.source_head)},
                                                     {"col", std::to_string(e.source_col)}}));
      break;
    case ExplainKind::Output:
      if (e.sum.total_terms == 0) {
        prose(app, app.tr("teach.explain.output_no_wo"));
      } else {
        prose(app, app.tr(e.sum.has_bias ? "teach.explain.output" : "teach.explain.output_no_bias"));
        term_order(app, e.sum);
        formula(app, std::string(e.sum.has_bias ? "Σ_p concat_ip · W_O[p, c] + b_c = " : "Σ_p concat_ip · W_O[p, c] = ") +
                         sum_text(app, e.sum, "b_c"));
      }
      break;
    case ExplainKind::Average:
      prose(app, app.tr("teach.explain.average"));
      term_order(app, e.sum);
      formula(app, sum_text(app, e.sum));
      break;
    case ExplainKind::Positional: {
      prose(app, app.tr("teach.explain.positional"));
      const bool even = j % 2 == 0;
      const std::string p = std::to_string(e.position), two_i = std::to_string(2 * (j / 2));
      formula(app, std::string(even ? "sin" : "cos") + "(" + p + " / 10000^(" + two_i + "/d_model)) = " +
              (even ? "sin(" : "cos(") + num(e.angle) + ") = " + num(e.encoding));
      formula(app, num(e.input) + " + " + num(e.encoding) + " = " + num(e.value));
      break;
    }
    case ExplainKind::Rotated: {
      prose(app, app.i18n.format("teach.explain.rotated", {{"a", std::to_string(e.dim_a)}, {"b", std::to_string(e.dim_b)}, {"pair", std::to_string(e.pair)}}));
      const std::string base = e.rope_base == std::floor(e.rope_base) && e.rope_base < 1e12
                                   ? std::to_string(static_cast<long long>(e.rope_base))
                                   : num(e.rope_base);  // 10000, not 1e4
      formula(app, "θ = " + std::to_string(e.position) + "·" + base + "^(−2·" + std::to_string(e.pair) + "/" +
              std::to_string(e.d_k) + ") = " + num(e.angle));
      const std::string xa = "x_" + std::to_string(e.dim_a), xb = "x_" + std::to_string(e.dim_b);
      if (j == e.dim_a)
        formula(app, xa + "·cos θ − " + xb + "·sin θ = " + num(e.x_a) + "×" + num(std::cos(e.angle)) + " − " + num(e.x_b) +
                "×" + num(std::sin(e.angle)) + " = " + num(e.value));
      else
        formula(app, xb + "·cos θ + " + xa + "·sin θ = " + num(e.x_b) + "×" + num(std::cos(e.angle)) + " + " + num(e.x_a) +
                "×" + num(std::sin(e.angle)) + " = " + num(e.value));
      break;
    }
    case ExplainKind::Biased:
      prose(app, app.tr("teach.explain.biased"));
      formula(app, num(e.input) + " − " + num(e.slope) + "×|" + std::to_string(i) + " − " + std::to_string(j) + "| = " +
              num(e.input) + " − " + num(e.slope * static_cast<double>(e.distance)) + " = " + num(e.value));
      break;
  }
}

}  // namespace

void draw_explain_window(AppState& app) {
  app.teaching.highlights.clear();
  if (!app.teaching.explain_open) return;
  place_over_editors(22.0f, 2.5f);
  const std::string title = std::string(app.tr("teach.explain.title")) + "###explain_window";
  if (!ImGui::Begin(title.c_str(), &app.teaching.explain_open)) {
    ImGui::End();
    return;
  }
  app.widgets.add("window.explain", ImGui::GetWindowPos(),
                  ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowSize().x,
                         ImGui::GetWindowPos().y + ImGui::GetWindowSize().y));
  auto trace = app.model.trace();
  // The hovered cell while the pointer is on a heatmap, else the pinned one.
  const std::optional<CellRef>& ref = app.view.hovered ? app.view.hovered : app.view.pinned;
  if (ref && explain_gradient_cell(app, ref->heatmap, ref->row, ref->col)) {
    ImGui::End();
    return;
  }
  std::optional<CellAddress> cell;
  if (ref && trace) cell = cell_address_of(*ref, std::clamp<Index>(app.view.batch, 0, trace->dims.batch - 1));
  if (!trace || !cell) {
    wrapped_text(app.tr(ref ? "teach.explain.not_a_stage" : "teach.explain.hint"));
    app.widgets.set_fact("explain.kind", "");
    ImGui::End();
    return;
  }
  auto explanation = explain_cell(*trace, app.model.trace_session(), *cell);
  if (!explanation) {
    // A cell whose input stage the trace did not keep: the note and the way to keep it.
    for (const auto& [key, value] : explanation.error().params)
      if (key == "not_kept" && stage_from_name(value) && draw_not_kept(app, stage_set({*stage_from_name(value)}), "explain")) {
        app.widgets.set_fact("explain.kind", "not_kept");
        ImGui::End();
        return;
      }
    wrapped_text(app.i18n.error_message(explanation.error()));
    ImGui::End();
    return;
  }
  const Explanation& e = *explanation;
  const Session& session = app.model.trace_session();
  const bool keys = cell->stage == Stage::Scores || cell->stage == Stage::Scaled || cell->stage == Stage::Masked ||
                    cell->stage == Stage::Weights || cell->stage == Stage::Dropped;
  const bool cross = session.config.attention == AttentionKind::Cross;
  auto token = [](const std::vector<std::string>& tokens, Index k) {
    return k < static_cast<Index>(tokens.size()) ? " \"" + tokens[static_cast<size_t>(k)] + "\"" : std::string();
  };
  const bool kv_rows = stage_rows_are_keys(cell->stage);
  const std::string row_token = token(kv_rows && cross ? session.tokens_kv : session.tokens, cell->row);
  const std::string col_token = keys ? token(cross ? session.tokens_kv : session.tokens, cell->col) : "";
  std::string where = app.i18n.format(
      "teach.explain.cell", {{"stage", learner_name(app, stage_name(cell->stage))}, {"batch", std::to_string(cell->batch)},
                             {"row", std::to_string(cell->row) + row_token},
                             {"col", std::to_string(cell->col) + col_token}});
  const Dims& dims = trace->dims;
  const bool grouped = dims.kv_heads > 0 && dims.kv_heads < dims.heads;
  if (stage_is_per_head(cell->stage))
    where += "  " + (cell->head < 0 ? std::string(app.tr("heatmap.average"))
                     : stage_is_kv(cell->stage) && grouped ? "K/V " + app.i18n.format("heatmap.head", {{"n", std::to_string(cell->head)}})
                                                          : app.i18n.format("heatmap.head", {{"n", std::to_string(cell->head)}}));
  ImGui::TextUnformatted(where.c_str());
  ImGui::Text("= %s", num(e.value).c_str());
  if (!app.view.hovered) wrapped_text_disabled(app.tr("teach.explain.pinned"));
  ImGui::Separator();
  explain_body(app, e, session.config.dropout.active());
  if (grouped && cell->head >= 0 && stage_is_kv(cell->stage))
    wrapped_text_disabled(app.i18n.format("teach.explain.kv_cell", {{"kv", std::to_string(e.kv_head)},
                                                                   {"first", std::to_string(e.kv_head * dims.group())},
                                                                   {"last", std::to_string((e.kv_head + 1) * dims.group() - 1)}}));
  else if (grouped && cell->head >= 0 && (cell->stage == Stage::Scores || cell->stage == Stage::Context))
    wrapped_text_disabled(app.i18n.format("teach.explain.kv_shared", {{"head", std::to_string(cell->head)},
                                                                     {"kv", std::to_string(e.kv_head)},
                                                                     {"group", std::to_string(dims.group())}}));
  if (!e.sources.empty()) {
    ImGui::Separator();
    ImGui::TextDisabled("%s", app.tr("teach.explain.from"));
    for (const SourceLine& s : e.sources) ImGui::BulletText("%s", source_text(app, s).c_str());
  }
  add_highlights(app, e, trace->dims);
  if (app.widgets.enabled()) {
    app.widgets.set_fact("explain.kind", std::to_string(static_cast<int>(e.kind)));
    app.widgets.set_fact("explain.value", num(e.value));
    if (!e.sum.terms.empty()) app.widgets.set_fact("explain.sum", format_term_sum(e.sum));
    if (e.fused_slice)
      app.widgets.set_fact("explain.fused_slice", std::to_string(e.fused_slice->begin) + ":" +
                                                      std::to_string(e.fused_slice->end) + ":" +
                                                      std::to_string(e.fused_slice->column));
  }
  ImGui::End();
}

void draw_view_menu(AppState& app) {
  if (ImGui::BeginMenu((std::string(app.tr("teach.menu.view")) + "###view").c_str())) {
    ImGui::MenuItem((std::string(app.tr("teach.explain.title")) + "###view_explain").c_str(), nullptr,
                    &app.teaching.explain_open);
    ImGui::MenuItem((std::string(app.tr("teach.lines.title")) + "###view_lines").c_str(), nullptr,
                    &app.teaching.token_lines_open);
    ImGui::MenuItem((std::string(app.tr("teach.heads.title")) + "###view_heads").c_str(), nullptr,
                    &app.teaching.heads_open);
    ImGui::MenuItem((std::string(app.tr("teach.diff.title")) + "###view_diff").c_str(), nullptr,
                    &app.teaching.diff_open);
    ImGui::EndMenu();
  }
  app.widgets.add_last_item("menu.view");
}

void apply_teaching_options(AppState& app) {
  if (app.frame != 0) return;
  for (const std::string& name : app.options.open_windows) {
    if (name == "explain") app.teaching.explain_open = true;
    if (name == "token_lines") app.teaching.token_lines_open = true;
    if (name == "heads") app.teaching.heads_open = true;
    if (name == "diff") app.teaching.diff_open = true;
    if (name == "export") app.teaching.export_open = true;
    if (name == "gradients") app.gradient.show = true;
  }
  if (!app.options.snapshot.empty()) {
    auto session = load_session_or_preset(app.options.snapshot);
    auto trace = session ? compute(*session) : Result<std::shared_ptr<const Trace>>(session.error());
    if (trace) {
      app.teaching.snapshot = *trace;
      app.teaching.diff_open = true;
    } else {
      app.notices.push_back("--snapshot: " + trace.error().message);
    }
  }
  if (app.options.pin.empty()) return;
  // [grad.]stage:batch:head:row:col, head "avg" for the average over heads.
  std::vector<std::string> parts;
  std::string rest = app.options.pin;
  for (auto colon = rest.find(':'); colon != std::string::npos; colon = rest.find(':')) {
    parts.push_back(rest.substr(0, colon));
    rest = rest.substr(colon + 1);
  }
  parts.push_back(rest);
  // "grad.<stage>" pins that stage's gradient heatmap (the gradient view).
  const std::string stage_part = parts[0].rfind("grad.", 0) == 0 ? parts[0].substr(5) : parts[0];
  const auto stage = parts.size() == 5 ? stage_from_name(stage_part) : std::nullopt;
  if (!stage) {
    app.notices.push_back("--pin needs stage:batch:head:row:col, e.g. scores:0:0:1:1 (got '" + app.options.pin + "')");
    return;
  }
  std::string name = parts[0];
  if (stage_is_per_head(*stage)) name += parts[2] == "avg" ? ".avg" : ".h" + parts[2];
  app.view.batch = std::atoll(parts[1].c_str());
  if (parts[2] != "avg") app.view.input_head = std::atoll(parts[2].c_str());  // the inputs row shows its head
  app.view.pinned = CellRef{name, std::atoll(parts[3].c_str()), std::atoll(parts[4].c_str())};
}

}  // namespace al::gui
