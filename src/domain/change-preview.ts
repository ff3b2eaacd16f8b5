import type { Config } from '../config.js';
import { signFileToken, type TokenCheck, verifyFileToken } from '../net/tokens.js';

/**
 * Lazy previews of a change (issue 18 item 5): an edit answers with links, and a preview is
 * rendered from the stored document before (the output's source file) or after (the output)
 * when the link is first fetched, not before the edit answers.
 *
 * The link's token signs the output file id with what to draw (side, page, box), so the
 * page and box in the query cannot be changed: the MAC input is not a file id any content
 * link signs (it holds `|preview|`), so neither kind of token opens the other.
 */

export type PreviewSide = 'before' | 'after';

/** Margin around a change in its preview, in points (as the engine's own crops). */
export const PREVIEW_MARGIN_PT = 6;
/** Pixels per point of a preview (the verification render's resolution). */
export const PREVIEW_PX_PER_PT = 2;

/** The box as it appears in the link: four numbers to a hundredth, comma-separated. */
export function boxParam(box: readonly number[]): string {
  return box.map((v) => (Math.round(v * 100) / 100).toString()).join(',');
}

function subject(fileId: string, side: PreviewSide, page: number, box: string, before?: string): string {
  const base = `${fileId}|preview|${side}|${page}|${box}`;
  return before === undefined ? base : `${base}|${before}`;
}

/**
 * The link of one side of a change's preview. `beforeId`: the stored file the before side
 * is drawn from when it is not the output's parent (a job's own copy of a document that
 * came by URL); it is signed with the rest, so a link cannot be pointed at another file.
 */
export function previewUrl(
  config: Config,
  outputId: string,
  side: PreviewSide,
  page: number,
  box: readonly number[],
  expiresAt: number,
  beforeId?: string,
): string {
  const b = boxParam(box);
  const token = signFileToken(
    config.tokenSecret,
    subject(outputId, side, page, b, beforeId),
    'get',
    expiresAt,
  );
  const q = new URLSearchParams({
    side,
    page: String(page),
    box: b,
    ...(beforeId !== undefined ? { before: beforeId } : {}),
    token,
  });
  return `${config.publicBaseUrl}/v1/files/${encodeURIComponent(outputId)}/preview?${q.toString()}`;
}

/** Checks a preview link's token against what it asks to draw. */
export function checkPreviewToken(
  config: Config,
  token: string,
  outputId: string,
  side: PreviewSide,
  page: number,
  box: string,
  beforeId?: string,
): TokenCheck {
  return verifyFileToken(
    config.tokenSecret,
    token,
    subject(outputId, side, page, box, beforeId),
    'get',
    config.now(),
  );
}

/** `box` of a link as four finite numbers with x0 < x1 and y0 < y1, else undefined. */
export function parseBox(box: string): [number, number, number, number] | undefined {
  const parts = box.split(',');
  if (parts.length !== 4) return undefined;
  const n = parts.map(Number);
  if (!n.every((v) => Number.isFinite(v))) return undefined;
  const [x0, y0, x1, y1] = n as [number, number, number, number];
  return x1 > x0 && y1 > y0 ? [x0, y0, x1, y1] : undefined;
}

/**
 * Rendered previews kept in memory, so a second fetch of a link costs nothing: a few
 * hundred small PNGs at most, oldest out first.
 */
export class PreviewCache {
  private readonly entries = new Map<string, Buffer>();

  constructor(private readonly max = 256) {}

  get(key: string): Buffer | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, png: Buffer): void {
    this.entries.delete(key);
    this.entries.set(key, png);
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
