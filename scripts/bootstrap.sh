#!/usr/bin/env bash
# Create .venv and install nexusd with its dependencies; quick when nothing changed.
# Usage: scripts/bootstrap.sh [--dev]
#   --dev also installs the test tools and the `llamacpp` extra (llama.cpp compiles from
#   source the first time: about 6 minutes on 2 cores; pip caches the wheel afterwards).
# Sourced-free: prints the venv's python path on its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${NEXUSD_VENV:-$here/.venv}"
extra=""
stamp_suffix=""
if [ "${1:-}" = "--dev" ]; then
  extra="[dev,llamacpp]"
  stamp_suffix="-dev"
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "bootstrap: creating $venv" >&2
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
stamp="$venv/.nexusd-installed$stamp_suffix"
want="$(sha256sum "$here/pyproject.toml" | cut -c1-16)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # The CPU build of torch first: a plain `torch` requirement would fetch a CUDA build of several GB.
  if ! "$py" -c 'import torch' 2>/dev/null; then
    echo "bootstrap: installing torch (CPU build)" >&2
    "$py" -m pip install -q torch==2.13.0 >&2
  fi
  echo "bootstrap: installing nexusd$extra" >&2
  # A portable build of llama.cpp: the wheel may be reused on another CPU of the same kind.
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" "$py" -m pip install -q -e "$here$extra" >&2
  echo "$want" > "$stamp"
fi
echo "$py"
