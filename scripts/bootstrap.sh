#!/usr/bin/env bash
# Create .venv and install nexusd with its dependencies; quick when nothing changed.
# Usage: scripts/bootstrap.sh [--dev]
# Sourced-free: prints the venv's python path on its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${NEXUSD_VENV:-$here/.venv}"
extra=""
[ "${1:-}" = "--dev" ] && extra="[dev]"

if [ ! -x "$venv/bin/python" ]; then
  echo "bootstrap: creating $venv" >&2
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
stamp="$venv/.nexusd-installed$( [ -n "$extra" ] && echo -dev )"
want="$(cat "$here/pyproject.toml" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # The CPU build of torch first: a plain `torch` requirement would fetch a CUDA build of several GB.
  if ! "$py" -c 'import torch' 2>/dev/null; then
    echo "bootstrap: installing torch (CPU build)" >&2
    "$py" -m pip install -q torch==2.13.0 >&2
  fi
  echo "bootstrap: installing nexusd$extra" >&2
  "$py" -m pip install -q -e "$here$extra" >&2
  echo "$want" > "$stamp"
fi
echo "$py"
