// The FlashAttention lab: one (batch item, head) computed tile by tile with an
// online softmax, from core's flash_attention_steps(). The learner steps
// through the tiles (query tile × key tile, outlined on the scores), sees each
// query row's running max m and running sum ℓ before and after the tile, the
// factor exp(m_old − m_new) that rescales the partial output when m grows, and
// at the end the difference to the plain computation and the memory held.
#include "panels/panels.hpp"  // first: it brings in epoxy, which must precede any GL header

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>

#include "widgets/heatmap_widget.hpp"
#include "teaching/lab_numbers.hpp"
#include "io/session_io.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

constexpr double kPlaySecondsPerTile = 0.9;
// Larger sessions are stepped on a small example: the table lists every query
// row of a tile and the heatmap should show single cells.
constexpr Index kLabMaxLength = 48;
constexpr const char* kExamplePreset = "default";
constexpr int kShownOutputColumns = 4;
constexpr Index kLongLength = 4096;  // a long sequence, to compare the memory at

// Records the steps again when the session, batch item, head or tiles changed.
void record(AppState& app, FlashLabState& lab) {
  auto trace = app.model.trace();
  const Index batch = app.view.batch;
  if (lab.revision == app.model.revision() && lab.recorded_head == lab.head &&
      lab.recorded_queries == lab.tile_queries && lab.recorded_keys == lab.tile_keys &&
      lab.recorded_batch == batch && (lab.plain || !trace))
    return;
  lab.revision = app.model.revision();
  lab.recorded_head = lab.head;
  lab.recorded_queries = lab.tile_queries;
  lab.recorded_keys = lab.tile_keys;
  lab.recorded_batch = batch;
  lab.steps.reset();
  lab.plain.reset();
  lab.error.clear();
  if (!trace) return;

  // The session the trace was computed from, or the small example.
  Session session = app.model.trace_session();
  std::shared_ptr<const Trace> plain = trace;
  Index use_batch = std::clamp<Index>(batch, 0, trace->dims.batch - 1);
  lab.example = trace->dims.len_q > kLabMaxLength || trace->dims.len_kv > kLabMaxLength;
  if (lab.example) {
    lab.example_tokens_note = app.i18n.format(
        "flash_lab.example_note", {{"lq", std::to_string(trace->dims.len_q)},
                                   {"lk", std::to_string(trace->dims.len_kv)},
                                   {"max", std::to_string(kLabMaxLength)}});
    auto example = load_preset(kExamplePreset);
    if (!example) {
      lab.error = app.i18n.error_message(example.error());
      return;
    }
    auto computed = compute(*example);
    if (!computed) {
      lab.error = app.i18n.error_message(computed.error());
      return;
    }
    session = std::move(*example);
    plain = *computed;
    use_batch = 0;
  }
  lab.head = std::clamp(lab.head, 0, static_cast<int>(plain->dims.heads) - 1);
  lab.recorded_head = lab.head;
  lab.tile_queries = std::clamp(lab.tile_queries, 1, static_cast<int>(plain->dims.len_q));
  lab.tile_keys = std::clamp(lab.tile_keys, 1, static_cast<int>(plain->dims.len_kv));
  lab.recorded_queries = lab.tile_queries;
  lab.recorded_keys = lab.tile_keys;
  auto steps = flash_attention_steps(session, use_batch, lab.head, {lab.tile_queries, lab.tile_keys});
  if (!steps) {
    lab.error = app.i18n.error_message(steps.error());
    return;
  }
  lab.steps = std::make_shared<const FlashSteps>(std::move(*steps));
  lab.plain = plain;
  lab.tokens = session.tokens;
  lab.softmax_input = softmax_input_symbol(session);
  lab.dropout = session.config.dropout.active();
  lab.key_tokens = session.config.attention == AttentionKind::Cross ? session.tokens_kv : session.tokens;
  lab.step = std::clamp(lab.step, 0, static_cast<int>(lab.steps->steps.size()) - 1);
}

// max |tiled − plain| over the (Lq, d_k) context of the recorded head.
double difference_to_plain(const FlashLabState& lab) {
  const FlashSteps& s = *lab.steps;
  const Tensor& context = lab.plain->stage(Stage::Context);  // (B, h, Lq, d_k)
  const Index matrix = s.batch * lab.plain->dims.heads + s.head, size = s.len_q * s.d_k;
  return max_abs_difference(s.context.data.data(), context.data.data() + matrix * size, size);
}

