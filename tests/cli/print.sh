#!/usr/bin/env bash
# tvmjit print: the seed through the pipeline that crashed TVM.
. "$(dirname "$0")/lib.bash"
MODEL=$SRC/examples/seed/model.rx
expect_exit 0 "print with the full pipeline" -- "$BIN" print "$MODEL" --passes 'ToMixedPrecision,LegalizeOps,AnnotateTIROpPattern,FuseOps,FuseTIR'
[ "$(grep -c 'R.call_tir(cls.fused_conv2d2_relu' "$TMP/out")" = 3 ] && passes=$((passes + 1)) ||
  { echo "FAIL: main should call fused_conv2d2_relu three times"; failures=$((failures + 1)); }
expect_text "$TMP/out" "R.call_tir(cls.layer_norm, (conv2, gamma, beta)" "layer_norm called once"
grep 'R.Tensor' "$TMP/out" | grep -q float32 && { echo "FAIL: a Relax tensor became float32"; failures=$((failures + 1)); } || passes=$((passes + 1))
expect_exit 0 "print round trip is stable" -- "$BIN" print "$MODEL"
cp "$TMP/out" "$TMP/once.rx"
expect_exit 0 "reprint" -- "$BIN" print "$TMP/once.rx"
cmp -s "$TMP/out" "$TMP/once.rx" && passes=$((passes + 1)) || { echo "FAIL: print is not a fixed point"; failures=$((failures + 1)); }
expect_exit 0 "--print-ir-after" -- "$BIN" print "$MODEL" --passes default --print-ir-after=FuseOps
expect_text "$TMP/out" "fused_conv2d2_relu" "FuseOps groups are shown"
[ "$(grep -c '^@I.ir_module' "$TMP/out")" -le 1 ] && passes=$((passes + 1)) || { echo "FAIL: the module is printed twice with --print-ir-after"; failures=$((failures + 1)); }
expect_exit 2 "unknown pass" -- "$BIN" print "$MODEL" --passes 'LegalizeOps,Nope'
# --graph: main's dataflow as DOT, one box per fused kernel.
expect_exit 0 "--graph" -- "$BIN" print "$MODEL" --passes default --graph
expect_text "$TMP/out" 'digraph "main"' "DOT header"
expect_text "$TMP/out" "fused_conv2d2_relu" "fused kernels are drawn"
grep -q 'def main' "$TMP/out" && { echo "FAIL: --graph also printed TVMScript"; failures=$((failures + 1)); } || passes=$((passes + 1))
# The note beside the graph is main's memory plan; nodes carry the binding names it uses.
expect_text "$TMP/out" "memory plan: 3 intermediates" "the memory plan is in the picture"
expect_text "$TMP/out" "conv1 = fused_conv2d2_relu" "call nodes are named after their bindings"
# A graph drawn before LegalizeOps cannot have a plan: the note says why, the graph is drawn.
printf '@R.function\ndef main(x: R.Tensor((2, 3), dtype="float32")):\n    r = R.nn.relu(x)\n    return r\n' > "$TMP/ops.rx"
expect_exit 0 "--graph before LegalizeOps" -- "$BIN" print "$TMP/ops.rx" --graph
expect_text "$TMP/out" "no memory plan: main does not compile as drawn" "the note says why there is no plan"
expect_exit 2 "--graph and --graph-svg exclude each other" -- "$BIN" print "$MODEL" --graph --graph-svg "$TMP/x.svg"
if command -v dot >/dev/null; then
  expect_exit 0 "--graph-svg" -- "$BIN" print "$MODEL" --passes default --graph-svg "$TMP/seed.svg"
  expect_text "$TMP/seed.svg" "<svg" "an SVG is written"
  ls "$TMP"/seed.svg.* >/dev/null 2>&1 && { echo "FAIL: --graph-svg left temporary files"; failures=$((failures + 1)); } || passes=$((passes + 1))
fi
# Without dot on PATH: a clear error and no file.
expect_exit 1 "--graph-svg without Graphviz" -- env PATH=/nonexistent "$BIN" print "$MODEL" --graph-svg "$TMP/none.svg"
expect_text "$TMP/err" "graphviz" "the error names the package"
[ ! -e "$TMP/none.svg" ] && passes=$((passes + 1)) || { echo "FAIL: a picture was written without dot"; failures=$((failures + 1)); }
# A symbolic model after the passes: main declares its own `n = T.int64()` (the fused
# prim_func declares another), so the printed module parses again to the same text.
SYM=$SRC/tests/models/symbolic_add_relu.rx
expect_exit 0 "print a symbolic model through the pipeline" -- "$BIN" print "$SYM" --passes default
[ "$(grep -c '^ *n = T.int64()' "$TMP/out")" = 2 ] && passes=$((passes + 1)) ||
  { echo "FAIL: main and the fused prim_func should each declare n"; failures=$((failures + 1)); }
cp "$TMP/out" "$TMP/sym_once.rx"
expect_exit 0 "reprint the symbolic pipeline output" -- "$BIN" print "$TMP/sym_once.rx"
cmp -s "$TMP/out" "$TMP/sym_once.rx" && passes=$((passes + 1)) || { echo "FAIL: symbolic print is not a fixed point"; failures=$((failures + 1)); }
finish
