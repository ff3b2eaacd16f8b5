import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { corpusPath, pdftotext, pdftotextAvailable } from '../helpers/corpus.js';
import { type EditApp, startEditApp } from '../helpers/edit-app.js';
import { HAVE_CORPUS } from '../helpers/env.js';

const TRIVIAL = 'font-tt-subset-libreoffice-trivial.pdf';

describe.skipIf(!HAVE_CORPUS || !pdftotextAvailable())('POST /v1/edit style and fit: reflow', () => {
  let a: EditApp;
  beforeAll(async () => {
    a = await startEditApp({ [TRIVIAL]: corpusPath(TRIVIAL) }, 'style');
  });
  afterAll(async () => {
    await a?.close();
  });

  const edit = (edits: unknown[]) => a.edit(TRIVIAL, edits);
  const output = async (url: string) => a.save(await a.download(url));
  const words = (s: string) => s.split(/\s+/).filter((w) => w.length > 0);

  it('lists the fonts style.font takes, and refuses the list without a key', async () => {
    const res = await a.t.app.inject({ method: 'GET', url: '/v1/fonts', headers: bearer(a.key) });
    expect(res.statusCode, res.body).toBe(200);
    const fonts = res.json().fonts as { name: string; family: string; style: string; kind: string }[];
    expect(fonts).toContainEqual(
      expect.objectContaining({ family: 'Times New Roman', style: 'bold', kind: 'metric-twin' }),
    );
    expect((await a.t.app.inject({ method: 'GET', url: '/v1/fonts' })).statusCode).toBe(401);
  });

  it('replaces in a font picked from the font list, at a size and in a colour', async () => {
    const list = (await a.t.app.inject({ method: 'GET', url: '/v1/fonts', headers: bearer(a.key) })).json();
    const pick = list.fonts.find(
      (f: { family: string; style: string }) => f.family === 'Times New Roman' && f.style === 'bold',
    );
    expect(pick.name).toBe('LiberationSerif-Bold');
    const res = await edit([
      {
        find: 'consetetur',
        replace: 'NEW',
        scope: { occurrence: 'first' },
        style: { font: pick.name, size: 12, color: '#FF0000' },
      },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('done');
    expect(body.warnings).toEqual([]);
    expect(body.changes[0]).toMatchObject({
      op: 'replace',
      verified: true,
      font_used: 'LiberationSerif-Bold',
      font_source: 'metric-twin',
    });
    const file = await output(body.output.url);
    expect(pdftotext(file).replace(/\s+/g, ' ')).toContain('Lorem ipsum dolor sit amet, NEW sadipscing');
    expect(execFileSync('pdffonts', [file], { encoding: 'utf8' })).toMatch(/\+LiberationSerif-Bold\s/);
  });

  it('refuses a style.font that is not in the font list with 400 invalid_request', async () => {
    const res = await edit([{ find: 'consetetur', replace: 'x', style: { font: 'No Such Face' } }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
    expect(res.json().error.message).toContain('style.font');
  });

  it('reflows the paragraph with fit: reflow, every word kept in reading order', async () => {
    const before = pdftotext(corpusPath(TRIVIAL));
    const longer =
      'consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna';
    const res = await edit([
      { find: 'consetetur', replace: longer, scope: { occurrence: 'first' }, fit: 'reflow' },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('done');
    expect(body.changes[0]).toMatchObject({ verified: true, collateral_pixels: 0 });
    const after = pdftotext(await output(body.output.url));
    expect(words(after)).toEqual(words(before.replace('consetetur', longer)));
  });
});
