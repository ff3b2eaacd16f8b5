#!/usr/bin/env bash
# Installs everything the service needs and builds it. Idempotent, and fast the second
# time: each step is skipped when what it produces is already up to date.
#   Debian packages (fonts for metric twins, tesseract, poppler-utils, qpdf, a C toolchain)
#   PDFium from the pinned pypdfium2 wheel (scripts/fetch-pdfium.sh)
#   npm packages from package-lock.json, the Rust addon, the TypeScript build
#   Python test tools (moto, schemathesis) into vendor/venv from scripts/python-tools.txt
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1msetup:\033[0m %s\n' "$*"; }

# --- Debian packages -------------------------------------------------------------------
APT_PACKAGES=(
  build-essential pkg-config python3 python3-pip python3-venv ca-certificates curl
  poppler-utils poppler-data qpdf
  tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa
  tesseract-ocr-ita tesseract-ocr-por tesseract-ocr-nld
  chromium
  fonts-liberation fonts-crosextra-carlito fonts-crosextra-caladea fonts-urw-base35 fonts-dejavu-core
  fonts-ipafont-mincho fonts-ipafont-gothic
)
# tesseract-ocr-*: the OCR languages of options.ocr_languages (eng default; more by adding
# packs here). chromium: the account pages' browser tests (playwright-core drives Debian's
# build; nothing is downloaded by the test tool).
# fonts-ipafont-*: PDFium drops the glyphs of a non-embedded Japanese font (Ryumin-Light,
# GothicBBB-Medium) from the text layer, and draws nothing, when no system font covers
# them. poppler-data: pdftotext (the tests' reference) needs its CMaps for the same files.
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
fi

# --- PDFium -----------------------------------------------------------------------------
./scripts/fetch-pdfium.sh

# --- npm packages -----------------------------------------------------------------------
# node-gyp (better-sqlite3) must use the local Node headers: nothing is downloaded.
for d in /usr/include/node /usr/local/include/node; do
  if [ -f "$d/node_api.h" ]; then export npm_config_nodedir="${d%/include/node}"; break; fi
done
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f node_modules/.pdfedit-lock ] || [ "$(cat node_modules/.pdfedit-lock)" != "$lock_hash" ]; then
  # `npm install` with the committed lockfile installs exactly the locked versions. Not
  # `npm ci`: npm 11.19 refuses a lockfile that lacks other platforms' optional binaries
  # (biome, napi-rs), and whether `npm install` writes those entries depends on its cache
  # (seen both ways on fresh machines). So the lockfile after the install is compared by
  # meaning (scripts/lock-drift.cjs): other platforms' optional entries may come or go, any
  # other change fails, and the committed file is put back either way.
  log "installing npm packages (from package-lock.json)"
  cp package-lock.json "${TMPDIR:-/tmp}/pdfedit-lock.$$"
  npm install --no-audit --no-fund --loglevel=error
  if ! node scripts/lock-drift.cjs "${TMPDIR:-/tmp}/pdfedit-lock.$$" package-lock.json; then
    cp "${TMPDIR:-/tmp}/pdfedit-lock.$$" package-lock.json
    rm -f "${TMPDIR:-/tmp}/pdfedit-lock.$$"
    echo "setup: package-lock.json is out of date with package.json; run npm install and commit the lockfile" >&2
    exit 1
  fi
  cp "${TMPDIR:-/tmp}/pdfedit-lock.$$" package-lock.json
  rm -f "${TMPDIR:-/tmp}/pdfedit-lock.$$"
  echo "$lock_hash" > node_modules/.pdfedit-lock
fi

# --- Fonts from npm ---------------------------------------------------------------------
# Metric twins no Debian package carries, from pinned npm packages (scripts/install-fonts.cjs):
# Gelasio for Georgia. Installed where the engine's font registry looks by default.
fonts_dir=/usr/local/share/fonts/pdfedit
gelasio_pkg=node_modules/@fontsource/gelasio/package.json
if [ "$(id -u)" = 0 ]; then
  if [ ! -f "$fonts_dir/Gelasio-Regular.ttf" ] || [ "$gelasio_pkg" -nt "$fonts_dir/Gelasio-Regular.ttf" ]; then
    log "installing Gelasio (Georgia's metric twin) into $fonts_dir"
    node scripts/install-fonts.cjs "$fonts_dir"
  fi
elif [ ! -f "$fonts_dir/Gelasio-Regular.ttf" ]; then
  echo "setup: not root: Gelasio (Georgia's metric twin) not installed; as root: node scripts/install-fonts.cjs $fonts_dir" >&2
fi

# --- Python test tools ------------------------------------------------------------------
# moto_server (the S3-compatible server of the blob-store tests) and schemathesis, pinned
# in scripts/python-tools.txt, in a project venv so the system Python stays untouched.
tools_hash=$(sha256sum scripts/python-tools.txt | cut -d' ' -f1)
if [ ! -f vendor/venv/.pdfedit-tools ] || [ "$(cat vendor/venv/.pdfedit-tools)" != "$tools_hash" ]; then
  log "installing Python test tools into vendor/venv"
  [ -x vendor/venv/bin/python ] || python3 -m venv vendor/venv
  vendor/venv/bin/pip install --quiet --disable-pip-version-check -r scripts/python-tools.txt
  echo "$tools_hash" > vendor/venv/.pdfedit-tools
fi

# --- Rust addon -------------------------------------------------------------------------
# cargo decides what is stale; a no-op build takes about a second.
log "building the native addon"
npm run --silent build:native

# --- TypeScript -------------------------------------------------------------------------
log "compiling TypeScript"
npm run --silent build:ts
log "ready"