void controls(AppState& app, FlashLabState& lab) {
  const float font = ImGui::GetFontSize();
  const Dims& d = lab.plain->dims;
  const int count = static_cast<int>(lab.steps->steps.size());
  if (d.heads > 1) {
    ImGui::SetNextItemWidth(7.0f * font);
    ImGui::InputInt((std::string(app.tr("flash_lab.head")) + "###flash_head").c_str(), &lab.head);
    lab.head = std::clamp(lab.head, 0, static_cast<int>(d.heads) - 1);
    ImGui::SameLine();
  }
  ImGui::SetNextItemWidth(9.0f * font);
  ImGui::SliderInt((std::string(app.tr("flash_lab.tile_queries")) + "###flash_tq").c_str(), &lab.tile_queries, 1,
                   static_cast<int>(d.len_q));
  app.widgets.add_last_item("flash_lab.tile_queries");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(9.0f * font);
  ImGui::SliderInt((std::string(app.tr("flash_lab.tile_keys")) + "###flash_tk").c_str(), &lab.tile_keys, 1,
                   static_cast<int>(d.len_kv));
  app.widgets.add_last_item("flash_lab.tile_keys");

  ImGui::BeginDisabled(lab.step <= 0);
  if (ImGui::Button((std::string("◀ ") + app.tr("flash_lab.previous") + "###flash_prev").c_str())) {
    --lab.step;
    lab.playing = false;
  }
  ImGui::EndDisabled();
  app.widgets.add_last_item("flash_lab.previous");
  ImGui::SameLine();
  const std::string play = lab.playing ? std::string("■ ") + app.tr("flash_lab.pause")
                                       : std::string("▶ ") + app.tr("flash_lab.play");
  if (ImGui::Button((play + "###flash_play").c_str())) {
    lab.playing = !lab.playing;
    if (lab.playing && lab.step + 1 >= count) lab.step = 0;
    lab.next_play_time = glfwGetTime() + kPlaySecondsPerTile;
  }
  app.widgets.add_last_item("flash_lab.play");
  ImGui::SameLine();
  ImGui::BeginDisabled(lab.step + 1 >= count);
  if (ImGui::Button((std::string(app.tr("flash_lab.next")) + " ▶###flash_next").c_str())) {
    ++lab.step;
    lab.playing = false;
  }
  ImGui::EndDisabled();
  app.widgets.add_last_item("flash_lab.next");
  ImGui::SameLine();
  if (ImGui::Button((std::string(app.tr("flash_lab.to_end")) + " ▶▶###flash_end").c_str())) {
    lab.step = count - 1;
    lab.playing = false;
  }
  app.widgets.add_last_item("flash_lab.to_end");

  if (lab.playing) {
    app.keep_drawing = true;
    const double now = glfwGetTime();
    if (now >= lab.next_play_time) {
      if (lab.step + 1 < count) ++lab.step;
      else lab.playing = false;
      lab.next_play_time = now + kPlaySecondsPerTile;
    }
  }
}

// The scaled, masked scores of the head with the current tile outlined.
void scores_heatmap(AppState& app, const FlashLabState& lab, const FlashStep& step, float width, float height) {
  const FlashSteps& s = *lab.steps;
  const Trace& plain = *lab.plain;
  const Index matrix = s.batch * plain.dims.heads + s.head;
  HeatmapSpec spec;
  spec.name = "flash_lab.scores";
  spec.title = app.i18n.format("flash_lab.scores_title", {{"input", lab.softmax_input}});
  const TensorPtr scores = plain.stage_ptr(Stage::Masked);
  if (!scores) {  // a lean trace (SessionModel::keep) without the masked scores
    draw_not_kept(app, stage_set({Stage::Masked}), "flash_lab");
    return;
  }
  spec.values = matrix_of(scores, matrix);
  if (plain.mask) spec.mask = matrix_of(plain.mask, s.batch);
  const ValueRange range = app.derived.symmetric_range(scores, matrix, 1, spec.mask.valid() ? &spec.mask : nullptr);
  spec.style = {Colormap::Diverging, range.low, range.high};
  spec.row_labels = &lab.tokens;
  spec.col_labels = &lab.key_tokens;
  spec.width = width;
  spec.max_height = height;
  spec.pin_on_click = false;
  heatmap_widget(app, spec);

  ImVec2 grid_min, grid_max;
  if (!app.widgets.find("heatmap.flash_lab.scores", &grid_min, &grid_max)) return;
  const float cell_w = (grid_max.x - grid_min.x) / static_cast<float>(s.len_kv);
  const float cell_h = (grid_max.y - grid_min.y) / static_cast<float>(s.len_q);
  const ImVec2 a(grid_min.x + step.key_begin * cell_w, grid_min.y + step.query_begin * cell_h);
  const ImVec2 b(grid_min.x + step.key_end * cell_w, grid_min.y + step.query_end * cell_h);
  const float font = ImGui::GetFontSize();
  ImGui::GetWindowDrawList()->AddRect(a, b, IM_COL32(255, 200, 0, 255), 0.0f, 0, std::max(2.0f, 0.15f * font));
  app.widgets.add("flash_lab.tile_outline", a, b);
}

