#!/usr/bin/env bash
# The sandbox setup ships inside the nexusd package, so pip users have it too
# (`sudo bash "$(nexusd doctor --setup-script)"`); this is its name in the checkout.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../nexusd/cli/setup-sandbox.sh" "$@"
