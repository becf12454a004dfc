#pragma once
#include <optional>
#include <string>

#include "state/app_state.hpp"

namespace al::gui {

// Fills `options` from argv; returns a message when the command line is wrong.
std::optional<std::string> parse_options(int argc, char** argv, Options* options);

}  // namespace al::gui
