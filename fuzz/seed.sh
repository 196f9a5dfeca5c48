#!/usr/bin/env bash
# Seeds a fuzz target's corpus from the YAML test suite and the example repo
# (the old endpoint written as @@, its bare host as ##), plus, for the
# decoded-data oracles (decoded_oracle, libyaml_oracle), inputs with the
# endpoint behind escapes and malformed URLs before it.
#   ./seed.sh [TARGET]   (default locate_splice; YAML_TEST_SUITE=DIR overrides
#                         where the YAML test suite is)
set -euo pipefail
cd "$(dirname "$0")"
target=${1:-locate_splice}
suite=${YAML_TEST_SUITE:-../testdata/yaml-test-suite}
out=corpus/$target
mkdir -p "$out"
old=https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com
n=0
for f in "$suite"/*/in.yaml "$suite"/*/*/in.yaml ../testdata/app-of-apps/*/*.yaml ../testdata/app-of-apps/*/*.json; do
  [ -f "$f" ] || continue
  sed -e "s#$old#@@#g" -e "s#${old#https://}#\#\##g" "$f" > "$out/seed-$n"
  n=$((n + 1))
done
if [ "$target" = decoded_oracle ] || [ "$target" = libyaml_oracle ]; then
  seeds=(
    'a: "@u"\nb: "@x/"\nc: "@/"\n'
    '# example: https://[fd00::1 (IPv6 clusters need brackets)\nspec:\n  destination:\n    server: @@\n'
    'note: "see https://[cluster-endpoint for the format"\nserver: @@\n'
    '6# https://[fd00::1 (x\nserver: @@\nips: [@@, "@x", "@u"]\nserverName: ##\n'
    'a: "x \\\n  @@"\nb: [ "@u", {c: "@x:443/p?q"} ]\nd: |\n  @@\n'
    'kind: Secret\nstringData:\n  server: @@\n  config: |\n    {"tlsClientConfig": {"serverName": "##"}}\n'
    'a: "{{ default \\"@@\\" .Values.x }}"\nb: @@\n'
    'a: &x "@u"\nb: *x\nc: https://user:pw@##:443/x\n'
  )
  for s in "${seeds[@]}"; do
    printf "$s" > "$out/seed-$n"
    n=$((n + 1))
  done
fi
echo "seeded $n inputs into fuzz/$out"
