// The configuration of the computation: mode, self/cross, sizes, heads and K/V
// heads, positions, sliding window and global tokens, bias, scale, mask fill,
// dropout, token labels. Each control edits a copy of the
// session and hands it to the model; an invalid value shows its error below it.
#include <imgui.h>
#include <imgui_internal.h>  // ImTextCharToUtf8: a dropped character, named
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>

#include "base/number_text.hpp"
#include "editing/config_edits.hpp"
#include "panels/panels.hpp"
#include "widgets/heatmap_widget.hpp"
#include "widgets/text_wrap.hpp"

namespace al::gui {

namespace {

// A mask fill as the combo names it, in ASCII for typing: -1e9 and -1e-20, not -1e+09 and -1e-20
// in one field and -1e+20 in the next.
std::string fill_text(double fill) {
  const std::string text = shortest_text(fill);
  const size_t e = text.find('e');
  if (e == std::string::npos) return text;
  std::string exponent = text.substr(e + 1);
  const bool negative = exponent[0] == '-';
  if (negative || exponent[0] == '+') exponent.erase(0, 1);
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return text.substr(0, e + 1) + (negative ? "-" : "") + exponent;
}

// The number typed into the fill field (a leading "−" or "∞" as the combo writes them), or nothing.
std::optional<double> parse_fill(std::string text) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"−", "-"}, {"∞", "inf"}})
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) text.replace(at, from.size(), to);
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end == begin) return std::nullopt;
  while (*end == ' ') ++end;
  if (*end != '\0') return std::nullopt;
  return value;
}

// An integer field; returns true with the new value when the learner changed it, and in
// `from` the session to apply it to. While the field is active that is the session it showed
// when typing began, not the last keystroke's: typing "12" passes through 1, and resizing
// keystroke by keystroke cut the tokens to one and grew random rows in their place.
bool int_field(AppState& app, const char* label_key, const char* id, Index current, Index* out,
               const Session& session, const Session** from) {
  int value = static_cast<int>(current);
  const float width = 7.0f * ImGui::GetFontSize();
  std::optional<FieldBase>& base = app.view.field_base;
  // Before the field reads them: the characters typed this frame that ImGui's integer field drops
  // without a word (all but digits and + - * / .).
  std::string refused;
  if (base && base->field == id && ImGui::GetIO().WantTextInput)
    for (ImWchar c : ImGui::GetIO().InputQueueCharacters)
      if (!(c >= '0' && c <= '9') && !(c < 128 && std::strchr("+-*/.", static_cast<char>(c)))) {
        char utf8[5];
        refused = ImTextCharToUtf8(utf8, c);
      }
  ImGui::SetNextItemWidth(width);
  const bool changed = ImGui::InputInt((std::string(app.tr(label_key)) + "###" + id).c_str(), &value);
  if (ImGui::IsItemActive()) {  // its text, or a +/- button held down
    if (!base || base->field != id) base = FieldBase{id, session, ""};
    if (!refused.empty()) base->refused = refused;
  } else if (base && base->field == id) {
    base.reset();
  }
  *from = base && base->field == id ? &base->session : &session;
  app.widgets.add_last_item(std::string("config.") + id);
  // The "+" button is the last square of the field (tests click it).
  const ImVec2 min = ImGui::GetItemRectMin();
  const float button = ImGui::GetFrameHeight();
  app.widgets.add(std::string("config.") + id + ".plus", ImVec2(min.x + width - button, min.y),
                  ImVec2(min.x + width, min.y + button));
  // Said while typing goes on: the field's own text shows what it kept.
  if (base && base->field == id && !base->refused.empty()) {
    const std::string text = app.i18n.format("config.size.not_a_digit", {{"char", base->refused}});
    wrapped_text_colored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), text);
    app.widgets.add_last_item(std::string("config.") + id + ".bad");
    app.widgets.set_fact(std::string("config.") + id + ".bad", text);
  }
  *out = value;
  return changed && value != current;
}

const double kInfinity = std::numeric_limits<double>::infinity();

// "0, 3" <-> {0, 3}; false when the text holds something else than whole numbers.
std::string positions_text(const std::vector<Index>& positions) {
  std::string text;
  for (Index p : positions) text += (text.empty() ? "" : ", ") + std::to_string(p);
  return text;
}

bool parse_positions(const std::string& text, std::vector<Index>* out) {
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), ',', ' ');
  std::istringstream in(spaced);
  std::vector<Index> positions;
  long long p = 0;
  while (in >> p) positions.push_back(static_cast<Index>(p));
  if (!in.eof()) return false;
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  *out = std::move(positions);
  return true;
}

