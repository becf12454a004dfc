// The Training lab: a tiny attention model learns a toy task live (on a worker
// thread, state/training_lab.cpp), with pause / step / resume / reset, its loss
// and held-out accuracy plotted as it goes, and the held-out example's attention
// beside the pattern the task's ideal head has.
#include <algorithm>
#include <cfloat>
#include <numeric>

#include "panels/panels.hpp"
#include "state/documents.hpp"
#include "widgets/heatmap_widget.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

constexpr ToyTask kTasks[] = {ToyTask::PreviousToken, ToyTask::MaxSoFar, ToyTask::Duplicate};

// The mean of `count` values from `first` (a steadier reading than one noisy step).
double mean_of(const std::vector<float>& values, size_t first, size_t count) {
  count = std::min(count, values.size() - std::min(first, values.size()));
  if (count == 0) return 0.0;
  return std::accumulate(values.begin() + static_cast<long>(first), values.begin() + static_cast<long>(first + count),
                         0.0) / static_cast<double>(count);
}

void controls(AppState& app, TrainingLabState& lab) {
  const float font = ImGui::GetFontSize();
  const char* names[3];
  std::string labels[3];
  for (int i = 0; i < 3; ++i) {
    labels[i] = app.tr(std::string("training.task.") + toy_task_name(kTasks[i]));
    names[i] = labels[i].c_str();
  }
  ImGui::SetNextItemWidth(16.0f * font);
  if (ImGui::Combo((std::string(app.tr("training.task")) + "###training_task").c_str(), &lab.task, names, 3))
    lab.run.reset();  // another task: a new model
  app.widgets.add_last_item("training.task");
  wrapped_text_disabled(app.tr(std::string("training.about.") + toy_task_name(kTasks[lab.task])));

  // Positions: learned rows added to the embeddings, the fixed sinusoidal table, or RoPE inside the attention.
  static constexpr std::pair<Positions, const char*> kPositions[] = {
      {Positions::Learned, "learned"}, {Positions::Sinusoidal, "sinusoidal"}, {Positions::Rope, "rope"}};
  const char* chosen = "learned";
  for (const auto& [p, key] : kPositions)
    if (p == lab.positions) chosen = key;
  ImGui::SetNextItemWidth(16.0f * font);
  if (ImGui::BeginCombo((std::string(app.tr("training.positions")) + "###training_positions").c_str(),
                        app.tr(std::string("training.positions.") + chosen))) {
    for (const auto& [p, key] : kPositions) {
      ImGui::PushID(key);
      if (ImGui::Selectable(app.tr(std::string("training.positions.") + key), p == lab.positions) &&
          p != lab.positions) {
        lab.positions = p;
        lab.run.reset();  // other positions: a new model
      }
      app.widgets.add_last_item(std::string("training.positions.") + key);
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  app.widgets.add_last_item("training.positions");
  app.widgets.set_fact("training.positions", chosen);
  wrapped_text_disabled(app.tr(std::string("training.positions.about.") + chosen));

  const bool running = lab.run && lab.run->running();
  auto ensure_run = [&] {
    if (!lab.run) {
      lab.run = std::make_unique<TrainingRun>(kTasks[lab.task], lab.positions);
      ++lab.runs_started;
    }
    lab.run->set_pace(lab.pace);
  };
  if (running) {
    if (ImGui::Button((std::string("■ ") + app.tr("training.pause") + "###training_toggle").c_str())) lab.run->pause();
  } else {
    const bool started = lab.run && lab.run->snapshot()->steps > 0;
    if (ImGui::Button((std::string("▶ ") + app.tr(started ? "training.resume" : "training.train") +
                       "###training_toggle").c_str())) {
      ensure_run();
      lab.run->resume();
    }
  }
  app.widgets.add_last_item("training.toggle");
  ImGui::SameLine();
  ImGui::BeginDisabled(running);
  if (ImGui::Button((std::string(app.tr("training.step")) + "###training_step").c_str())) {
    ensure_run();
    lab.run->step();
  }
  ImGui::EndDisabled();
  app.widgets.add_last_item("training.step");
  ImGui::SameLine();
  if (ImGui::Button((std::string(app.tr("training.reset")) + "###training_reset").c_str())) lab.run.reset();
  app.widgets.add_last_item("training.reset");
  ImGui::SameLine(0.0f, 1.5f * font);
  ImGui::SetNextItemWidth(12.0f * font);
  ImGui::SliderInt((std::string(app.tr("training.pace")) + "###training_pace").c_str(), &lab.pace, 5, 2000, "%d",
                   ImGuiSliderFlags_Logarithmic);
  app.widgets.add_last_item("training.pace");
  if (lab.run) lab.run->set_pace(lab.pace);
}

void plots(AppState& app, const TrainingSnapshot& s) {
  const float font = ImGui::GetFontSize();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const ImVec2 size(0.5f * (ImGui::GetContentRegionAvail().x - spacing), 7.0f * font);
  ImGui::BeginGroup();
  ImGui::TextUnformatted(app.tr("training.loss_plot"));
  ImGui::PlotLines("##training_loss", s.losses.data(), static_cast<int>(s.losses.size()), 0, nullptr, 0.0f, FLT_MAX,
                   size);
  app.widgets.add_last_item("training.loss_plot");
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextUnformatted(app.tr("training.accuracy_plot"));
  ImGui::PlotLines("##training_accuracy", s.accuracies.data(), static_cast<int>(s.accuracies.size()), 0, nullptr,
                   0.0f, 1.0f, size);
  app.widgets.add_last_item("training.accuracy_plot");
  ImGui::EndGroup();
}

// One (L, L) matrix of `tensor` (matrix k) as a heatmap spec, probabilities 0..1.
HeatmapSpec pattern(const TrainingSnapshot& s, const TensorPtr& tensor, Index k, std::string name, std::string title,
                    std::string key) {
  HeatmapSpec spec;
  spec.name = std::move(name);
  spec.title = std::move(title);
  const Index rows = tensor->rows(), cols = tensor->cols();
  spec.values.owner = tensor;
  spec.values.data = tensor->data.data() + k * rows * cols;
  spec.values.rows = rows;
  spec.values.cols = cols;
  spec.values.row_stride = cols;
  spec.values.key = std::move(key);
  spec.row_labels = &s.tokens;
  spec.col_labels = &s.tokens;
  spec.style = {Colormap::Sequential, 0.0f, 1.0f};
  spec.pin_on_click = false;
  return spec;
}

void patterns(AppState& app, const TrainingLabState& lab, const TrainingSnapshot& s) {
  if (!s.weights || !s.ideal) return;
  const float font = ImGui::GetFontSize();
  wrapped_text_disabled(app.i18n.format("training.patterns", {{"step", std::to_string(s.weights_step)}}));
  // In numbers, how near each head (and the better head of each row) is to the ideal pattern.
  std::string per_head;
  for (size_t h = 0; h < s.shares.per_head.size(); ++h) {
    const std::string share = lab_number(100.0 * s.shares.per_head[h]);
    per_head += (h ? app.tr("keep.list_separator") : "") +
                app.i18n.format("training.share_head", {{"n", std::to_string(h)}, {"share", share}});
    app.widgets.set_fact("training.share.h" + std::to_string(h), share);
  }
  wrapped_text(app.i18n.format("training.shares", {{"heads", per_head}, {"best", lab_number(100.0 * s.shares.best_head)}}));
  app.widgets.add_last_item("training.shares");
  app.widgets.set_fact("training.share.best", lab_number(100.0 * s.shares.best_head));
  // A run's identity in the texture keys: a new run's step 0 is other values than the old one's.
  const std::string run = std::to_string(lab.runs_started);
  std::vector<HeatmapSpec> specs;
  const Index heads = s.weights->dim(1);
  for (Index h = 0; h < heads; ++h)
    specs.push_back(pattern(s, s.weights, h, "training.h" + std::to_string(h),
                            app.i18n.format("training.learned", {{"n", std::to_string(h)}}),
                            "training:" + run + ":" + std::to_string(s.weights_step) + ":" + std::to_string(h)));
  specs.push_back(pattern(s, s.ideal, 0, "training.ideal", app.tr("training.ideal"), "training:ideal:" + run));
  const float spacing = 1.2f * font;
  const float width = (ImGui::GetContentRegionAvail().x - spacing * static_cast<float>(specs.size() - 1)) /
                      static_cast<float>(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i > 0) ImGui::SameLine(0.0f, spacing);
    specs[i].width = width;
    specs[i].max_height = std::max(8.0f * font, ImGui::GetContentRegionAvail().y - 1.0f * font);
    heatmap_widget(app, specs[i]);
  }
}

// The learned layer on the held-out example, opened as the main window's session on its softmax
// step: the stages of what the heads learned, to step through, edit and differentiate like any
// example (over unsaved work as an edit, so Undo brings the work back). The lab closes so the main
// window shows; it keeps its run for when it is opened again.
void open_button(AppState& app, TrainingLabState& lab, const TrainingSnapshot& s) {
  if (!s.example) return;
  const std::string step = std::to_string(s.weights_step);
  if (ImGui::Button((app.i18n.format("training.open", {{"step", step}}) + "###training_open").c_str())) {
    const std::string name = app.i18n.format(
        "training.document", {{"task", app.tr(std::string("training.task.") + toy_task_name(s.task))}, {"step", step}});
    open_example_session(app, *s.example, name, app.i18n.format("training.edit_label", {{"name", name}}));
    app.view.look_at(Step::Weights);
    lab.open = false;
  }
  app.widgets.add_last_item("training.open");
  wrapped_text_disabled(app.i18n.format("training.open.about", {{"step", step}}));
}

}  // namespace