// One line per query row of the tile: m, ℓ before → after, the rescale factor, the partial output.
void step_table(AppState& app, const FlashLabState& lab, const FlashStep& step) {
  const Index rows = step.query_end - step.query_begin;
  const Index d_k = lab.steps->d_k;
  const Index shown = std::min<Index>(d_k, kShownOutputColumns);
  if (!ImGui::BeginTable("flash_rows", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                              ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY,
                         ImVec2(0.0f, std::min(14.0f, 1.4f + rows) * ImGui::GetFrameHeight())))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn(app.tr("flash_lab.col_query"));
  ImGui::TableSetupColumn(app.tr("flash_lab.col_max"));
  ImGui::TableSetupColumn(app.tr("flash_lab.col_sum"));
  ImGui::TableSetupColumn(app.tr("flash_lab.col_rescale"));
  ImGui::TableSetupColumn(app.tr("flash_lab.col_partial"));
  ImGui::TableHeadersRow();
  for (Index r = 0; r < rows; ++r) {
    ImGui::PushID(static_cast<int>(r));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(axis_label(&lab.tokens, step.query_begin + r).c_str());
    ImGui::TableNextColumn();
    const bool grew = step.m_after[r] > step.m_before[r];
    ImGui::Text("%s → %s", lab_number(step.m_before[r]).c_str(), lab_number(step.m_after[r]).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%s → %s", lab_number(step.l_before[r]).c_str(), lab_number(step.l_after[r]).c_str());
    ImGui::TableNextColumn();
    // The factor matters when m grew: the old terms were exponentiated against a smaller max.
    if (grew) ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), "× %s", lab_number(step.rescale[r]).c_str());
    else ImGui::TextDisabled("× %s", lab_number(step.rescale[r]).c_str());
    ImGui::TableNextColumn();
    std::string partial = "[";
    for (Index c = 0; c < shown; ++c)
      partial += (c ? ", " : "") + lab_number(step.partial_output[r * d_k + c]);
    partial += shown < d_k ? ", …]" : "]";
    ImGui::TextUnformatted(partial.c_str());
    ImGui::PopID();
  }
  ImGui::EndTable();
}

void memory_and_result(AppState& app, const FlashLabState& lab, bool at_end) {
  const FlashSteps& s = *lab.steps;
  const FlashMemory memory = flash_memory(s.len_q, s.len_kv, s.d_k, s.tiles);
  const double difference = difference_to_plain(lab);
  app.widgets.set_fact("flash_lab.max_difference", lab_number(difference));
  app.widgets.set_fact("flash_lab.held_bytes", std::to_string(memory.held_bytes));
  app.widgets.set_fact("flash_lab.full_matrix_bytes", std::to_string(memory.full_matrix_bytes));

  if (at_end) {
    ImGui::PushStyleColor(ImGuiCol_Text, difference < 1e-5 ? ImVec4(0.5f, 0.9f, 0.5f, 1.0f)
                                                           : ImVec4(1.0f, 0.5f, 0.4f, 1.0f));
    const std::string plain = lab.dropout ? "dropout(softmax(S″))·V" : "softmax(S″)·V";
    wrapped_text(app.i18n.format("flash_lab.result", {{"diff", lab_number(difference)}, {"plain", plain}}));
    ImGui::PopStyleColor();
    app.widgets.add_last_item("flash_lab.result");
  } else {
    wrapped_text_disabled(app.tr("flash_lab.result_pending"));
  }
  ImGui::TextUnformatted(app.tr("flash_lab.memory_title"));
  if (!ImGui::BeginTable("flash_memory", 2, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
  auto row = [&](const std::string& label, Index bytes) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(label.c_str());
    ImGui::TableNextColumn();
    if (bytes < 1024) ImGui::TextUnformatted(bytes_text(bytes).c_str());
    else ImGui::Text("%s  (%lld B)", bytes_text(bytes).c_str(), static_cast<long long>(bytes));
  };
  const Params sizes = {{"lq", std::to_string(s.len_q)},
                        {"lk", std::to_string(s.len_kv)},
                        {"dk", std::to_string(s.d_k)},
                        {"tq", std::to_string(std::min<Index>(s.tiles.queries, s.len_q))},
                        {"tk", std::to_string(std::min<Index>(s.tiles.keys, s.len_kv))}};
  row(app.i18n.format("flash_lab.mem_output", sizes), memory.output_bytes);
  row(app.i18n.format("flash_lab.mem_stats", sizes), memory.statistics_bytes);
  row(app.i18n.format("flash_lab.mem_tile", sizes), memory.tile_bytes);
  row(app.i18n.format("flash_lab.mem_held", sizes), memory.held_bytes);
  row(app.i18n.format("flash_lab.mem_full", sizes), memory.full_matrix_bytes);
  row(app.i18n.format("flash_lab.mem_plain", sizes), s.plain_bytes);
  ImGui::EndTable();
  // At a few tokens the n² matrix is the smaller one; O(n) wins at real lengths.
  const FlashMemory long_memory = flash_memory(kLongLength, kLongLength, s.d_k, s.tiles);
  wrapped_text(app.i18n.format("flash_lab.mem_long", {{"n", std::to_string(kLongLength)},
                                                       {"held", bytes_text(long_memory.held_bytes)},
                                                       {"full", bytes_text(long_memory.full_matrix_bytes)}}));
}

}  // namespace

