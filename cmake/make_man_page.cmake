# Writes the man page attention-lab.1 from the built binary's own --help and --version,
# so the page and the help text can never disagree.
# Usage: cmake -DBINARY=path/to/attention-lab -DOUT=attention-lab.1 -DDATE=YYYY-MM-DD -P make_man_page.cmake
execute_process(COMMAND ${BINARY} --help OUTPUT_VARIABLE help RESULT_VARIABLE help_result)
execute_process(COMMAND ${BINARY} --version OUTPUT_VARIABLE version RESULT_VARIABLE version_result
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT help_result EQUAL 0 OR NOT version_result EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "${BINARY} --help / --version failed")
endif()
string(REGEX REPLACE "\n.*" "" version "${version}")  # "attention-lab X.Y.Z"; the kernel path is the build machine's

# roff: a backslash is written \e, and a line starting with . or ' would be a request.
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
# The first paragraph is the one-line summary; the rest (usage, stages, files) is kept as
# laid out in the help text.
string(FIND "${help}" "\n\n" summary_end)
string(SUBSTRING "${help}" 0 ${summary_end} summary)
math(EXPR body_start "${summary_end} + 2")
string(SUBSTRING "${help}" ${body_start} -1 body)
string(REGEX REPLACE "^Attention Lab: " "" summary "${summary}")

file(WRITE ${OUT} ".TH ATTENTION-LAB 1 \"${DATE}\" \"${version}\" \"User Commands\"
.SH NAME
attention-lab \\- ${summary}
.SH SYNOPSIS
.B attention-lab
[\\fIpreset\\fR | \\fIsession.json\\fR]
.br
.B attention-lab
\\fIcommand\\fR ...
.SH DESCRIPTION
The text below is what
.B attention-lab --help
prints.
.PP
.nf
${body}.fi
.SH ENVIRONMENT
.TP
.B XDG_CONFIG_HOME
settings (language, window, recent files) are kept in \\fI$XDG_CONFIG_HOME/attention-lab/\\fR
(default \\fI~/.config/attention-lab/\\fR).
.TP
.B XDG_STATE_HOME
the recovery copy of unsaved work is kept in \\fI$XDG_STATE_HOME/attention-lab/\\fR
(default \\fI~/.local/state/attention-lab/\\fR).
.TP
.B ATTENTION_LAB_CPU
\\fBbaseline\\fR runs the portable x86-64 kernels even on a CPU with AVX2 and FMA
(\\fBattention-lab --version\\fR shows which kernels run).
.TP
.B ATTENTION_LAB_ASSET_DIR
read translations, shaders and icons from this folder instead of the installed ones.
.SH FILES
Session files are JSON; saved as \\fINAME.attention.json\\fR the desktop opens them with Attention Lab.
")
