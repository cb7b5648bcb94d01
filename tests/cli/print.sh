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
expect_exit 2 "unknown pass" -- "$BIN" print "$MODEL" --passes 'LegalizeOps,Nope'
finish