void draw_flash_lab(AppState& app) {
  FlashLabState& lab = app.flash_lab;
  if (app.frame == 0 && std::count(app.options.open_windows.begin(), app.options.open_windows.end(), "flash"))
    lab.open = true;
  if (!lab.open) return;
  const float font = ImGui::GetFontSize();
  const ImVec2 screen = ImGui::GetMainViewport()->WorkSize;  // the window fits on it: its text wraps at the edge
  ImGui::SetNextWindowSize(ImVec2(std::min(62.0f * font, screen.x - 5.0f * font), std::min(48.0f * font, screen.y - 4.0f * font)),
                           ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowPos(ImVec2(4.0f * font, 3.0f * font), ImGuiCond_FirstUseEver);
  const bool visible =
      ImGui::Begin((std::string(app.tr("flash_lab.title")) + "###flash_lab").c_str(), &lab.open);
  if (visible) {
    app.widgets.add("flash_lab.window", ImGui::GetWindowPos(),
                    ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowSize().x,
                           ImGui::GetWindowPos().y + ImGui::GetWindowSize().y));
    wrapped_text(app.tr("flash_lab.intro"));
    record(app, lab);
    if (!lab.error.empty()) {
      wrapped_text_colored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), lab.error);
    } else if (!lab.steps || lab.steps->steps.empty()) {
      wrapped_text_disabled(no_trace_text(app));
    } else {
      if (lab.example) wrapped_text_colored(ImVec4(1.0f, 0.8f, 0.4f, 1.0f), lab.example_tokens_note);
      controls(app, lab);
      record(app, lab);  // the tile sizes or the head may have changed
      if (lab.steps && !lab.steps->steps.empty()) {
        const FlashSteps& s = *lab.steps;
        lab.step = std::clamp(lab.step, 0, static_cast<int>(s.steps.size()) - 1);
        const FlashStep& step = s.steps[lab.step];
        const bool at_end = lab.step + 1 == static_cast<int>(s.steps.size());
        app.widgets.set_fact("flash_lab.step", std::to_string(lab.step));
        app.widgets.set_fact("flash_lab.steps", std::to_string(s.steps.size()));
        ImGui::TextUnformatted(app.i18n.format(
            "flash_lab.step_caption",
            {{"n", std::to_string(lab.step + 1)}, {"count", std::to_string(s.steps.size())},
             {"qt", std::to_string(step.query_tile)}, {"kt", std::to_string(step.key_tile)},
             {"q0", std::to_string(step.query_begin)}, {"q1", std::to_string(step.query_end - 1)},
             {"k0", std::to_string(step.key_begin)}, {"k1", std::to_string(step.key_end - 1)}}).c_str());

        const float left = std::min(22.0f * font, 0.4f * ImGui::GetContentRegionAvail().x);
        ImGui::BeginGroup();
        scores_heatmap(app, lab, step, left, 18.0f * font);
        ImGui::EndGroup();
        ImGui::SameLine(0.0f, 1.5f * font);
        ImGui::BeginGroup();
        wrapped_text(app.tr("flash_lab.table_intro"));
        step_table(app, lab, step);
        ImGui::EndGroup();
        ImGui::Separator();
        memory_and_result(app, lab, at_end);
      }
    }
  }
  ImGui::End();
}

}  // namespace al::gui
