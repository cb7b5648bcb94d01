#!/usr/bin/env bash
# Rewrites the README's operator table (between <!-- ops:begin --> and <!-- ops:end -->)
# from `tvmjit ops --markdown`, so that the table is generated from the registry, never
# kept by hand. tests/cli/ops.sh fails when the README is out of date.
#   tools/update_ops_table.sh [path/to/tvmjit] [README.md]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/tvmjit}
readme=${2:-$here/README.md}
table=$(mktemp)
trap 'rm -f "$table" "$table.new"' EXIT
{
  echo "Relax operators (\`tvmjit ops\` prints the same table; dtypes \"any -> bool\": any input,"
  echo "a bool result; \"-\": not stated yet). Any TIR function can also be called with \`R.call_tir\`."
  echo
  "$bin" ops --markdown
} >"$table"
grep -q '^<!-- ops:begin -->$' "$readme" && grep -q '^<!-- ops:end -->$' "$readme" ||
  { echo "update_ops_table.sh: $readme has no <!-- ops:begin --> / <!-- ops:end --> lines" >&2; exit 1; }
awk -v table="$table" '
  /^<!-- ops:begin -->$/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /^<!-- ops:end -->$/ { skip = 0 }
  !skip { print }
' "$readme" >"$table.new"
cat "$table.new" >"$readme"