void draw_training_lab(AppState& app) {
  TrainingLabState& lab = app.training_lab;
  bool visible = false;
  if (!begin_lab_window(app, "training", "training.title", &lab.open, ImVec2(56.0f, 44.0f), &visible)) return;
  if (visible) {
    const TrainingConfig config = default_training(kTasks[lab.task]);
    wrapped_text(app.i18n.format("training.intro", {{"heads", std::to_string(config.heads)},
                                                    {"batch", std::to_string(config.batch)}}));
    controls(app, lab);
    if (!lab.run) {
      wrapped_text_disabled(app.tr("training.not_started"));
    } else {
      // running() before snapshot(): the worker pauses and publishes its last step together.
      const bool running = lab.run->running();
      const std::shared_ptr<const TrainingSnapshot> s = lab.run->snapshot();
      const float accuracy = s->accuracies.empty() ? 0.0f : s->accuracies.back();
      ImGui::Text("%s", app.i18n
                            .format("training.status",
                                    {{"step", std::to_string(s->steps)}, {"total", std::to_string(s->target_steps)},
                                     {"loss", s->losses.empty() ? "–" : lab_number(s->losses.back())},
                                     {"accuracy", lab_number(100.0 * accuracy)}})
                            .c_str());
      open_button(app, lab, *s);
      plots(app, *s);
      patterns(app, lab, *s);
      if (running) app.keep_drawing = true;  // the next snapshot is on its way
      if (app.widgets.enabled()) {
        app.widgets.set_fact("training.steps", std::to_string(s->steps));
        app.widgets.set_fact("training.target_steps", std::to_string(s->target_steps));
        app.widgets.set_fact("training.loss_first", lab_number(mean_of(s->losses, 0, 10)));
        app.widgets.set_fact("training.loss_last",
                             lab_number(mean_of(s->losses, s->losses.size() - std::min<size_t>(10, s->losses.size()), 10)));
        app.widgets.set_fact("training.accuracy", lab_number(accuracy));
        app.widgets.set_fact("training.running", running ? "yes" : "no");
      }
    }
  }
  ImGui::End();
}

}  // namespace al::gui
