#!/usr/bin/env bash
# The test command of the README: installs everything, then runs every gate and test.
# Exits non-zero when any of them fails; the last line sums up the test counts.
set -uo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh || exit 1
./scripts/services.sh || exit 1

failed_steps=()
step() {
  local name=$1; shift
  printf '\n\033[1m== %s\033[0m\n' "$name"
  if ! "$@"; then failed_steps+=("$name"); fi
}

step "cargo fmt --check" cargo fmt --all --check
step "cargo clippy" cargo clippy --workspace --all-targets --release --quiet -- -D warnings
step "biome (lint + format check)" npx --no-install biome check src test bench fixtures
step "native/index.d.ts up to date" ./scripts/check-dts.sh
step "tsc --noEmit" npx --no-install tsc --noEmit -p tsconfig.json
step "no circular imports" npx --no-install madge --circular --warning dist/src

mkdir -p target
step "cargo test" bash -c 'set -o pipefail; cargo test --workspace --profile ci-test 2>&1 | tee target/cargo-test.log'
step "vitest" npx --no-install vitest run --reporter=default --reporter=json --outputFile=target/vitest.json
step "schemathesis (OpenAPI conformance)" ./scripts/schemathesis.sh

node scripts/summary.mjs target/cargo-test.log target/vitest.json
if [ ${#failed_steps[@]} -gt 0 ]; then
  printf '\nFAILED: %s\n' "${failed_steps[*]}"
  exit 1
fi
echo "all gates and tests passed"
