#!/usr/bin/env bash
# Installs libpdfium.so from the pypdfium2 wheel on PyPI, pinned by version and sha256,
# with its licence files beside it. Idempotent: does nothing when the pinned copy is there.
set -euo pipefail
cd "$(dirname "$0")/.."

PYPDFIUM2_VERSION=5.13.0   # ships PDFium 153.0.7999.0
WHEEL=pypdfium2-${PYPDFIUM2_VERSION}-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
WHEEL_SHA256=81df25c1ab4c13ff773102d3cbea1967511d079123b067fc077bd0c4d57d91d8
DEST=vendor/pdfium

if [ "$(uname -m)" != "x86_64" ]; then
  echo "fetch-pdfium: only linux x86_64 is pinned here (found $(uname -m))" >&2
  exit 1
fi
if [ -f "$DEST/.installed" ] && [ "$(cat "$DEST/.installed")" = "$WHEEL_SHA256" ] && [ -f "$DEST/lib/libpdfium.so" ]; then
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux_2_17_x86_64 --python-version 3.11 \
  "pypdfium2==${PYPDFIUM2_VERSION}" -d "$tmp"
echo "${WHEEL_SHA256}  $tmp/${WHEEL}" | sha256sum --check --quiet -

rm -rf "$DEST"
mkdir -p "$DEST/lib" "$DEST/licenses"
python3 - "$tmp/$WHEEL" "$DEST" <<'PY'
import sys, zipfile, os
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name == "pypdfium2_raw/libpdfium.so":
            target = os.path.join(dest, "lib", "libpdfium.so")
        elif name == "pypdfium2_raw/version.json":
            target = os.path.join(dest, "version.json")
        elif "/licenses/" in name and not name.endswith("/"):
            target = os.path.join(dest, "licenses", name.split("/licenses/", 1)[1])
        else:
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(name) as src, open(target, "wb") as out:
            out.write(src.read())
PY
echo "$WHEEL_SHA256" > "$DEST/.installed"
echo "fetch-pdfium: installed PDFium from pypdfium2 ${PYPDFIUM2_VERSION} into $DEST"
