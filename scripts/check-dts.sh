#!/usr/bin/env bash
# Fails when native/index.d.ts (committed; the service's types of the engine come from it)
# is not what the last `npm run build:native` generated from native/src. scripts/setup.sh
# builds the addon before the test command's gates, so this compares that build's output
# with the committed file and builds nothing itself.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f native/index.d.ts ]; then
  echo "native/index.d.ts is missing: run npm run build:native" >&2
  exit 1
fi
if ! git diff --exit-code --stat -- native/index.d.ts native/index.js; then
  echo >&2
  echo "native/index.d.ts (or index.js) differs from what the build generated from native/src:" >&2
  git --no-pager diff -- native/index.d.ts native/index.js | head -60 >&2 || true
  echo "commit the regenerated files (npm run build:native)" >&2
  exit 1
fi
echo "native/index.d.ts matches the build"
