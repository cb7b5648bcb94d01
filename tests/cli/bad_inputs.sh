#!/usr/bin/env bash
# The bad-input catalogue: every tests/bad_inputs/*.case (format in
# tests/bad_inputs/README.md) must exit with its code, print exactly its stderr, and
# leave the working directory as its setup left it (nothing written half-way).
# Usage: bad_inputs.sh [CASE-NAME...] (default: all); BAD_INPUTS_UPDATE=1 prints what
# each case gives instead of checking (to write a new case, never to bless a change).
. "$(dirname "$0")/lib.bash"
export LC_ALL=C
CASES=$SRC/tests/bad_inputs

run_case() {
  local file=$1 name work line setup=() envs=() command="" want_exit="" in_stderr=0
  name=$(basename "$file" .case)
  work=$TMP/$name
  mkdir -p "$work"
  : >"$TMP/want_err"
  while IFS= read -r line || [ -n "$line" ]; do
    if [ $in_stderr = 1 ]; then printf '%s\n' "$line" >>"$TMP/want_err"; continue; fi
    case "$line" in
      '#'* | '') ;;
      setup:*) setup+=("${line#setup: }") ;;
      env:*) envs+=("${line#env: }") ;;
      command:*) command=${line#command: } ;;
      exit:*) want_exit=${line#exit: } ;;
      stderr:*) in_stderr=1 ;;
      *) echo "FAIL: $name: cannot read line: $line"; failures=$((failures + 1)); return ;;
    esac
  done <"$file"
  if [ -z "$command" ] || [ -z "$want_exit" ] || [ $in_stderr = 0 ]; then
    echo "FAIL: $name: a case needs command:, exit: and stderr:"; failures=$((failures + 1)); return
  fi
  # Inputs are reached through links, so messages show short, stable paths.
  ln -s "$SRC/examples/seed" "$work/seed"
  ln -s "$SRC/tests/models" "$work/models"
  ln -s "$CASES/files" "$work/files"
  ln -s "$SRC/tests/fixtures" "$work/fixtures"
  local s
  for s in "${setup[@]}"; do
    (cd "$work" && eval "$s") || { echo "FAIL: $name: setup failed: $s"; failures=$((failures + 1)); return; }
  done
  (cd "$work" && find . | sort) >"$TMP/before"
  local got_exit
  (cd "$work" && for e in "${envs[@]}"; do export "$e"; done && eval "\"\$BIN\" ${command#tvmjit }") \
    >"$TMP/got_out" 2>"$TMP/got_err" </dev/null
  got_exit=$?
  (cd "$work" && find . | sort) >"$TMP/after"
  if [ -n "${BAD_INPUTS_UPDATE:-}" ]; then
    echo "== $name: exit $got_exit"; cat "$TMP/got_err"; return
  fi
  local ok=1
  if [ "$got_exit" != "$want_exit" ]; then
    echo "FAIL: $name: exit $got_exit, expected $want_exit"; ok=0
  fi
  if ! cmp -s "$TMP/got_err" "$TMP/want_err"; then
    echo "FAIL: $name: stderr differs (- expected, + got):"; diff -u "$TMP/want_err" "$TMP/got_err" | tail -n +3 | head -30; ok=0
  fi
  if ! cmp -s "$TMP/before" "$TMP/after"; then
    echo "FAIL: $name: the command left files behind:"; diff "$TMP/before" "$TMP/after" | grep '^>'; ok=0
  fi
  if [ $ok = 1 ]; then passes=$((passes + 1)); else failures=$((failures + 1)); fi
}

if [ $# -gt 0 ]; then
  for n in "$@"; do run_case "$CASES/$n.case"; done
else
  for f in "$CASES"/*.case; do run_case "$f"; done
fi
finish