// K/V heads, positions, the sliding window and global tokens (issue #14). Each
// change is one undo step; an impossible combination shows validate()'s reason.
void draw_modern_options(AppState& app, const Session& s) {
  const Config& c = s.config;
  const float font = ImGui::GetFontSize();

  // K/V heads: only divisors of num_heads, named MQA (1), GQA, MHA (= h).
  if (c.num_heads >= 1) {
    auto kv_name = [&](Index kv) {
      const char* kind = kv == c.num_heads ? "config.kv_heads.mha" : kv == 1 ? "config.kv_heads.mqa" : "config.kv_heads.gqa";
      return std::to_string(kv) + " · " + app.tr(kind);
    };
    ImGui::SetNextItemWidth(10.0f * font);
    if (ImGui::BeginCombo((std::string(app.tr("config.kv_heads")) + "###kv_heads").c_str(), kv_name(c.kv_heads()).c_str())) {
      for (Index kv = 1; kv <= c.num_heads; ++kv) {
        if (c.num_heads % kv != 0) continue;
        ImGui::PushID(static_cast<int>(kv));
        if (ImGui::Selectable(kv_name(kv).c_str(), kv == c.kv_heads()) && kv != c.kv_heads())
          app.edit(with_heads(s, c.num_heads, kv), "edit.kv_heads", "config.kv_heads");
        app.widgets.add_last_item("config.kv_heads.option." + std::to_string(kv));
        ImGui::PopID();
      }
      ImGui::EndCombo();
    }
    app.widgets.add_last_item("config.kv_heads");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", app.tr("config.kv_heads.tip"));
    show_error_if_from(app, "config.kv_heads");
  }

  // Positions: none, sinusoidal (added to X), RoPE (rotates q, k), ALiBi (biases scores).
  const char* kinds[] = {app.tr("config.positional.none"), app.tr("config.positional.sinusoidal"),
                         app.tr("config.positional.rope"), app.tr("config.positional.alibi")};
  const int kind = static_cast<int>(c.positional.type);
  ImGui::SetNextItemWidth(10.0f * font);
  if (ImGui::BeginCombo((std::string(app.tr("config.positional")) + "###positional").c_str(), kinds[kind])) {
    for (int i = 0; i < 4; ++i) {
      if (ImGui::Selectable(kinds[i], i == kind) && i != kind) {
        PositionalSpec next = c.positional;
        next.type = static_cast<PositionalType>(i);
        app.edit(with_positional(s, next), "edit.positional", "config.positional");
      }
      app.widgets.add_last_item("config.positional.option." + std::to_string(i));
    }
    ImGui::EndCombo();
  }
  app.widgets.add_last_item("config.positional");
  if (c.positional.type == PositionalType::Rope) {
    int style = c.positional.rope_style == RopeStyle::Interleaved ? 1 : 0;
    bool style_changed = ImGui::RadioButton((std::string(app.tr("config.rope_half")) + "###rope_half").c_str(), &style, 0);
    app.widgets.add_last_item("config.rope_half");
    ImGui::SameLine();
    style_changed |= ImGui::RadioButton((std::string(app.tr("config.rope_interleaved")) + "###rope_interleaved").c_str(), &style, 1);
    app.widgets.add_last_item("config.rope_interleaved");
    if (style_changed) {
      PositionalSpec next = c.positional;
      next.rope_style = style == 1 ? RopeStyle::Interleaved : RopeStyle::Half;
      app.edit(with_positional(s, next), "edit.rope_style", "config.positional");
    }
    double base = c.positional.rope_base;
    ImGui::SetNextItemWidth(10.0f * font);
    if (ImGui::InputDouble((std::string(app.tr("config.rope_base")) + "###rope_base").c_str(), &base, 0.0, 0.0, "%.6g",
                           ImGuiInputTextFlags_EnterReturnsTrue) && base != c.positional.rope_base) {
      PositionalSpec next = c.positional;
      next.rope_base = base;
      app.edit(with_positional(s, next), "edit.rope_base", "config.positional");
    }
    app.widgets.add_last_item("config.rope_base");
  }
  show_error_if_from(app, "config.positional");

  // Sliding window: off, or w keys (|i − j| < w).
  bool windowed = c.mask.window > 0;
  if (ImGui::Checkbox((std::string(app.tr("config.window")) + "###window_on").c_str(), &windowed))
    app.edit(with_window(s, windowed ? std::max<Index>(1, s.len_kv() / 2) : 0), "edit.window", "config.window");
  app.widgets.add_last_item("config.window_on");
  if (c.mask.window > 0) {
    ImGui::SameLine();
    Index value = 0;
    const Session* from = &s;
    if (int_field(app, "config.window.size", "window", c.mask.window, &value, s, &from) && value >= 1)
      app.edit(with_window(*from, value), "edit.window", "config.window", "config.window");
  }
  show_error_if_from(app, "config.window");

  // Global tokens: positions, "0, 3".
  std::string global = positions_text(c.mask.global_tokens);
  ImGui::SetNextItemWidth(10.0f * font);
  if (ImGui::InputTextWithHint((std::string(app.tr("config.global_tokens")) + "###global_tokens").c_str(),
                               app.tr("config.global_tokens.hint"), &global, ImGuiInputTextFlags_EnterReturnsTrue)) {
    std::vector<Index> positions;
    if (parse_positions(global, &positions)) {
      Session next = s;
      next.config.mask.global_tokens = std::move(positions);
      app.edit(std::move(next), "edit.global_tokens", "config.global_tokens");
      app.view.refusal.reset();
    } else {
      refuse_typing(app, "config.global_tokens.bad", "config.global_tokens.bad", {{"text", global}});
    }
  }
  app.widgets.add_last_item("config.global_tokens");
  show_refusal(app, "config.global_tokens.bad");
  show_error_if_from(app, "config.global_tokens");
}

}  // namespace

