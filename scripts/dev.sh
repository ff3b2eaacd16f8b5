#!/usr/bin/env bash
# The README's first command: installs everything, then starts the service in embedded
# mode (SQLite and files under ./data, in-process queue) on http://127.0.0.1:8080.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec npm start
