// The desktop app's entry point: window and GL context, ImGui, the frame loop
// (which sleeps while nothing changes), and the hooks tests use (screenshot,
// widget rectangles, save on exit, a frame limit).
#include "shell/gui.hpp"

#include <epoxy/gl.h>
// GLFW after epoxy, so it does not pull in a second GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cfloat>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>

#include "io/session_io.hpp"
#include "numerics/attention.hpp"
#include "panels/panels.hpp"
#include "platform/assets.hpp"
#include "platform/gl_driver_pin.hpp"
#include "platform/key_trickle.hpp"
#include "platform/mouse_trickle.hpp"
#include "platform/screenshot.hpp"
#include "platform/window_icon.hpp"
#include "shell/frame_stats.hpp"
#include "shell/options.hpp"
#include "panels/presentation.hpp"
#include "state/documents.hpp"
#include "state/view_stages.hpp"
#include "widgets/heatmap_png.hpp"

namespace al::gui {

namespace {

// Set by SIGINT/SIGTERM: the loop then closes normally (and saves, with
// --save-on-exit). A signal handler can only reach a global.
volatile std::sig_atomic_t g_quit_signal = 0;
void on_quit_signal(int) { g_quit_signal = 1; }

std::string g_glfw_error;  // last GLFW error text, for the no-display message
void on_glfw_error(int, const char* description) { g_glfw_error = description; }

// Whether any input arrived since the last frame: GLFW callbacks we install
// before ImGui's backend, which chains to them.
struct InputFlag {
  bool seen = true;
  std::vector<std::string> dropped_paths;  // files dropped onto the window
  KeyTrickle keys;                         // so that a frame sees every key press and release
  MouseTrickle mouse;                      // and every button change, where it happened
};
static_assert(MouseTrickle::kButtons == sizeof(ImGuiIO::MouseDown) / sizeof(bool), "one flag per ImGui button");
InputFlag* input_flag(GLFWwindow* window) {
  return static_cast<InputFlag*>(glfwGetWindowUserPointer(window));
}
void install_input_callbacks(GLFWwindow* window) {
  glfwSetCursorPosCallback(window, [](GLFWwindow* w, double x, double y) {
    input_flag(w)->seen = true;
    input_flag(w)->mouse.moved(x, y);
  });
  glfwSetMouseButtonCallback(window, [](GLFWwindow* w, int button, int action, int) {
    input_flag(w)->seen = true;
    input_flag(w)->mouse.button(button, action == GLFW_PRESS);
  });
  glfwSetKeyCallback(window, [](GLFWwindow* w, int, int, int, int) { input_flag(w)->seen = true; });
  glfwSetCharCallback(window, [](GLFWwindow* w, unsigned int) { input_flag(w)->seen = true; });
  glfwSetCursorEnterCallback(window, [](GLFWwindow* w, int) { input_flag(w)->seen = true; });
  glfwSetWindowFocusCallback(window, [](GLFWwindow* w, int) { input_flag(w)->seen = true; });
  glfwSetFramebufferSizeCallback(window, [](GLFWwindow* w, int, int) { input_flag(w)->seen = true; });
  glfwSetWindowRefreshCallback(window, [](GLFWwindow* w) { input_flag(w)->seen = true; });
  glfwSetDropCallback(window, [](GLFWwindow* w, int count, const char** paths) {
    input_flag(w)->seen = true;
    for (int i = 0; i < count; ++i) input_flag(w)->dropped_paths.emplace_back(paths[i]);
  });
}

std::string join_code_points(const std::vector<unsigned>& points) {
  std::string text;
  char buffer[16];
  for (unsigned c : points) {
    std::snprintf(buffer, sizeof buffer, "%sU+%04X", text.empty() ? "" : " ", c);
    text += buffer;
  }
  return text;
}

void record_frame_facts(AppState& app, int fb_width, int fb_height) {
  if (!app.widgets.enabled()) return;
  app.widgets.set_fact("step", step_id(app.view.step));
  app.widgets.set_fact("language", language_code(app.i18n.language()));
  app.widgets.set_fact("revision", std::to_string(app.model.revision()));
  app.widgets.set_fact("error", app.model.error() ? error_code_name(app.model.error()->code) : "");
  app.widgets.set_fact("missing_glyphs", join_code_points(app.font_report.missing_glyphs));
  app.widgets.set_fact("missing_token_glyphs", join_code_points(app.font_report.missing_session_glyphs));
  app.widgets.set_fact("cjk_font", app.font_report.cjk ? "yes" : "no");
  app.widgets.set_fact("text_input", ImGui::GetIO().WantTextInput ? "yes" : "no");
  app.widgets.set_fact("framebuffer", std::to_string(fb_width) + "x" + std::to_string(fb_height));
  // "weights.h0:1:2" (heatmap:row:col), or empty: what a click pinned, what the pointer is on.
  auto cell_text = [](const std::optional<CellRef>& cell) {
    return cell ? cell->heatmap + ":" + std::to_string(cell->row) + ":" + std::to_string(cell->col) : std::string();
  };
  app.widgets.set_fact("pinned", cell_text(app.view.pinned));
  app.widgets.set_fact("hovered", cell_text(app.view.hovered));
  app.widgets.set_fact("view_batch", std::to_string(app.view.batch));
  app.widgets.set_fact("png.slide_grid", app.teaching.slide_grid);
}

std::string window_title(const AppState& app) {
  // The marker in front, where a shortened title still shows it.
  return std::string(app.model.modified() ? "• " : "") + app.document + " — Attention Lab";
}

// Builds and renders one frame, and writes it to `picture` unless that is empty; returns false
// if the picture could not be written.
bool render_frame(AppState& app, GLFWwindow* window, const std::string& picture) {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  {  // The backend polled the pointer; this frame sees it as the trickle paces it.
    ImGuiIO& io = ImGui::GetIO();
    const MouseTrickle::Pointer& pointer = input_flag(window)->mouse.next_frame();
    std::copy(pointer.down.begin(), pointer.down.end(), io.MouseDown);
    const bool outside = io.MousePos.x == -FLT_MAX;  // the backend's "no pointer": left, unfocused
    if (input_flag(window)->mouse.has_pointer() && !outside)
      io.MousePos = ImVec2(static_cast<float>(pointer.x), static_cast<float>(pointer.y));
    io.MouseWheelH += static_cast<float>(pointer.wheel_x);
    io.MouseWheel += static_cast<float>(pointer.wheel_y);
  }
  // A screenshot shows the app as it is, not where the X server left the pointer.
  if (app.options.screenshot) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  if (const auto& pointer = app.scripted_pointer) {  // --frame-stats' pan and zoom
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = pointer->pos;
    io.MouseDown[ImGuiMouseButton_Left] = pointer->down;
    io.MouseWheel += pointer->wheel;
  }
  ImGui::NewFrame();
  app.heatmaps.begin_frame();
  app.widgets.begin_frame();
  app.view.hovered.reset();
  app.keep_drawing = false;

  draw_main_window(app);

  ImGui::Render();
  int fb_width = 0, fb_height = 0;
  glfwGetFramebufferSize(window, &fb_width, &fb_height);
  glViewport(0, 0, fb_width, fb_height);
  const ImVec4 background = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(background.x, background.y, background.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

  bool ok = true;
  if (!picture.empty()) {
    if (auto error = write_back_buffer_png(picture, fb_width, fb_height)) {
      std::fprintf(stderr, "attention-lab: %s\n", error->c_str());
      ok = false;
    }
  }
  record_frame_facts(app, fb_width, fb_height);
  glfwSwapBuffers(window);
  // After the swap: a test that reads this frame's widgets and then grabs the screen finds the
  // frame there (written before, a busy machine let a grab see the black window it replaced).
  app.widgets.write();
  app.textures.collect_unused();
  app.derived.collect_unused();
  ++app.frame;
  return ok;
}

// The next picture of a screenshot run: its stage and tab, and where its widgets go.
void begin_shot(AppState& app, const Options::Shot& shot) {
  app.view.step = *step_from_name(shot.stage);
  app.view.select_tab = shot.tab;
  app.widgets.set_output(shot.widgets_out);
}

// A first trace of this size or more opens the window before it is done: at 2048 tokens
// (d_model 512, 8 heads: 408 MiB) the window took 0.65 s to show, against 0.33 for the default
// example, and 1.1-5.9 s at 4096 (1.6 GiB), most of it the first touch of the stages' fresh
// memory (docs/performance.md, thirty-eighth pass).
constexpr Index kOpenBeforeTraceBytes = Index{256} << 20;

// Whether the window opens before the first trace is done. Never when the run exists to show or
// measure the first frames (a screenshot, --out, --frames, an exported heatmap, frame stats).
bool opens_before_first_trace(const AppState& app) {
  const Options& options = app.options;
  if (options.screenshot || !options.out.empty() || options.frames > 0 || options.frame_stats ||
      !options.export_heatmap.empty())
    return false;
  const Result<Index> bytes = estimate_trace_bytes(app.model.session());
  return bytes && *bytes >= kOpenBeforeTraceBytes;
}

int run(AppState& app) {
  const Options& options = app.options;
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr,
                 "attention-lab: cannot open a window (%s).\n"
                 "There seems to be no display. Run it on a desktop, or headless under Xvfb:\n"
                 "  xvfb-run -a -s \"-screen 0 1920x1080x24\" attention-lab ...\n",
                 g_glfw_error.empty() ? "glfwInit failed" : g_glfw_error.c_str());
    return 3;
  }
  // The fonts' atlas (rasterising the CJK font's glyphs, about 0.15 s) is built on another thread
  // while the window and its GL context open (about 0.2 s under llvmpipe, the driver's start-up):
  // the window shows after the longer of the two, not their sum. It is sized for the primary
  // monitor's scale; a window that opens on a monitor of another scale builds it again.
  float expected_scale = 1.0f;
  if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) {
    float scale_y = 1.0f;
    glfwGetMonitorContentScale(monitor, &expected_scale, &scale_y);
    expected_scale = std::max(1.0f, expected_scale);
  }
  std::vector<std::string> ui_texts = app.i18n.all_strings();
  ui_texts.push_back(step_text_glyphs());  // the composed formulas' and timeline labels' symbols
  app.fonts.take_session_text(token_labels(app.model.session()));  // rare hanzi, kana, Hangul in its tokens
  std::future<FontReport> fonts_built = std::async(std::launch::async, [&app, &ui_texts, expected_scale] {
    return app.fonts.load(17.0f * expected_scale, ui_texts);
  });

  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);

  int width = options.width, height = options.height;
  if (width == 0) {
    // 90% of the monitor's work area, capped at a size where the layout breathes.
    int x = 0, y = 0, w = 1600, h = 1000;
    if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) glfwGetMonitorWorkarea(monitor, &x, &y, &w, &h);
    width = std::min(1600, std::max(800, w * 9 / 10));
    height = std::min(1000, std::max(600, h * 9 / 10));
  }
  GLFWwindow* window = glfwCreateWindow(width, height, window_title(app).c_str(), nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr,
                 "attention-lab: cannot create an OpenGL 3.3 window (%s).\n"
                 "Without a display or GL driver, run it under Xvfb:\n"
                 "  xvfb-run -a -s \"-screen 0 1920x1080x24\" attention-lab ...\n",
                 g_glfw_error.c_str());
    glfwTerminate();
    return 3;
  }
  set_window_icon(window);
  InputFlag input;
  glfwSetWindowUserPointer(window, &input);
  install_input_callbacks(window);
  place_window(app, window);
  glfwMakeContextCurrent(window);
  pin_gl_driver_for_leak_checking();  // sanitizer builds only
  // Frame stats measure what the machine can draw, not the monitor's refresh.
  glfwSwapInterval(options.screenshot || options.frame_stats ? 0 : 1);

  float scale_x = 1.0f, scale_y = 1.0f;
  glfwGetWindowContentScale(window, &scale_x, &scale_y);
  const float ui_scale = std::max(1.0f, scale_x);

  app.font_report = fonts_built.get();
  if (ui_scale != expected_scale) app.font_report = app.fonts.load(17.0f * ui_scale, ui_texts);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext(app.fonts.atlas());
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; settings persistence is issue 5's
  apply_style(ui_scale);
  for (const auto& message : app.font_report.messages) {
    app.notices.push_back(message);
    std::fprintf(stderr, "attention-lab: %s\n", message.c_str());
  }
  if (!app.font_report.missing_glyphs.empty())
    std::fprintf(stderr, "attention-lab: the font lacks %zu glyph(s) the UI uses: %s\n",
                 app.font_report.missing_glyphs.size(),
                 join_code_points(app.font_report.missing_glyphs).c_str());

  ImGui_ImplGlfw_InitForOpenGL(window, true);
  // Keys reach ImGui's backend through the trickle (the backend still chains to ours).
  glfwSetKeyCallback(window, [](GLFWwindow* w, int key, int scancode, int action, int mods) {
    input_flag(w)->seen = true;
    if (input_flag(w)->keys.accept({key, scancode, action, mods}))
      ImGui_ImplGlfw_KeyCallback(w, key, scancode, action, mods);
  });
  // The wheel reaches ImGui through the mouse trickle only, where the pointer was when it turned.
  glfwSetScrollCallback(window, [](GLFWwindow* w, double dx, double dy) {
    input_flag(w)->seen = true;
    input_flag(w)->mouse.wheel(dx, dy);
  });
  ImGui_ImplOpenGL3_Init("#version 330 core");

  {
    std::string error;
    bool vertex_embedded = false, fragment_embedded = false;
    auto vertex = read_asset("shaders/heatmap.vert", &vertex_embedded);
    auto fragment = read_asset("shaders/heatmap.frag", &fragment_embedded);
    for (auto [name, embedded] : {std::pair{"shaders/heatmap.vert", vertex_embedded},
                                  std::pair{"shaders/heatmap.frag", fragment_embedded}}) {
      if (!embedded) continue;
      app.notices.push_back(app.i18n.format("files.asset_fallback", {{"name", name}, {"folder", asset_root()}}));
      std::fprintf(stderr, "attention-lab: %s\n", app.notices.back().c_str());
    }
    if (!vertex || !fragment) error = "shaders/heatmap.vert or .frag not found";
    else app.heatmaps.init(*vertex, *fragment, &error);
    if (!error.empty()) {
      app.notices.push_back("heatmap shader: " + error);
      std::fprintf(stderr, "attention-lab: heatmap shader: %s\n", error.c_str());
    }
  }

  std::signal(SIGINT, on_quit_signal);
  std::signal(SIGTERM, on_quit_signal);

  // A screenshot renders a few frames first: ImGui sizes some windows and
  // tables from the previous frame's contents.
  constexpr int kScreenshotFrames = 4;
  int frames_to_draw = 3;
  int exit_code = 0;
  std::unique_ptr<FrameStats> stats;
  if (options.frame_stats) stats = std::make_unique<FrameStats>(options.frame_stats_out, options.frames > 0 ? options.frames : 120);
  size_t shot = 0;  // the picture being taken (options.shots), from frame shot_first_frame on
  int shot_first_frame = 0;
  std::string title = window_title(app);
  // A screenshot and --frames N draw every frame until done: nobody may be
  // there to give the input an idle app waits for.
  const bool draw_until_done = options.screenshot || options.frames > 0;
  // While the worker computes, the progress bar is redrawn at kBusyRedrawHz
  // only: on llvmpipe every frame takes both cores from the computation (at
  // n = 1024 redrawing every frame made an edit take 3x the benchmark's time to
  // show, and 40 Hz still added 10-14 ms to a 45-85 ms computation). Input
  // still redraws at once (it ends the wait), and the worker's finish wakes the loop.
  constexpr double kBusyRedrawHz = 10.0;
  app.model.set_on_finished([] { glfwPostEmptyEvent(); });
  double last_frame_time = 0.0;
  while (!app.quit && !glfwWindowShouldClose(window) && !g_quit_signal) {
    const double busy_wait = last_frame_time + 1.0 / kBusyRedrawHz - glfwGetTime();
    // A worker computes: the trace's, or a large session's gradients.
    const bool computing = app.model.computing() || gradients_pending(app);
    if (computing && !app.keep_drawing && !options.screenshot && busy_wait > 0) {
      glfwWaitEventsTimeout(busy_wait);
    } else if (draw_until_done || stats || frames_to_draw > 0 || computing || app.keep_drawing) {
      glfwPollEvents();
    } else {
      // Sleep until input, or until play mode's next step; wake now and then for signals.
      double timeout = 0.5;
      if (app.view.playing) timeout = std::clamp(app.view.next_play_time - glfwGetTime(), 0.0, 0.5);
      glfwWaitEventsTimeout(timeout);
    }
    if (glfwWindowShouldClose(window)) {  // the close button: ask first about unsaved changes
      glfwSetWindowShouldClose(window, GLFW_FALSE);
      request_quit(app);
      input.seen = true;
    }
    app.files.dropped.insert(app.files.dropped.end(), input.dropped_paths.begin(), input.dropped_paths.end());
    input.dropped_paths.clear();
    if (tick_autosave(app)) frames_to_draw = std::max(frames_to_draw, 2);
    if (app.model.poll()) frames_to_draw = std::max(frames_to_draw, 2);
    if (input.seen) {
      // ImGui settles hover and active states over the next frames.
      frames_to_draw = std::max(frames_to_draw, 3);
      input.seen = false;
    }
    if (app.view.playing) {
      const Step before = app.view.step;
      advance_play(app);
      if (app.view.step != before) frames_to_draw = std::max(frames_to_draw, 2);
    }
    if (app.model.computing() || gradients_pending(app) || app.keep_drawing)
      frames_to_draw = std::max(frames_to_draw, 1);  // progress bar, animation, a worker's result
    if (stats) {  // a redraw every frame, and the recompute phase's edit
      stats->before_frame(app);
      frames_to_draw = std::max(frames_to_draw, 1);
    }
    if (frames_to_draw == 0 && !draw_until_done) continue;
    frames_to_draw = std::max(0, frames_to_draw - 1);

    const std::uint64_t revision = app.model.revision();
    const Language language = app.i18n.language();
    const Step step = app.view.step;
    if (apply_presentation(app, window, ui_scale, ui_texts)) frames_to_draw = std::max(frames_to_draw, 2);
    // Each picture is taken kScreenshotFrames after its shot began, once the trace and a large
    // session's gradients, computed off this thread, are there.
    const bool capture = options.screenshot && app.frame + 1 >= shot_first_frame + kScreenshotFrames &&
                         !app.model.computing() && !gradients_pending(app);
    if (!render_frame(app, window, capture ? options.shots[shot].out : std::string())) exit_code = 1;
    last_frame_time = glfwGetTime();
    for (const auto& waited : input.keys.end_frame())  // the next frame sees these
      ImGui_ImplGlfw_KeyCallback(window, waited.key, waited.scancode, waited.action, waited.mods);
    if (input.mouse.waiting()) input.seen = true;  // a frame for each waiting button change
    if (stats) stats->after_swap(app);
    // Whatever the frame changed gets drawn again (an edit redraws its effect).
    if (app.model.revision() != revision || app.i18n.language() != language || app.view.step != step)
      frames_to_draw = std::max(frames_to_draw, 2);
    if (std::string now = window_title(app); now != title) {
      glfwSetWindowTitle(window, now.c_str());
      title = now;
    }
    if (capture) {
      if (++shot == options.shots.size()) break;
      begin_shot(app, options.shots[shot]);
      shot_first_frame = app.frame;
    }
    if (stats ? stats->done() : options.frames > 0 && app.frame >= options.frames) break;
  }
  if (stats) {
    int fb_width = 0, fb_height = 0;
    glfwGetWindowSize(window, &fb_width, &fb_height);
    exit_code = std::max(exit_code, stats->finish(app, fb_width, fb_height));
  }

  // `--out` outside screenshot mode: a picture of the last state (tests, bug reports).
  if (!options.screenshot && !options.out.empty() && !render_frame(app, window, options.out)) exit_code = 1;

  exit_code = std::max(exit_code, heatmap_png_exit_status(app));  // --export-heatmap

  if (!options.save_on_exit.empty()) {
    app.model.wait_idle();
    if (auto error = save_session_file(options.save_on_exit, app.model.session())) {
      std::fprintf(stderr, "attention-lab: %s\n", error->message.c_str());
      exit_code = 1;
    }
  }

  finish_documents(app, window, g_quit_signal != 0);

  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  // GL objects must go while the context exists.
  app.textures = TextureCache();
  app.heatmaps.shutdown();
  ImGui::DestroyContext();
  app.model.set_on_finished(nullptr);  // no wake-ups once GLFW is gone
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (auto problem = parse_options(argc, argv, &options)) {
    std::fprintf(stderr, "attention-lab: %s\n%s", problem->c_str(), usage_text());
    return 2;
  }
  if (options.lesson >= lesson_count()) {  // it opened the last step instead
    std::fprintf(stderr, "attention-lab: --lesson %d: the guided tour has steps 1–%d\n", options.lesson + 1,
                 lesson_count());
    return 2;
  }
  const std::string source = options.source.empty() ? default_preset_name() : options.source;
  // A file that cannot be opened still opens the window, with the reason shown.
  StartDocument start = load_start_document(source);
  if (start.problem) std::fprintf(stderr, "attention-lab: %s\n", start.problem->message.c_str());
  if (start.problem && start.path.empty() && options.screenshot) return 1;  // a picture of the wrong session helps no one
  const bool start_failed = start.problem.has_value();
  std::error_code same_error;
  if (start.problem && start.path.empty() && !options.save_on_exit.empty() &&
      std::filesystem::equivalent(source, options.save_on_exit, same_error)) {
    // The window would show the default example and save it over the file that failed to load.
    std::fprintf(stderr, "attention-lab: --save-on-exit %s is the file that failed to load; not opening, so it "
                         "is not replaced by the default example\n", options.save_on_exit.c_str());
    return 2;
  }
  if (!start.problem)  // a --stage, --head or --pin this session lacks: the window showed another silently
    if (auto problem = check_options_for_session(options, start.session)) {
      std::fprintf(stderr, "attention-lab: %s\n", problem->c_str());
      return 2;
    }
  const Step first_step = options.stage.empty() ? ViewState{}.step : *step_from_name(options.stage);
  ComputeOptions compute;
  compute.memory_limit_bytes = options.memory_limit;
  compute.peak_stages = stages_step_shows(start.session, first_step);  // the first trace's heatmaps, reduced ahead
  auto app = std::make_unique<AppState>(std::move(start.session), compute);
  // With the weights always: the token lines, the heads view and the labs read them (view_stages.hpp).
  if (options.keep) app->model.set_keep(*options.keep | stage_set({Stage::Weights}));
  app->options = options;
  std::vector<std::string> warnings;
  app->i18n.load(&warnings);
  for (const auto& warning : warnings) {
    app->notices.push_back(warning);
    std::fprintf(stderr, "attention-lab: %s\n", warning.c_str());
  }
  app->i18n.set_language(options.language.value_or(language_from_environment()));
  init_documents(*app, start);  // settings (language), recovery offer
  app->view.step = first_step;
  app->view.only_head = options.head;
  if (!options.export_heatmap.empty()) request_heatmap_png(*app, options.export_heatmap, options.heatmap_out, options.slide_width);
  app->labs.quiz.hide_cell = options.quiz_hide_cell;
  app->widgets.set_output(options.widgets_out);
  // The first frame shows the trace, not a progress bar, unless computing it would keep the
  // window from showing for long: then it opens at once and the trace follows, as after File > Open.
  if (!opens_before_first_trace(*app)) app->model.wait_idle();
  app->model.poll();
  const int exit_code = run(*app);
  // The pictures of a session that did not load show its problem; a script must still learn of it.
  return options.screenshot && start_failed && exit_code == 0 ? 1 : exit_code;
}

}  // namespace al::gui
