import { describe, expect, it } from 'vitest';
import { findInPages, type TextSpan } from '../../src/mcp/find.js';

let n = 0;
function span(text: string, line: number, x: number, spaceBefore = false): TextSpan {
  return {
    span_id: `s${++n}`,
    page: 1,
    text,
    box: [x, line * 20, x + text.length * 5, line * 20 + 10],
    font: 'Helvetica',
    size: 10,
    line,
    block: 0,
    space_before: spaceBefore,
  };
}

const page = {
  page: 1,
  spans: [
    span('Total', 0, 0),
    span('amount due:', 0, 30, true),
    span('42.00', 0, 100, true),
    span('Amount', 1, 0),
    span('Due', 2, 0),
    span('overdue', 3, 0),
  ],
};

describe('pdf_find matching over /v1/text spans', () => {
  it('exact and icase; a phrase wrapped onto the next line is found, with both spans', () => {
    expect(findInPages([page], 'Amount Due', 'exact').map((h) => h.spans.map((s) => s.text))).toEqual([
      ['Amount', 'Due'],
    ]);
    const icase = findInPages([page], 'amount due', 'icase');
    expect(icase).toHaveLength(2);
    expect(icase[0]).toMatchObject({ page: 1, text: 'amount due' });
    expect(icase[0]!.box).toEqual([30, 0, 85, 10]);
    expect(icase[1]!.box).toEqual([0, 20, 30, 50]);
  });

  it('word needs whole words; context is cut with ellipses', () => {
    // Case-sensitive like the engine's `word`; "overdue" is not the word "due".
    expect(findInPages([page], 'due', 'word').map((h) => h.spans[0]!.text)).toEqual(['amount due:']);
    expect(findInPages([page], 'Due', 'word').map((h) => h.spans[0]!.text)).toEqual(['Due']);
    expect(findInPages([page], 'due', 'icase')).toHaveLength(3);
    const [hit] = findInPages([page], '42.00', 'exact', 5);
    expect(hit!.context).toBe('…due: 42.00 Amou…');
  });

  it('regex: Unicode mode; an invalid pattern and a pattern that backtracks without end are refused', () => {
    expect(findInPages([page], '\\d+\\.\\d{2}', 'regex').map((h) => h.text)).toEqual(['42.00']);
    expect(() => findInPages([page], '(', 'regex')).toThrow(/not valid/);
    const long = { page: 1, spans: [span(`${'a'.repeat(40)}!`, 0, 0)] };
    const started = Date.now();
    expect(() => findInPages([long], '(a+)+$', 'regex')).toThrow(/ran longer than 1000 ms/);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
