# Helpers for the command-line tests (sourced). Each test script exits 0 on success,
# 1 on failure, 77 to skip.
set -u
BIN=${TVMJIT_BIN:?TVMJIT_BIN must name the tvmjit binary}
SRC=${TVMJIT_SOURCE_DIR:?}
SHARED=${TVMJIT_SHARED_DIR:-$SRC/../shared}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
passes=0

# expect_exit CODE DESCRIPTION -- command...: runs the command, keeps stdout/stderr in
# $TMP/out and $TMP/err, and checks the exit code.
expect_exit() {
  local want=$1 what=$2; shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; sed 's/^/  stderr: /' "$TMP/err" | head -20
    failures=$((failures + 1)); return 1
  fi
  passes=$((passes + 1))
}

# expect_text FILE TEXT DESCRIPTION: FILE contains TEXT (fixed string).
expect_text() {
  if ! grep -qF -- "$2" "$1"; then
    echo "FAIL: $3: missing text: $2"; sed 's/^/  got: /' "$1" | head -20
    failures=$((failures + 1)); return 1
  fi
  passes=$((passes + 1))
}

finish() {
  echo "$passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}
