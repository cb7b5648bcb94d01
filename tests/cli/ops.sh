#!/usr/bin/env bash
# `tvmjit ops` lists the registry's operators, and the README's operator table (between
# <!-- ops:begin --> and <!-- ops:end -->) is what tools/update_ops_table.sh generates
# from it: adding an operator without regenerating the README fails here.
. "$(dirname "$0")/lib.bash"

expect_exit 0 "tvmjit ops" -- "$BIN" ops
expect_text "$TMP/out" "R.nn.conv2d" "ops lists conv2d"
expect_row() { # expect_row REGEX WHAT: a line of $TMP/out matches
  grep -qE "$1" "$TMP/out" && passes=$((passes + 1)) || { echo "FAIL: $2: no line matches $1"; failures=$((failures + 1)); }
}
expect_row '^R\.floor_divide +binary +any ' "ops gives family and dtypes"
expect_row '^R\.isnan +unary +any -> bool$' "isnan gives a bool"
expect_text "$TMP/out" "integer x / 0 is 0" "ops gives notes"
n_listed=$(grep -c '^R\.' "$TMP/out")
expect_text "$TMP/out" "$n_listed operators." "ops counts the operators it lists"
expect_exit 0 "tvmjit ops --markdown" -- "$BIN" ops --markdown
expect_text "$TMP/out" '| `R.left_shift` | binary | int, uint |' "markdown row"
[ "$(grep -c '^| `R\.' "$TMP/out")" -eq "$n_listed" ] && passes=$((passes + 1)) ||
  { echo "FAIL: --markdown lists a different number of operators than the text form"; failures=$((failures + 1)); }
expect_exit 2 "an unknown option is a usage error" -- "$BIN" ops --bogus
expect_text "$TMP/err" "tvmjit ops: unknown argument '--bogus'" "usage error message"

cp "$SRC/README.md" "$TMP/README.md"
expect_exit 0 "tools/update_ops_table.sh" -- "$SRC/tools/update_ops_table.sh" "$BIN" "$TMP/README.md"
if diff -u "$SRC/README.md" "$TMP/README.md" >"$TMP/diff"; then
  passes=$((passes + 1))
else
  echo "FAIL: README.md's operator table is out of date; run tools/update_ops_table.sh"
  head -20 "$TMP/diff"
  failures=$((failures + 1))
fi
finish
