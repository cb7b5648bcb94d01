#!/usr/bin/env bash
# Symbolic vs static shapes: the same model with its sequence length (BERT-base layer)
# or batch (ResNet-18) written in, and symbolic, benched at the same sizes; plus compile
# time: the symbolic model compiles once, the static one once per size.
#
#   bench/symbolic_vs_static.sh [BUILD_DIR] [RUNS]
#
# Models come from bench/model_zoo.py (PyTorch needed); the symbolic form replaces the
# size in main's signature and reshapes by a var. Prints one line per (model, size):
# median and min latency of each form and their ratio (symbolic / static, by median).
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
RUNS=${2:-30}
BIN=$BUILD/tvmjit
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
$PY "$SRC/bench/model_zoo.py" "$TMP" bert_layer resnet18 >/dev/null

# BERT layer: s in the signature and the head reshapes.
B=$TMP/bert_layer
sed -e 's/(1, 128, 768)/(1, "s", 768)/g' -e 's/\[1, 128, /[1, s, /g' \
    -e 's/with R.dataflow():/s = T.int64()\n        with R.dataflow():/' "$B/model.rx" > "$B/sym.rx"
# ResNet-18: batch n in the signature and the final flatten.
R=$TMP/resnet18
sed -e 's/x: R.Tensor((1, 3, 224, 224)/x: R.Tensor(("n", 3, 224, 224)/' -e 's/-> R.Tensor((1, 1000)/-> R.Tensor(("n", 1000)/' \
    -e 's/R.shape(\[1, 512\])/R.shape([n, 512])/' \
    -e 's/with R.dataflow():/n = T.int64()\n        with R.dataflow():/' "$R/model.rx" > "$R/sym.rx"

median() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["latency_ms"]["median"], d["latency_ms"]["min"], d["compile_ms"])' "$1"; }

bench_pair() { # model dir, static model, input npy, passes, label
  local dir=$1 static=$2 x=$3 passes=$4 label=$5
  "$BIN" bench "$static" --params "$dir/params.npz" --input x="$x" --passes "$passes" --no-cache --runs "$RUNS" --json > "$TMP/s.json"
  "$BIN" bench "$dir/sym.rx" --params "$dir/params.npz" --input x="$x" --passes "$passes" --no-cache --runs "$RUNS" --json > "$TMP/y.json"
  read -r sm smin sc < <(median "$TMP/s.json")
  read -r ym ymin yc < <(median "$TMP/y.json")
  $PY -c "import sys; a=[float(v) for v in sys.argv[1:]]; print('%-22s static %8.2f ms (min %8.2f, compile %7.0f ms)   symbolic %8.2f ms (min %8.2f, compile %7.0f ms)   ratio %.3f' % ('$label', a[0], a[1], a[2], a[3], a[4], a[5], a[3] / a[0]))" "$sm" "$smin" "$sc" "$ym" "$ymin" "$yc"
}

for s in 1 16 128; do
  sed -e "s/\"s\"/$s/g" -e "s/\[1, s, /[1, $s, /g" -e '/s = T.int64()/d' "$B/sym.rx" > "$B/static$s.rx"
  $PY -c "import numpy as np; np.save('$TMP/bx$s.npy', np.random.default_rng($s).standard_normal((1, $s, 768)).astype('float32'))"
  bench_pair "$B" "$B/static$s.rx" "$TMP/bx$s.npy" default "bert_layer s=$s"
done
for n in 1 8; do
  sed -e "s/(\"n\", /($n, /g" -e "s/\[n, 512\]/[$n, 512]/" -e '/n = T.int64()/d' "$R/sym.rx" > "$R/static$n.rx"
  $PY -c "import numpy as np; np.save('$TMP/rx$n.npy', np.random.default_rng($n).standard_normal(($n, 3, 224, 224)).astype('float32'))"
  bench_pair "$R" "$R/static$n.rx" "$TMP/rx$n.npy" DecomposeOpsForInference,default "resnet18 n=$n"
done
