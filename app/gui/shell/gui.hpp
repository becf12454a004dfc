#pragma once
// Entry point of the desktop app, called by app/main.cpp for every command
// that needs a window: no command (open the default example), a preset or
// session path, and `screenshot ...`.
namespace al::gui {

// argv as given to main(); returns the process exit code.
int main(int argc, char** argv);

// The window's command-line options (shell/options.cpp), for --help and after a wrong one.
const char* usage_text();

}  // namespace al::gui
