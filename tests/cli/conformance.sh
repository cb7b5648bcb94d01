#!/usr/bin/env bash
# TVM's conformance corpus (../shared/conformance, not part of a user's clone): every
# case listed in tests/conformance_baseline.txt must still pass, and every module file
# listed in tests/conformance_parsing.txt must still parse / round-trip / be rejected.
# New passes are reported, never failed; the corpus may grow. Skipped without ../shared.
. "$(dirname "$0")/lib.bash"

if [ ! -f "$SHARED/conformance/MANIFEST.txt" ]; then
  echo "skip: $SHARED/conformance is absent (it is not part of a clone)"
  exit 77
fi

expect_exit 0 "no baseline case and no listed module regresses" -- \
  "$BIN" conformance "$SHARED/conformance" --baseline "$SRC/tests/conformance_baseline.txt" \
  --parse-baseline "$SRC/tests/conformance_parsing.txt"
grep -E '^(REGRESSION|[0-9]+ (passing|module)|modules:|conformance:)' "$TMP/out"
failed_now=$(sed -n 's/^conformance: [0-9]* passed, \([0-9]*\) failed.*/\1/p' "$TMP/out")

# The runner itself: a baseline naming a case that no longer passes is a regression, named
# in a short message with the count. Without a baseline it lists every failure.
"$BIN" conformance "$SHARED/conformance" >"$TMP/all"
sed -n 's/^FAIL \([^:]*\):.*/\1/p' "$TMP/all" | head -n 1 >"$TMP/failing"
if [ -s "$TMP/failing" ]; then
  cat "$SRC/tests/conformance_baseline.txt" "$TMP/failing" >"$TMP/baseline"
  expect_exit 1 "a listed case that fails is a regression" -- \
    "$BIN" conformance "$SHARED/conformance" --baseline "$TMP/baseline"
  expect_text "$TMP/out" "REGRESSION $(cat "$TMP/failing")" "the regression names the case"
  expect_text "$TMP/out" "1 regression(s) against the baseline" "the regression is counted"
fi
# A module that does not parse, listed as parsing, is a regression too.
unparsed=$(sed -n 's/^FAIL \([^:]*\): before.rx does not parse.*/\1/p' "$TMP/all" | head -n 1)
if [ -n "$unparsed" ]; then
  { cat "$SRC/tests/conformance_parsing.txt"; echo "$unparsed/before.rx parses"; } >"$TMP/parsing"
  expect_exit 1 "a listed module that no longer parses is a regression" -- \
    "$BIN" conformance "$SHARED/conformance" --parse-baseline "$TMP/parsing"
  expect_text "$TMP/out" "REGRESSION $unparsed/before.rx: listed as 'parses'" "the regression names the module"
fi

# A new case that does not pass yet (the corpus grows with operators not built yet) is
# reported, not failed.
mkdir -p "$TMP/corpus/zz_new_case"
corpus=$(cd "$SHARED/conformance" && pwd)
for c in $(cat "$corpus/MANIFEST.txt"); do ln -s "$corpus/$c" "$TMP/corpus/$c"; done
{ cat "$corpus/MANIFEST.txt"; echo zz_new_case; } >"$TMP/corpus/MANIFEST.txt"
printf 'kind=parse_ok\npass=TVMScript parser\n' >"$TMP/corpus/zz_new_case/case.txt"
printf '@R.function\ndef main(x: R.Tensor((2,), "float32")):\n    return R.not_an_op_yet(x)\n' \
  >"$TMP/corpus/zz_new_case/before.rx"
expect_exit 0 "a new failing case does not fail the suite" -- \
  "$BIN" conformance "$TMP/corpus" --baseline "$SRC/tests/conformance_baseline.txt" \
  --parse-baseline "$SRC/tests/conformance_parsing.txt"
expect_text "$TMP/out" " passed, $((failed_now + 1)) failed" "the new case is counted as failing"
finish
