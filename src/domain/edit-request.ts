import type { EditOptions as EngineEditOptions } from '../../native/index.js';
import { OcrCache, ocrLanguages } from '../engine/ocr-cache.js';
import type { EngineEdit } from '../engine/tasks.js';
import { ApiError } from '../kernel/api-error.js';
import type { Edit, EditOptions } from '../schemas/edit.js';
import { resolvePages } from './page-range.js';

/** Members each op takes; anything else on that edit is refused by name, never ignored. */
const MEMBERS: Record<string, readonly string[]> = {
  replace: ['op', 'find', 'replace', 'match', 'scope', 'fit', 'style'],
  delete: ['op', 'find', 'match', 'scope'],
  redact: ['op', 'find', 'match', 'scope'],
  insert: ['op', 'text', 'at', 'style'],
  form: ['op', 'fields', 'flatten'],
};

/** Ops the engine carries out today; the others arrive with their own issues. */
const AVAILABLE = new Set(['replace', 'delete', 'redact', 'insert', 'form']);

function bad(index: number, message: string): ApiError {
  return new ApiError('invalid_request', `edits[${index}]: ${message}`);
}

/**
 * Checks what the schema cannot say (which members each op needs and allows, regex
 * syntax) and turns the API's edits into the engine's. Throws 400 naming the edit at fault.
 */
export function toEngineEdits(edits: Edit[], pageCount: number): EngineEdit[] {
  return edits.map((edit, index) => {
    const op = edit.op ?? 'replace';
    const allowed = MEMBERS[op]!;
    for (const member of Object.keys(edit)) {
      if (!allowed.includes(member)) throw bad(index, `"${member}" does not apply to op "${op}".`);
    }
    if (!AVAILABLE.has(op)) {
      throw bad(
        index,
        `op "${op}" is not available on this deployment yet; ${[...AVAILABLE].join(', ')} are.`,
      );
    }
    if (op === 'form') return toFormEdit(edit, index);
    if (op === 'insert') return toInsertEdit(edit, index, pageCount);
    if (edit.find === undefined) throw bad(index, `op "${op}" needs "find".`);
    if (op === 'replace' && edit.replace === undefined) throw bad(index, 'op "replace" needs "replace".');
    if (edit.match === 'regex') {
      try {
        new RegExp(edit.find, 'u');
      } catch (err) {
        throw bad(index, `"find" is not a valid regular expression: ${(err as Error).message}`);
      }
    }
    if (edit.fit === 'reflow' && op !== 'replace') throw bad(index, '"fit" applies to replace only.');
    const scope: Record<string, unknown> | undefined = edit.scope ? { ...edit.scope } : undefined;
    if (scope && edit.scope?.pages !== undefined) {
      // The engine takes page numbers: a range string ("1-3,7") is resolved here.
      try {
        scope.pages = resolvePages(edit.scope.pages, pageCount);
      } catch (err) {
        throw bad(index, `scope.pages: ${(err as Error).message}`);
      }
    }
    const region = edit.scope?.region;
    if (region && region.page > pageCount)
      throw bad(index, `scope.region.page ${region.page} does not exist.`);
    return {
      index,
      op: op as 'replace' | 'delete' | 'redact',
      find: edit.find,
      ...(edit.replace !== undefined ? { replace: edit.replace } : {}),
      ...(edit.match ? { match: edit.match } : {}),
      ...(scope ? { scope } : {}),
      ...(edit.fit ? { fit: edit.fit } : {}),
      ...(edit.style ? { style: edit.style } : {}),
    };
  });
}

/**
 * An insert: `text` at `{page, x, y}` (baseline start, top-left points) or `{after}` (inline
 * after the anchor's first occurrence, or on a new line below it with `newline`).
 */
function toInsertEdit(edit: Edit, index: number, pageCount: number): EngineEdit {
  if (edit.text === undefined) throw bad(index, 'op "insert" needs "text".');
  if (edit.at === undefined) throw bad(index, 'op "insert" needs "at".');
  const page = edit.at.page;
  if (page !== undefined && page > pageCount) throw bad(index, `at.page ${page} does not exist.`);
  return {
    index,
    op: 'insert',
    text: edit.text,
    at: { ...edit.at },
    ...(edit.style ? { style: edit.style } : {}),
  };
}

/**
 * A form edit: `fields` maps names to values; numbers are written as their text, booleans
 * set checkboxes, arrays select several options of a multi-select list.
 */
function toFormEdit(edit: Edit, index: number): EngineEdit {
  const fields = Object.entries(edit.fields ?? {});
  if (fields.length === 0) throw bad(index, 'op "form" needs "fields" with at least one field.');
  return {
    index,
    op: 'form',
    fields: fields.map(([name, value]) => ({
      name,
      value: typeof value === 'number' ? String(value) : value,
    })),
    ...(edit.flatten !== undefined ? { flatten: edit.flatten } : {}),
  };
}

/** Options that need others, and OCR languages that are not installed, are refused by name
 * (400), never dropped. (async and webhook_url make the edit a job: src/routes/edit.ts.) */
export function checkOptions(options: EditOptions | undefined): void {
  if (!options?.ocr) {
    for (const member of ['ocr_languages', 'ocr_text_layer'] as const) {
      if (options?.[member] !== undefined)
        throw new ApiError('invalid_request', `options.${member}: applies only with options.ocr true.`);
    }
    return;
  }
  ocrLanguages(options.ocr_languages, 'options.ocr_languages');
}

type EngineOcr = Pick<EngineEditOptions, 'ocr' | 'ocr_languages' | 'ocr_text_layer' | 'ocr_cached'>;

/** The engine's OCR options of an edit (cached pages of this document included), or none. */
export function engineOcr(
  options: EditOptions | undefined,
  pdf: Uint8Array,
  cache: OcrCache,
): { ocr?: EngineOcr; docKey?: string } {
  if (!options?.ocr) return {};
  const languages = ocrLanguages(options.ocr_languages, 'options.ocr_languages');
  const docKey = OcrCache.docKey(pdf);
  return {
    ocr: {
      ocr: true,
      ocr_languages: languages.list,
      ocr_text_layer: options.ocr_text_layer ?? false,
      ocr_cached: cache.get(docKey, languages.joined),
    },
    docKey,
  };
}
