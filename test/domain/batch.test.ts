import { describe, expect, it } from 'vitest';
import { parseCsvRecords } from '../../src/domain/batch-csv.js';
import { fillEdits, MissingPlaceholderError, placeholdersOf } from '../../src/domain/batch-placeholders.js';
import { ApiError } from '../../src/kernel/api-error.js';
import type { Edit } from '../../src/schemas/edit.js';

describe('parseCsvRecords', () => {
  it('reads RFC 4180: quotes, doubled quotes, commas and line breaks inside quotes, CRLF, BOM', () => {
    const csv = '\uFEFFname,note\r\n"Ann ""A"" Lee","a, b"\r\nBob,"two\nlines"\n\nCy,\n';
    expect(parseCsvRecords(csv, 10)).toEqual([
      { name: 'Ann "A" Lee', note: 'a, b' },
      { name: 'Bob', note: 'two\nlines' },
      { name: 'Cy', note: '' },
    ]);
  });

  it('takes a last row without a line break, and trims header names', () => {
    expect(parseCsvRecords(' name , id\nx,1', 10)).toEqual([{ name: 'x', id: '1' }]);
  });

  it('refuses empty files, duplicate or empty header names, ragged rows and broken quotes', () => {
    for (const [csv, words] of [
      ['', 'empty'],
      ['a,a\n1,2', 'twice'],
      ['a,\n1,2', 'empty column'],
      ['a,b\n1,2\n3\n', 'line 3'],
      ['a\n"open\n', 'quoted field'],
      ['a\nx"y\n', 'quote inside'],
    ] as const) {
      const err = (() => {
        try {
          parseCsvRecords(csv, 10);
        } catch (e) {
          return e;
        }
      })();
      expect(err, csv).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('invalid_request');
      expect((err as ApiError).message, csv).toContain(words);
    }
  });

  it('stops reading past the plan limit (the caller answers 413)', () => {
    const csv = `n\n${Array.from({ length: 1000 }, (_, i) => i).join('\n')}\n`;
    expect(parseCsvRecords(csv, 5).length).toBe(6);
  });
});

describe('placeholders', () => {
  const edits: Edit[] = [
    { find: 'Dear {first}', replace: 'Dear {first} {last}' },
    { op: 'form', fields: { Name: '{first}', Member: '{member}', Note: 'id {id}' } },
    { op: 'insert', text: 'Ref {id}', at: { after: 'Total {id}' } },
    { find: '\\d{3}-{code}', replace: '$1 {code}', match: 'regex' },
  ];

  it('lists the names used, never regex quantifiers', () => {
    expect(placeholdersOf(edits).sort()).toEqual(['code', 'first', 'id', 'last', 'member']);
  });

  it('fills find, replace, text, anchors and form values; typed values for whole-placeholder fields', () => {
    const filled = fillEdits(edits, { first: 'Ann', last: 'Lee', id: 7, member: true, code: 'a.b$' });
    expect(filled[0]).toEqual({ find: 'Dear Ann', replace: 'Dear Ann Lee' });
    expect(filled[1]).toEqual({ op: 'form', fields: { Name: 'Ann', Member: true, Note: 'id 7' } });
    expect(filled[2]).toEqual({ op: 'insert', text: 'Ref 7', at: { after: 'Total 7' } });
    // Record text is literal inside a regex: escaped in find, `$` doubled in replace.
    expect(filled[3]).toEqual({ find: '\\d{3}-a\\.b\\$', replace: '$1 a.b$$', match: 'regex' });
    expect(new RegExp(filled[3]!.find!, 'u').test('123-a.b$')).toBe(true);
  });

  it('names the placeholders a record lacks', () => {
    expect(() => fillEdits(edits, { first: 'Ann' })).toThrow(MissingPlaceholderError);
    try {
      fillEdits(edits, { first: 'Ann' });
    } catch (e) {
      expect((e as MissingPlaceholderError).missing.sort()).toEqual(['code', 'id', 'last', 'member']);
    }
  });
});
