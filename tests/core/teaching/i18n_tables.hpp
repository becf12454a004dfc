#pragma once
// What the text tests share: the translation tables as the app merges them, and a
// finder of English words in a Chinese text.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "teaching/stage_text.hpp"

namespace al::testing {

using Table = std::map<std::string, std::string>;

// Every assets/i18n/*<lang>.json merged, as the app does.
inline Table load_table(const std::string& lang) {
  Table table;
  const std::string suffix = lang + ".json";
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ATTENTION_LAB_SOURCE_DIR) + "/assets/i18n")) {
    const std::string name = entry.path().filename().string();
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::ifstream in(entry.path());
    const auto json = nlohmann::json::parse(in);
    for (auto& [key, value] : json.items()) table[key] = value.get<std::string>();
  }
  return table;
}

inline const Table& table(bool chinese) {
  static const Table en = load_table("en"), zh = load_table("zh");
  return chinese ? zh : en;
}

// A lookup that fails the test on a key missing in that language.
inline TextLookup lookup_in(bool chinese) {
  return [chinese](const std::string& key) {
    auto it = table(chinese).find(key);
    CHECK_MESSAGE(it != table(chinese).end(), "missing key " << key << (chinese ? " (zh)" : " (en)"));
    return it == table(chinese).end() ? key : it->second;
  };
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// English words in a Chinese text: identifiers a learner reads as code or math are allowed.
inline std::vector<std::string> english_words(const std::string& text) {
  static const std::set<std::string> allowed = {
      "softmax", "Softmax", "dropout", "Dropout", "PyTorch", "torch", "masked_fill", "scaled_dot_product_attention",
      "MultiheadAttention", "key_padding_mask", "attn_mask", "True", "False", "Concat", "exp", "max",
      "NaN", "inf", "mask_ij", "d_model", "d_k", "W_O", "W_Q", "W_K", "W_V", "b_O", "X_q", "X_kv", "float32",
      "float64", "Lq", "Lk", "FlashAttention", "Flash", "HOME" /* $HOME */, "QKV", "nn", "F", "FLOPs", "SRAM", "HBM", "GPU", "fill",
      "Ctrl", "Attention", "forward", "diag", "elu", "concat", "Adam",  // the optimiser's name
      "LaTeX", "Markdown", "default",  // file formats, and the name of a built-in example
      "JSON", "true", "false", "null",
      // Names of methods, models and authors, written as in the papers: 旋转位置编码 RoPE.
      "RoPE", "ALiBi", "Llama", "Mistral", "Vaswani", "Ainslie", "Longformer", "RoFormer", "Press", "Meta", "GPT",
      "base"};  // RoPE's base, as the formula θ = p·base^(−2k/d_k) writes it
  std::vector<std::string> found;
  // Placeholders, "quoted" values and dotted paths (config.mask.custom) a learner types in a session file.
  static const std::regex placeholder("\\{[a-z_]+\\}|\"[^\"]*\"|[a-z_]+(\\.[a-z_]+)+");
  const std::string prose = std::regex_replace(text, placeholder, "");
  static const std::regex word("[A-Za-z_][A-Za-z_0-9]{3,}");
  for (auto it = std::sregex_iterator(prose.begin(), prose.end(), word); it != std::sregex_iterator(); ++it)
    if (!allowed.count(it->str()) && it->str().find('_') == std::string::npos)  // x_kv, W_QKV: math
      found.push_back(it->str());
  return found;
}

}  // namespace al::testing
