#include "teaching/i18n_tables.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

namespace al::testing {

Table load_table(const std::string& lang) {
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

const Table& table(bool chinese) {
  static const Table en = load_table("en"), zh = load_table("zh");
  return chinese ? zh : en;
}

TextLookup lookup_in(bool chinese) {
  return [chinese](const std::string& key) {
    auto it = table(chinese).find(key);
    CHECK_MESSAGE(it != table(chinese).end(), "missing key " << key << (chinese ? " (zh)" : " (en)"));
    return it == table(chinese).end() ? key : it->second;
  };
}

std::vector<std::string> english_words(const std::string& text) {
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
  std::vector<std::string> words;
  // Placeholders, "quoted" values and dotted paths (config.mask.custom) a learner types in a session file.
  const std::string prose = erase_all(text, "\\{[a-z_]+\\}|\"[^\"]*\"|[a-z_]+(\\.[a-z_]+)+");
  for (const std::string& word : find_all(prose, "[A-Za-z_][A-Za-z_0-9]{3,}"))
    if (!allowed.count(word) && word.find('_') == std::string::npos)  // x_kv, W_QKV: math
      words.push_back(word);
  return words;
}

namespace {
const std::regex& compiled(const std::string& pattern) {
  static std::map<std::string, std::regex> cache;
  auto it = cache.find(pattern);
  if (it == cache.end()) it = cache.emplace(pattern, std::regex(pattern)).first;
  return it->second;
}
}  // namespace

std::vector<std::string> find_all(const std::string& text, const std::string& pattern, int group) {
  std::vector<std::string> matches;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), compiled(pattern)); it != std::sregex_iterator(); ++it)
    matches.push_back((*it)[group].str());
  return matches;
}

bool found(const std::string& text, const std::string& pattern) { return std::regex_search(text, compiled(pattern)); }

std::string erase_all(const std::string& text, const std::string& pattern) {
  return std::regex_replace(text, compiled(pattern), "");
}

}  // namespace al::testing
