#!/usr/bin/env bash
# Seeds the fuzz corpus from the YAML test suite and the example repo
# (the old endpoint written as @@, its bare host as ##).
set -euo pipefail
cd "$(dirname "$0")"
out=corpus/locate_splice
mkdir -p "$out"
old=https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com
n=0
for f in ../../shared/corpus/yaml-test-suite/*/in.yaml ../../shared/corpus/yaml-test-suite/*/*/in.yaml ../testdata/app-of-apps/*/*.yaml ../testdata/app-of-apps/*/*.json; do
  [ -f "$f" ] || continue
  sed -e "s#$old#@@#g" -e "s#${old#https://}#\#\##g" "$f" > "$out/seed-$n"
  n=$((n + 1))
done
echo "seeded $n inputs into fuzz/$out"
