#!/usr/bin/env bash
# The on-disk kernel cache through tvmjit run on the seed: a second run compiles
# nothing; truncated, damaged, wrong-version and misnamed entries each give a warning,
# a bit-exact result, and are replaced; an unwritable directory gives a warning and a
# correct run; two processes fill one empty cache at once; cache info/clear; the cap.
# ctest sets TVMJIT_CACHE=0: every run here turns the cache on with its own directory.
. "$(dirname "$0")/lib.bash"
EX=$SRC/examples/seed
REF=$SRC/tests/fixtures/y_f16_acc16.npy
export TVMJIT_CACHE=1 TVMJIT_CACHE_DIR=$TMP/cache
unset TVMJIT_CACHE_MAX_BYTES TVMJIT_CACHE_DEBUG

# run_seed DESCRIPTION [extra options]: runs the fused seed, checks the bits.
run_seed() {
  local what=$1; shift
  rm -f "$TMP/y.npy"
  expect_exit 0 "$what" -- "$BIN" run "$EX/model.rx" --mixed-precision --input "$EX/data.npy" --params "$EX/params.npz" --output "$TMP/y.npy" --verbose --cache-debug "$@" || return
  cmp -s "$TMP/y.npy" "$REF" && passes=$((passes + 1)) ||
    { echo "FAIL: $what: output differs from y_f16_acc16.npy"; failures=$((failures + 1)); }
}
no_text() {
  if grep -qF -- "$2" "$1"; then echo "FAIL: $3: unexpected text: $2"; grep -F -- "$2" "$1" | head -3; failures=$((failures + 1)); else passes=$((passes + 1)); fi
}
entries() { ls "$TVMJIT_CACHE_DIR" 2>/dev/null | grep -c '\.tjo$'; }
check_count() {
  [ "$(entries)" -eq "$1" ] && passes=$((passes + 1)) || { echo "FAIL: $2: $(entries) entries, expected $1"; failures=$((failures + 1)); }
}

run_seed "cold run"
expect_text "$TMP/err" "2 kernels requested, 2 compiled, 0 loaded from cache" "cold run compiles both kernels"
expect_text "$TMP/err" "cache: layer_norm: miss (no entry), key " "cache-debug names the miss"
expect_text "$TMP/err" "features=" "cache-debug shows the hash of each key component"
check_count 2 "cold run stores both kernels"
[ "$(stat -c %a "$TVMJIT_CACHE_DIR")" = 700 ] && passes=$((passes + 1)) || { echo "FAIL: cache directory mode is $(stat -c %a "$TVMJIT_CACHE_DIR")"; failures=$((failures + 1)); }

run_seed "warm run"
expect_text "$TMP/err" "2 kernels requested, 0 compiled, 2 loaded from cache" "second run compiles nothing"
expect_text "$TMP/err" "cache: fused_conv2d2_relu: hit, key " "cache-debug shows the hit"
no_text "$TMP/err" "warning" "warm run warns about nothing"

