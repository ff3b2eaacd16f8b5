import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnginePool } from '../../src/engine/pool.js';
import { joinJsonArrays } from '../../src/engine/text-split.js';
import { rawIsSafe } from '../../src/routes/text.js';
import { TextResult } from '../../src/schemas/text.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { corpus } from '../helpers/corpus.js';
import { startCorpusApp } from '../helpers/corpus-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import type { FileServer } from '../helpers/serve.js';

/** Plain text split in two, a form split in two (fields), small forms, rotated pages. */
const FILES = [
  'font-cid-cff-identityh-us-constitution.pdf',
  'form-cms1490s-medicare-18p-partly-filled.pdf',
  'form-cra-cannabis-return-combed-13p.pdf',
  'form-fancy-fields-acrobat-dc.pdf',
  'form-irs-w9-livecycle.pdf',
  'rot-0-90-180-270-pages.pdf',
];
const LAYERS: (('text' | 'forms')[] | undefined)[] = [undefined, ['text'], ['forms']];

/**
 * Issue 18 item 4: without OCR, `/v1/text` sends the engine's JSON as it came rather than
 * parsing it and serialising it again. Parsed, the answer is what the response schema's
 * serializer writes of the parsed engine answer (today's path before the change).
 */
describe.skipIf(!HAVE_CORPUS)('POST /v1/text passes the engine JSON through', () => {
  let t: TestApp;
  let key: string;
  let files: FileServer;
  let serializer: FastifyInstance;
  let pending: unknown;
  const pageCounts = new Map(corpus().map((e) => [e.file, e.pages]));

  beforeAll(async () => {
    ({ t, key, files } = await startCorpusApp());
    serializer = Fastify();
    serializer.addSchema(TextResult);
    serializer.get('/', { schema: { response: { 200: { $ref: 'TextResult#' } } } }, async () => pending);
    await serializer.ready();
  });
  afterAll(async () => {
    await serializer?.close();
    await files?.close();
    await t?.close();
  });

  /** What the serializer writes of the engine's parsed answer, parsed. */
  async function serialized(value: unknown): Promise<unknown> {
    pending = value;
    return (await serializer.inject({ method: 'GET', url: '/' })).json();
  }

  it('answers what the serializer wrote of the parsed answer', async () => {
    const engine = (t.app as unknown as { engine: EnginePool }).engine;
    for (const file of FILES)
      for (const layers of LAYERS)
        for (const range of [undefined, '2-11']) {
          const pageCount = pageCounts.get(file)!;
          const pages = range && pageCount >= 11 ? Array.from({ length: 10 }, (_, i) => i + 2) : undefined;
          const res = await t.app.inject({
            method: 'POST',
            url: '/v1/text',
            headers: bearer(key),
            payload: {
              source: { url: files.url(file) },
              ...(layers ? { layers } : {}),
              ...(pages ? { pages: range } : {}),
            },
          });
          const what = `${file} ${layers?.join('+') ?? 'default'} ${pages ? range : 'all'}`;
          expect(res.statusCode, what).toBe(200);
          expect(res.headers['content-type'], what).toBe('application/json; charset=utf-8');
          const text = !layers || layers.includes('text');
          const forms = !layers || layers.includes('forms');
          const { readFileSync } = await import('node:fs');
          const { corpusPath } = await import('../helpers/corpus.js');
          const one = await engine.readText({
            pdf: readFileSync(corpusPath(file)),
            ...(pages ? { pages } : {}),
            text,
            forms,
          });
          const expected = await serialized({
            page_count: pageCount,
            pages: text ? one.pages : [],
            fields: forms ? one.fields : [],
          });
          expect(res.json(), what).toStrictEqual(expected);
          if (file.startsWith('form-') && forms) expect(res.json().fields.length, what).toBeGreaterThan(0);
        }
  }, 240_000);
});

describe('text JSON pass-through helpers', () => {
  it('joins JSON arrays as text', () => {
    const j = (a: string, b: string) => joinJsonArrays(Buffer.from(a), Buffer.from(b)).toString();
    expect(j('[1,2]', '[3]')).toBe('[1,2,3]');
    expect(j('[]', '[3]')).toBe('[3]');
    expect(j('[1]', '[]')).toBe('[1]');
    expect(j('[]', '[]')).toBe('[]');
  });

  it('sends through the serializer what it would change (a null number)', () => {
    const safe = (s: string) => rawIsSafe(Buffer.from(s));
    expect(safe('[{"value":null,"max_len":null,"text":"nullify null"}]')).toBe(true);
    expect(safe('[{"box":[null,1,2,3]}]')).toBe(false);
    expect(safe('[{"box":[0,null,2,3]}]')).toBe(false);
    expect(safe('[{"size":null}]')).toBe(false);
    expect(safe('[{"text":"a:null"}]')).toBe(false);
  });
});
