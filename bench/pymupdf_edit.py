"""PyMuPDF's unverified edit of one phrase, for `npm run bench` (issue 18 item 6).

What the issue measured PyMuPDF doing per document: open the PDF from bytes, find the
phrase (first occurrence, page by page), redact it, write the replacement at its place in a
base-14 font (Helvetica), save to bytes. Nothing is checked: no render, no comparison.

Usage: python pymupdf_edit.py FILE FIND REPLACE RUNS
Prints one JSON object: version, page, p50_ms, p95_ms, runs, out_bytes (or error).
Each call is timed inside Python (time.perf_counter), after one warm-up call.
"""

import json
import sys
import time

import pymupdf


def edit_once(data: bytes, find: str, replace: str) -> tuple[int, int]:
    """One unverified replace; returns (1-based page, output size) or raises LookupError."""
    doc = pymupdf.open(stream=data, filetype="pdf")
    try:
        for page in doc:
            rects = page.search_for(find)
            if not rects:
                continue
            rect = rects[0]
            page.add_redact_annot(rect)
            # Text only, as the verified edit touches text only: images and vector
            # graphics under the phrase are left as they are.
            page.apply_redactions(
                images=pymupdf.PDF_REDACT_IMAGE_NONE,
                graphics=pymupdf.PDF_REDACT_LINE_ART_NONE,
            )
            size = max(1.0, rect.height / 1.2)
            baseline = pymupdf.Point(rect.x0, rect.y1 - rect.height * 0.22)
            page.insert_text(baseline, replace, fontname="helv", fontsize=size)
            out = doc.tobytes()
            return page.number + 1, len(out)
        raise LookupError(f"{find!r} not found")
    finally:
        doc.close()


def main() -> int:
    if len(sys.argv) != 5:
        print("usage: pymupdf_edit.py FILE FIND REPLACE RUNS", file=sys.stderr)
        return 2
    path, find, replace, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(path, "rb") as f:
        data = f.read()
    try:
        page, out_bytes = edit_once(data, find, replace)  # warm-up, and a check it applies
    except LookupError as err:
        print(json.dumps({"version": pymupdf.__version__, "error": str(err)}))
        return 0
    times = []
    for _ in range(max(1, runs)):
        t0 = time.perf_counter()
        edit_once(data, find, replace)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    print(
        json.dumps(
            {
                "version": pymupdf.__version__,
                "page": page,
                "p50_ms": times[len(times) // 2],
                "p95_ms": times[min(len(times) - 1, int(0.95 * len(times)))],
                "runs": len(times),
                "out_bytes": out_bytes,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
