#!/usr/bin/env bash
# Checks that Courier's core names no type of the layers above it (Documentation.docc/Articles/
# Design.md, "Layers"), so that the core could be a module of its own.
#
#   scripts/check-layers.sh
#
# The layers above are the auth layer (Sources/Courier/Auth) and the clients
# (Sources/Courier/Clients); their types are every type they declare at the top level of a file
# (a nested type is named through its parent, `ResourceAccess.RequestKind`). A core file names
# one when the name is a word of its code (comments left out) or of a ``symbol link`` in its
# doc comments; prose may say "user client". What a layer above needs the core to carry goes
# through the core's own types (RequestAttributes, ErrorAttribute), which the layer extends.
set -euo pipefail
cd "$(dirname "$0")/.."

CORE=(Session Middleware Transport Response Errors Tasks Requests Security Support Observability)
ABOVE=(Auth Clients)

names="$(
  grep -rhoE '^(public |package |internal |private |fileprivate )?(final )?(struct|class|enum|actor|protocol|typealias) [A-Z][A-Za-z0-9_]*' \
    "${ABOVE[@]/#/Sources/Courier/}" --include='*.swift' | awk '{ print $NF }' | sort -u | paste -sd'|'
)"
if [[ -z "$names" ]]; then
  echo "layers: found no type in ${ABOVE[*]}" >&2
  exit 1
fi

found=0
while IFS= read -r -d '' file; do
  # Code: each line without its `//` comment. Links: the ``…`` spans of its comments.
  hits="$(
    {
      sed -E 's#//.*$##' "$file" | grep -nwE "$names" || true
      grep -nE '^\s*//' "$file" | grep -oE '^[0-9]+:|``[^`]+``' | awk '/^[0-9]+:$/ { line = $0; next } { print line $0 }' |
        grep -wE "$names" || true
    } | sort -n -u
  )"
  if [[ -n "$hits" ]]; then
    found=1
    while IFS= read -r hit; do echo "layers: $file:$hit" >&2; done <<<"$hits"
  fi
done < <(find "${CORE[@]/#/Sources/Courier/}" -name '*.swift' -print0 | sort -z)

if [[ "$found" == 1 ]]; then
  echo "layers: the core names a type of the layers above it (${ABOVE[*]}); carry the value in a" \
    "RequestAttribute or an ErrorAttribute that the layer above declares" >&2
  exit 1
fi
echo "layers: the core (${CORE[*]}) names no type of ${ABOVE[*]}"
