#pragma once
#include <optional>
#include <string>

#include "state/app_state.hpp"

namespace al::gui {

// Fills `options` from argv; returns a message when the command line is wrong.
std::optional<std::string> parse_options(int argc, char** argv, Options* options);
// After the session is loaded: why an option names what it does not have (a stage its positions
// leave out, a head or a pinned cell past its end). The window used to show another silently.
std::optional<std::string> check_options_for_session(const Options& options, const Session& session);

}  // namespace al::gui
