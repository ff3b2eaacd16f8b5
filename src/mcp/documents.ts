import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApiCallError, type PdfeditApi } from './api.js';

/** How a tool is given a document (one of url, file_id or, in stdio mode, path). */
export interface DocumentRef {
  url?: string;
  file_id?: string;
  path?: string;
  password?: string;
}

/** The `source` of the API. */
export interface Source {
  url?: string;
  file_id?: string;
  password?: string;
}

/** Local files: allowed in stdio mode only, inside one folder (and its subfolders). */
export interface LocalFiles {
  /** Real path of the folder tools may read from and write to. */
  root: string;
  /**
   * Uploads of this server by content hash: the same bytes are uploaded once, so a repeated
   * call on the same local file is the same API request (idempotent, no second charge).
   */
  uploads?: Map<string, { fileId: string; at: number }>;
}

/** Well inside the service's 24-hour retention of uploads. */
const UPLOAD_REUSE_MS = 60 * 60 * 1000;

function refused(message: string, hint: string): ApiCallError {
  return new ApiCallError(400, 'invalid_request', message, hint);
}

function inside(root: string, real: string): boolean {
  const rel = path.relative(root, real);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The real path of an existing file inside the allowed folder; anything else is refused. */
export function localInput(local: LocalFiles | undefined, file: string): string {
  if (!local) {
    throw refused(
      '`path` is only accepted by the local (stdio) server.',
      'Give the document as `url` or `file_id` (upload with POST /v1/files).',
    );
  }
  let real: string;
  try {
    real = realpathSync(path.resolve(local.root, file));
  } catch {
    throw refused(`No such file: ${file}.`, `Paths are relative to ${local.root} (or absolute inside it).`);
  }
  if (!inside(local.root, real)) {
    throw refused(
      `${file} is outside the allowed folder ${local.root}.`,
      'Copy the file into the allowed folder, or start the server with --allow-dir naming its folder.',
    );
  }
  if (!statSync(real).isFile()) throw refused(`${file} is not a file.`, 'Give the path of a PDF file.');
  return real;
}

/** Where to write an output: inside the allowed folder (its parent folder is created). */
export function localOutput(local: LocalFiles | undefined, file: string): string {
  if (!local) {
    throw refused(
      '`output_path` is only accepted by the local (stdio) server.',
      'Download the output from its link instead.',
    );
  }
  const target = path.resolve(local.root, file);
  // The deepest existing ancestor decides (a symlinked folder pointing out is refused too).
  let probe = path.dirname(target);
  for (;;) {
    try {
      probe = realpathSync(probe);
      break;
    } catch {
      const up = path.dirname(probe);
      if (up === probe) break;
      probe = up;
    }
  }
  if (!inside(local.root, probe) || !inside(local.root, target)) {
    throw refused(
      `${file} is outside the allowed folder ${local.root}.`,
      'Choose an output_path inside the allowed folder.',
    );
  }
  return target;
}

export function saveLocal(local: LocalFiles | undefined, file: string, bytes: Buffer): string {
  const target = localOutput(local, file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, bytes);
  return target;
}

/** Turns a tool's document into the API's source, uploading a local file first. */
export async function toSource(
  api: PdfeditApi,
  doc: DocumentRef,
  local: LocalFiles | undefined,
): Promise<Source> {
  const given = (['url', 'file_id', 'path'] as const).filter((k) => doc[k] !== undefined);
  if (given.length !== 1) {
    throw refused(
      `Give the document as exactly one of url, file_id${local ? ' or path' : ''} (got ${given.length === 0 ? 'none' : given.join(' and ')}).`,
      'Example: {"url": "https://example.com/invoice.pdf"}.',
    );
  }
  const password = doc.password === undefined ? {} : { password: doc.password };
  if (doc.path !== undefined) {
    const bytes = readFileSync(localInput(local, doc.path));
    const hash = createHash('sha256').update(bytes).digest('hex');
    const known = local?.uploads?.get(hash);
    if (known && Date.now() - known.at < UPLOAD_REUSE_MS) return { file_id: known.fileId, ...password };
    const fileId = await api.upload(bytes);
    local?.uploads?.set(hash, { fileId, at: Date.now() });
    return { file_id: fileId, ...password };
  }
  return doc.url !== undefined ? { url: doc.url, ...password } : { file_id: doc.file_id, ...password };
}