# damage ENTRY-DESCRIPTION PYTHON-SNIPPET EXPECTED-WARNING: damages the largest entry with
# the snippet (bytes in `b`), then a run must warn, be exact and replace the entry.
damage() {
  local what=$1 code=$2 want=$3 f
  f=$(ls -S "$TVMJIT_CACHE_DIR"/*.tjo | head -1)
  /usr/bin/python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); $code; open(p,'wb').write(bytes(b))" "$f"
  run_seed "$what: run"
  expect_text "$TMP/err" "warning: cache entry $f" "$what: warning names the entry"
  expect_text "$TMP/err" "$want" "$what: warning says what is wrong"
  expect_text "$TMP/err" "1 compiled, 1 loaded from cache" "$what: only the bad entry is recompiled"
  run_seed "$what: the entry was replaced"
  expect_text "$TMP/err" "0 compiled, 2 loaded from cache" "$what: replaced entry loads"
  no_text "$TMP/err" "warning" "$what: no warning once replaced"
}
damage "truncated entry" "b=b[:len(b)//2]" "truncated: the header announces"
damage "header-only entry" "b=b[:40]" "truncated (40 bytes"
damage "flipped byte" "b[len(b)//2]^=0x10" "damaged (checksum mismatch)"
damage "flipped header byte" "b[48]^=1" "damaged (checksum mismatch)"
damage "wrong format version" "b[8:12]=(99).to_bytes(4,'little')" "format version 99, this tvmjit reads version 2"
damage "not an entry" "b[0:8]=b'garbage!'" "bad magic"
damage "empty file" "b=b''" "truncated (0 bytes"
# An entry under another key's name.
small=$(ls -S "$TVMJIT_CACHE_DIR"/*.tjo | tail -1)
big=$(ls -S "$TVMJIT_CACHE_DIR"/*.tjo | head -1)
cp "$small" "$big"
run_seed "misnamed entry"
expect_text "$TMP/err" "its key does not match its file name" "misnamed entry is refused"

# --no-cache and TVMJIT_CACHE=0: compile everything, read and write nothing.
rm -rf "$TMP/nc"
TVMJIT_CACHE_DIR=$TMP/nc run_seed "--no-cache" --no-cache
expect_text "$TMP/err" "2 compiled, 0 loaded" "--no-cache compiles"
expect_text "$TMP/err" "cache: off" "--cache-debug says the cache is off"
[ ! -e "$TMP/nc" ] && passes=$((passes + 1)) || { echo "FAIL: --no-cache created the directory"; failures=$((failures + 1)); }
TVMJIT_CACHE=0 run_seed "TVMJIT_CACHE=0"
expect_text "$TMP/err" "2 compiled, 0 loaded" "TVMJIT_CACHE=0 compiles"

# An unwritable cache directory (below a regular file: not even root can create it).
touch "$TMP/file"
TVMJIT_CACHE_DIR=$TMP/file/cache run_seed "unwritable cache directory"
expect_text "$TMP/err" "warning: cache directory $TMP/file/cache cannot be created" "unwritable directory warning"
expect_text "$TMP/err" "2 compiled" "unwritable directory: kernels still compile"
[ "$(grep -c 'cannot be created' "$TMP/err")" -eq 1 ] && passes=$((passes + 1)) || { echo "FAIL: the warning is repeated"; failures=$((failures + 1)); }
expect_exit 2 "bad TVMJIT_CACHE_MAX_BYTES" -- env TVMJIT_CACHE_MAX_BYTES=lots "$BIN" run "$EX/model.rx" --fill zeros
expect_text "$TMP/err" "TVMJIT_CACHE_MAX_BYTES='lots'" "bad cap names the variable"

# cache info and clear.
expect_exit 0 "cache info" -- "$BIN" cache info
expect_text "$TMP/out" "directory: $TVMJIT_CACHE_DIR" "info names the directory"
expect_text "$TMP/out" "entries: 2 (" "info counts the entries"
expect_text "$TMP/out" "hit rate" "info reports the hit rate"
echo keep >"$TVMJIT_CACHE_DIR/notes.txt"
expect_exit 0 "cache clear" -- "$BIN" cache clear
expect_text "$TMP/out" "removed 2 entries" "clear counts what it removed"
check_count 0 "clear empties the cache"
[ -e "$TVMJIT_CACHE_DIR/notes.txt" ] && passes=$((passes + 1)) || { echo "FAIL: clear removed a file that is not tvmjit's"; failures=$((failures + 1)); }
expect_exit 0 "cache info --dir" -- "$BIN" cache info --dir "$TMP/none"
expect_text "$TMP/out" "does not exist yet" "info on a missing directory"
expect_exit 2 "cache without action" -- "$BIN" cache
expect_exit 2 "cache bad action" -- "$BIN" cache frob
expect_exit 0 "cache --help" -- "$BIN" cache --help
expect_text "$TMP/out" "can write the directory can" "help warns that the directory is trusted code"

# Two processes fill the same empty cache at once: both exact, entries valid.
"$BIN" cache clear >/dev/null
ARGS=(run "$EX/model.rx" --mixed-precision --input "$EX/data.npy" --params "$EX/params.npz" --verbose)
"$BIN" "${ARGS[@]}" --output "$TMP/p1.npy" 2>"$TMP/p1.err" & pid1=$!
"$BIN" "${ARGS[@]}" --output "$TMP/p2.npy" 2>"$TMP/p2.err" & pid2=$!
wait $pid1 && wait $pid2 && passes=$((passes + 1)) || { echo "FAIL: a concurrent run failed"; cat "$TMP"/p?.err; failures=$((failures + 1)); }
cmp -s "$TMP/p1.npy" "$REF" && cmp -s "$TMP/p2.npy" "$REF" && passes=$((passes + 1)) || { echo "FAIL: concurrent outputs differ"; failures=$((failures + 1)); }
no_text "$TMP/p1.err" "warning" "first concurrent run warns about nothing"
no_text "$TMP/p2.err" "warning" "second concurrent run warns about nothing"
check_count 2 "concurrent runs leave two entries"
[ -z "$(ls -A "$TVMJIT_CACHE_DIR" | grep '^\.tmp-')" ] && passes=$((passes + 1)) || { echo "FAIL: temporary files left"; failures=$((failures + 1)); }
run_seed "after the concurrent fill"
expect_text "$TMP/err" "0 compiled, 2 loaded from cache" "the concurrent fill left valid entries"
no_text "$TMP/err" "warning" "no warning after the concurrent fill"

# A cap that holds the larger kernel only (sized from the two entries, which depend on
# the schedule): the run is exact, the cache stays under it.
sizes=$(stat -c %s "$TVMJIT_CACHE_DIR"/*.tjo | sort -n)
CAP=$(( $(echo "$sizes" | tail -1) + $(echo "$sizes" | head -1) / 2 ))
"$BIN" cache clear >/dev/null
TVMJIT_CACHE_MAX_BYTES=$CAP run_seed "tiny cap"
check_count 1 "the cap evicts down to one entry"
total=$(cat "$TVMJIT_CACHE_DIR"/*.tjo | wc -c)
[ "$total" -le "$CAP" ] && passes=$((passes + 1)) || { echo "FAIL: $total bytes in the cache, cap $CAP"; failures=$((failures + 1)); }
# A hit is found by the un-lowered kernel and the options, without lowering it, so a
# kernel cached under one schedule must not serve another: the float32 seed with the
# schedule's Winograd rule off (an environment variable the schedule options read) and
# in strict float each compile both kernels once, hit on the next run, and give the
# bits of an uncached run in the same mode.
"$BIN" cache clear >/dev/null
F32=(run "$EX/model.rx" --input "$EX/data.npy" --params "$EX/params.npz" --verbose)
expect_exit 0 "float32 seed" -- "$BIN" "${F32[@]}" --output "$TMP/f.npy"
expect_exit 0 "float32 seed, warm" -- "$BIN" "${F32[@]}" --output "$TMP/f.npy"
expect_text "$TMP/err" "0 compiled, 2 loaded from cache" "float32 seed: warm run hits"
for mode in winograd-off strict-float; do
  if [ $mode = winograd-off ]; then run=(env TVMJIT_WINOGRAD=0 "$BIN" "${F32[@]}"); else run=("$BIN" "${F32[@]}" --strict-float); fi
  expect_exit 0 "$mode: first run" -- "${run[@]}" --output "$TMP/m1.npy"
  expect_text "$TMP/err" "2 compiled, 0 loaded from cache" "$mode: the other schedule's kernels are not used"
  expect_exit 0 "$mode: second run" -- "${run[@]}" --output "$TMP/m2.npy"
  expect_text "$TMP/err" "0 compiled, 2 loaded from cache" "$mode: its own kernels are"
  expect_exit 0 "$mode: uncached" -- "${run[@]}" --output "$TMP/m3.npy" --no-cache
  cmp -s "$TMP/m1.npy" "$TMP/m3.npy" && cmp -s "$TMP/m2.npy" "$TMP/m3.npy" && passes=$((passes + 1)) ||
    { echo "FAIL: $mode: cached and uncached outputs differ"; failures=$((failures + 1)); }
done

finish
