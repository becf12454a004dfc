# Sourced by the command-line tests (it is not a test itself: no test_ prefix).
# expect_error <substring of the message> <args...> runs "$bin" <args...> and counts a
# failure in $failures unless it is refused cleanly: an exit code of 1..127 (non-zero, and
# not a crash by a signal) and an "attention-lab: error:" line on stderr holding the substring.
expect_error() {
  local want=$1; shift
  local err rc
  err=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ]; then
    echo "FAIL: attention-lab $* exited $rc (want 1..127)"; failures=$((failures + 1)); return
  fi
  if ! grep -q "^attention-lab: error: " <<<"$err"; then
    echo "FAIL: attention-lab $*: no 'attention-lab: error:' line: $err"; failures=$((failures + 1)); return
  fi
  if ! grep -qF -- "$want" <<<"$err"; then
    echo "FAIL: attention-lab $*: message lacks '$want': $err"; failures=$((failures + 1)); return
  fi
  echo "ok ($rc): ${err%%$'\n'*}"
}