void draw_config_panel(AppState& app) {
  // A copy: an edit below replaces the model's session while we still read this one.
  const Session s = app.model.session();
  const Config& c = s.config;
  const float font = ImGui::GetFontSize();

  // Mode and kind of attention.
  ImGui::TextUnformatted(app.tr("config.mode"));
  int mode = c.mode == InputMode::Direct ? 1 : 0;
  bool mode_changed = ImGui::RadioButton((std::string(app.tr("config.mode.projection")) + "###mode_proj").c_str(), &mode, 0);
  app.widgets.add_last_item("config.mode.projection");
  ImGui::SameLine();
  mode_changed |= ImGui::RadioButton((std::string(app.tr("config.mode.direct")) + "###mode_direct").c_str(), &mode, 1);
  app.widgets.add_last_item("config.mode.direct");
  if (mode_changed)
    app.edit(with_mode(s, mode == 1 ? InputMode::Direct : InputMode::Projection), "edit.mode", "config.mode");
  show_error_if_from(app, "config.mode");

  int kind = c.attention == AttentionKind::Cross ? 1 : 0;
  bool kind_changed = ImGui::RadioButton((std::string(app.tr("config.self")) + "###self").c_str(), &kind, 0);
  app.widgets.add_last_item("config.self");
  ImGui::SameLine();
  kind_changed |= ImGui::RadioButton((std::string(app.tr("config.cross")) + "###cross").c_str(), &kind, 1);
  app.widgets.add_last_item("config.cross");
  if (kind_changed)
    app.edit(with_attention(s, kind == 1 ? AttentionKind::Cross : AttentionKind::Self), "edit.attention",
             "config.attention");
  show_error_if_from(app, "config.attention");

  ImGui::Separator();
  // Sizes: one undo step per field while typing or clicking +/-, each applied to the session
  // the field started from (int_field).
  Index value = 0;
  const Session* from = &s;
  if (int_field(app, "config.batch", "batch", s.batch(), &value, s, &from) && value >= 1)
    app.edit(with_sizes(*from, value, from->len_q(), from->len_kv(), from->config.d_model), "edit.batch",
             "config.batch", "config.batch");
  show_error_if_from(app, "config.batch");
  if (int_field(app, "config.len_q", "len_q", s.len_q(), &value, s, &from) && value >= 1) {
    const Index len_kv = from->config.attention == AttentionKind::Self ? value : from->len_kv();
    app.edit(with_sizes(*from, from->batch(), value, len_kv, from->config.d_model), "edit.len_q", "config.len_q",
             "config.len_q");
  }
  show_error_if_from(app, "config.len_q");
  if (c.attention == AttentionKind::Cross) {
    if (int_field(app, "config.len_kv", "len_kv", s.len_kv(), &value, s, &from) && value >= 1)
      app.edit(with_sizes(*from, from->batch(), from->len_q(), value, from->config.d_model), "edit.len_kv",
               "config.len_kv", "config.len_kv");
    show_error_if_from(app, "config.len_kv");
  }
  if (int_field(app, "config.d_model", "d_model", c.d_model, &value, s, &from) && value >= 1)
    app.edit(with_sizes(*from, from->batch(), from->len_q(), from->len_kv(), value), "edit.d_model",
             "config.d_model", "config.d_model");
  show_error_if_from(app, "config.d_model");
  // num_heads may not divide d_model: the model reports it, we show it here. K/V
  // heads that no longer divide it fall back to one per query head.
  if (int_field(app, "config.heads", "heads", c.num_heads, &value, s, &from))
    app.edit(with_heads(*from, value, from->config.num_kv_heads), "edit.heads", "config.heads", "config.heads");
  show_error_if_from(app, "config.heads");
  draw_modern_options(app, s);

  ImGui::Separator();
  if (c.mode == InputMode::Projection) {
    bool bias = c.bias;
    if (ImGui::Checkbox((std::string(app.tr("config.bias")) + "###bias").c_str(), &bias))
      app.edit(with_bias(s, bias), "edit.bias", "config.bias");
    app.widgets.add_last_item("config.bias");
    ImGui::SameLine();
    bool fused = s.weights.fused();
    if (ImGui::Checkbox((std::string(app.tr("config.fused")) + "###fused").c_str(), &fused))
      app.edit(with_fused(s, fused), "edit.fused", "config.fused");
    app.widgets.add_last_item("config.fused");
    show_error_if_from(app, "config.bias");
    show_error_if_from(app, "config.fused");
  }

  // Scale: √d_k, none, or a custom factor.
  const char* scale_names[] = {app.tr("config.scale.sqrt"), app.tr("config.scale.none"),
                               app.tr("config.scale.custom")};
  int scale_mode = static_cast<int>(c.scale.mode);
  ImGui::SetNextItemWidth(10.0f * font);
  if (ImGui::BeginCombo((std::string(app.tr("config.scale")) + "###scale").c_str(), scale_names[scale_mode])) {
    for (int i = 0; i < 3; ++i) {
      if (ImGui::Selectable(scale_names[i], i == scale_mode) && i != scale_mode) {
        Session next = s;
        next.config.scale.mode = static_cast<ScaleMode>(i);
        app.edit(std::move(next), "edit.scale", "config.scale");
      }
      app.widgets.add_last_item("config.scale.option." + std::to_string(i));
    }
    ImGui::EndCombo();
  }
  app.widgets.add_last_item("config.scale");
  if (c.scale.mode == ScaleMode::Custom) {
    double factor = c.scale.factor;
    ImGui::SetNextItemWidth(10.0f * font);
    if (ImGui::InputDouble((std::string(app.tr("config.scale.factor")) + "###scale_factor").c_str(), &factor, 0.05, 0.5, "%.4g")) {
      Session next = s;
      next.config.scale.factor = factor;
      app.edit(std::move(next), "edit.scale_factor", "config.scale", "config.scale_factor");
    }
    app.widgets.add_last_item("config.scale_factor");
  }
  show_error_if_from(app, "config.scale");

  // Mask fill: the values the seeds use (and misuse), or any number.
  struct FillChoice { const char* label; double value; };
  const FillChoice fills[] = {{"−∞", -kInfinity}, {"−1e9", -1e9}, {"−1e20", -1e20}, {"−1e-20", -1e-20}, {"0", 0.0}};
  std::string current_fill = "…";
  for (const auto& f : fills)
    if (f.value == c.mask_fill) current_fill = f.label;
  ImGui::SetNextItemWidth(10.0f * font);
  if (ImGui::BeginCombo((std::string(app.tr("config.mask_fill")) + "###mask_fill").c_str(), current_fill.c_str())) {
    for (size_t i = 0; i < std::size(fills); ++i) {
      if (ImGui::Selectable(fills[i].label, fills[i].value == c.mask_fill)) {
        Session next = s;
        next.config.mask_fill = fills[i].value;
        app.edit(std::move(next), "edit.mask_fill", "config.mask_fill");
        app.view.refusal.reset();
      }
      app.widgets.add_last_item("config.mask_fill.option." + std::to_string(i));
    }
    ImGui::EndCombo();
  }
  app.widgets.add_last_item("config.mask_fill");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", app.tr("config.mask_fill.tip"));
  std::string fill = fill_text(c.mask_fill);
  app.widgets.set_fact("config.mask_fill_value", fill);
  ImGui::SetNextItemWidth(10.0f * font);
  if (ImGui::InputText((std::string(app.tr("config.mask_fill.value")) + "###mask_fill_value").c_str(), &fill,
                       ImGuiInputTextFlags_EnterReturnsTrue)) {
    const std::optional<double> typed = parse_fill(fill);
    if (typed) app.view.refusal.reset();
    else refuse_typing(app, "config.mask_fill.bad", "config.mask_fill.bad", {{"text", fill}, {"fill", fill_text(c.mask_fill)}});
    if (typed && fill_text(*typed) != fill_text(c.mask_fill)) {
      Session next = s;
      next.config.mask_fill = *typed;
      app.edit(std::move(next), "edit.mask_fill", "config.mask_fill");
    }
  }
  app.widgets.add_last_item("config.mask_fill_value");
  show_refusal(app, "config.mask_fill.bad");  // the field shows the fill again: say what was refused
  show_error_if_from(app, "config.mask_fill");

  // Dropout.
  ImGui::Separator();
  float p = static_cast<float>(c.dropout.p);
  ImGui::SetNextItemWidth(10.0f * font);
  const bool p_changed = ImGui::SliderFloat((std::string(app.tr("config.dropout_p")) + "###dropout_p").c_str(), &p, 0.0f, 0.9f, "%.2f");
  app.widgets.add_last_item("config.dropout_p");
  if (ImGui::IsItemActivated()) ++app.view.drag_generation;  // one undo step per drag
  if (p_changed) {
    Session next = s;
    next.config.dropout.p = p;
    app.edit(std::move(next), "edit.dropout_p", "config.dropout",
             "dropout_p/" + std::to_string(app.view.drag_generation));
  }
  bool training = c.dropout.training;
  if (ImGui::Checkbox((std::string(app.tr("config.dropout_training")) + "###dropout_training").c_str(), &training)) {
    Session next = s;
    next.config.dropout.training = training;
    app.edit(std::move(next), "edit.dropout_training", "config.dropout");
  }
  app.widgets.add_last_item("config.dropout_training");
  int seed = static_cast<int>(c.dropout.seed);
  ImGui::SetNextItemWidth(7.0f * font);
  if (ImGui::InputInt((std::string(app.tr("config.dropout_seed")) + "###dropout_seed").c_str(), &seed) && seed >= 0) {
    Session next = s;
    next.config.dropout.seed = static_cast<std::uint64_t>(seed);
    app.edit(std::move(next), "edit.dropout_seed", "config.dropout", "config.dropout_seed");
  }
  app.widgets.add_last_item("config.dropout_seed");
  show_error_if_from(app, "config.dropout");

  // Token labels: the names of the rows (queries) and of the keys.
  ImGui::Separator();
  // Beyond a few dozen tokens, labels are better edited in the session file.
  constexpr Index kMaxTokenFields = 32;
  auto token_fields = [&](const std::vector<std::string>& tokens, Index length, bool key_side) {
    const Index count = std::min(length, kMaxTokenFields);
    for (Index i = 0; i < count; ++i) {
      std::string token = i < static_cast<Index>(tokens.size()) ? tokens[i] : "";
      ImGui::PushID(static_cast<int>(i) + (key_side ? 100000 : 0));
      ImGui::SetNextItemWidth(5.0f * font);
      // An empty label shows what the heatmaps write instead: the index.
      if (ImGui::InputTextWithHint("##token", axis_label(nullptr, i).c_str(), &token)) {
        Session next = s;
        auto& list = key_side ? next.tokens_kv : next.tokens;
        if (static_cast<Index>(list.size()) < length) list.resize(static_cast<size_t>(length));
        list[i] = token;
        app.edit(std::move(next), "edit.token", "config.tokens",
                 "token/" + std::to_string(key_side) + "/" + std::to_string(i));
      }
      app.widgets.add_last_item(std::string(key_side ? "config.token_kv." : "config.token.") + std::to_string(i));
      ImGui::PopID();
      if ((i + 1) % 4 != 0 && i + 1 < count) ImGui::SameLine();
    }
    if (length > count) {  // say where the rest went, not leave a learner to think there are only 32
      const std::string more = app.i18n.format("config.tokens_more", {{"first", std::to_string(count)},
                                                                     {"last", std::to_string(length - 1)},
                                                                     {"key", key_side ? "tokens_kv" : "tokens"}});
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextDisabled("%s", more.c_str());
      ImGui::PopTextWrapPos();
      const char* name = key_side ? "config.tokens_kv_more" : "config.tokens_more";
      app.widgets.add_last_item(name);
      app.widgets.set_fact(name, more);
    }
  };
  ImGui::TextUnformatted(app.tr("config.tokens"));
  token_fields(s.tokens, s.len_q(), false);
  if (c.attention == AttentionKind::Cross) {
    ImGui::TextUnformatted(app.tr("config.tokens_kv"));
    token_fields(s.tokens_kv, s.len_kv(), true);
  }
  show_error_if_from(app, "config.tokens");
}

}  // namespace al::gui
