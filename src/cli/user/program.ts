import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { parseCsvRecords } from '../../domain/batch-csv.js';
import { ApiCallError, PdfeditApi } from '../../mcp/api.js';
import { type FindHit, findInPages, type MatchMode, type TextPage } from '../../mcp/find.js';
import type { CliIo } from '../io.js';
import { configFile, readConfig, resolveAccess, writeConfig } from './config.js';
import { EXIT, EXIT_CODES_HELP, exitCodeOf, Progress, pairs, table } from './output.js';

/** How the user commands reach the terminal. */
export interface UserIo extends CliIo {
  /** Raw stderr writes (the progress bar). */
  errRaw(s: string): void;
  /** True when stderr is a terminal: progress bars are drawn only then. */
  errIsTty: boolean;
  /** Reads standard input to its end (login without --key). */
  readStdin(): Promise<string>;
}

type Json = Record<string, unknown>;

class UsageError extends Error {}

const MATCH_MODES = ['exact', 'icase', 'word', 'regex'];

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** "LEFT=RIGHT" split at the first "="; both sides needed. */
function split(flag: string, value: string): [string, string] {
  const at = value.indexOf('=');
  if (at <= 0) throw new UsageError(`${flag} wants LEFT=RIGHT, got "${value}"`);
  return [value.slice(0, at), value.slice(at + 1)];
}

function box(flag: string, value: string): [number, number, number, number] {
  const n = value.split(',').map((v) => Number(v.trim()));
  if (n.length !== 4 || n.some((v) => !Number.isFinite(v)))
    throw new UsageError(`${flag} wants x0,y0,x1,y1 in points, got "${value}"`);
  return n as [number, number, number, number];
}

function int(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new UsageError(`${flag} wants a whole number, got "${value}"`);
  return n;
}

interface EditFlags {
  replace: string[];
  delete: string[];
  redact: string[];
  insert: string[];
  fill: string[];
  edits?: string;
  match?: string;
  pages?: string;
  flatten?: boolean;
}

/** The edit list from the flags (in the order: --edits file, replace, delete, redact, insert, fill). */
function editsOf(o: EditFlags): Json[] {
  const edits: Json[] = [];
  if (o.edits) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(o.edits, 'utf8'));
    } catch (err) {
      throw new UsageError(`--edits ${o.edits}: ${(err as Error).message}`);
    }
    if (!Array.isArray(parsed))
      throw new UsageError(`--edits ${o.edits}: the file must hold a JSON array of edits`);
    edits.push(...(parsed as Json[]));
  }
  const common: Json = {
    ...(o.match ? { match: o.match } : {}),
    ...(o.pages ? { scope: { pages: o.pages } } : {}),
  };
  for (const r of o.replace) {
    const [find, replace] = split('--replace', r);
    edits.push({ find, replace, ...common });
  }
  for (const d of o.delete) edits.push({ op: 'delete', find: d, ...common });
  for (const d of o.redact) edits.push({ op: 'redact', find: d, ...common });
  for (const i of o.insert) {
    const [after, text] = split('--insert', i);
    edits.push({ op: 'insert', text, at: { after } });
  }
  if (o.fill.length > 0) {
    const fields: Json = {};
    for (const f of o.fill) {
      const [name, value] = split('--fill', f);
      fields[name] = value === 'true' ? true : value === 'false' ? false : value;
    }
    edits.push({ op: 'form', fields, ...(o.flatten ? { flatten: true } : {}) });
  }
  if (edits.length === 0)
    throw new UsageError('no edits: give --replace, --delete, --redact, --insert, --fill or --edits');
  return edits;
}

function addEditFlags(cmd: Command): Command {
  return cmd
    .option('--replace <OLD=NEW>', 'replace OLD by NEW (repeatable)', collect, [])
    .option('--delete <TEXT>', 'delete TEXT, closing the gap (repeatable)', collect, [])
    .option('--redact <TEXT>', 'redact TEXT for good (repeatable)', collect, [])
    .option('--insert <ANCHOR=TEXT>', 'insert TEXT right after the phrase ANCHOR (repeatable)', collect, [])
    .option('--fill <NAME=VALUE>', 'fill a form field; true/false check a box (repeatable)', collect, [])
    .option('--flatten', 'with --fill: burn the values into the page')
    .option('--edits <FILE.json>', 'a JSON array of edit objects (see /openapi.json), applied first')
    .addOption(new Option('--match <MODE>', 'how find text matches').choices(MATCH_MODES))
    .option('--pages <RANGE>', 'only on these pages, e.g. 1-3,7');
}

export async function runUser(argv: string[], io: UserIo): Promise<number> {
  let code: number = EXIT.ok;
  const progress = new Progress(io.errIsTty, (s) => io.errRaw(s));

  const access = () => resolveAccess(io.env);
  const api = (needKey = true): PdfeditApi => {
    const { key, baseUrl } = access();
    if (needKey && !key) {
      throw new ApiCallError(
        401,
        'unauthorized',
        'No API key.',
        'Run `pdfedit login` or set PDFEDIT_API_KEY.',
      );
    }
    const client = new PdfeditApi({ baseUrl, key });
    client.onProgress = (done, total, what) =>
      progress.update(what === 'upload' ? 'uploading  ' : 'downloading', done, total, 'bytes');
    return client;
  };

  /** FILE as a source: an http(s) URL, a file_… id, or a local file (uploaded). */
  const sourceOf = async (client: PdfeditApi, file: string, password?: string): Promise<Json> => {
    const pw = password === undefined ? {} : { password };
    if (/^https?:\/\//i.test(file)) return { url: file, ...pw };
    if (/^file_[A-Za-z0-9]+$/.test(file) && !existsSync(file)) return { file_id: file, ...pw };
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      throw new UsageError(`cannot read ${file}`);
    }
    try {
      return { file_id: await client.upload(bytes), ...pw };
    } finally {
      progress.done();
    }
  };

  const download = async (client: PdfeditApi, url: string, to: string): Promise<void> => {
    try {
      const bytes = await client.download(url);
      mkdirSync(path.dirname(path.resolve(to)), { recursive: true });
      writeFileSync(to, bytes);
    } finally {
      progress.done();
    }
  };

  const print = (json: boolean, data: unknown, human: () => string) => {
    io.out(json ? JSON.stringify(data, null, 2) : human());
  };

  /** Polls a job until it finishes (or `timeoutS` passes), drawing its progress. */
  const waitJob = async (client: PdfeditApi, jobId: string, timeoutS: number): Promise<Json> => {
    const until = Date.now() + timeoutS * 1000;
    try {
      for (;;) {
        const { body } = await client.json('GET', `/v1/jobs/${encodeURIComponent(jobId)}`);
        const p = body.progress as { done: number; total: number } | undefined;
        if (p) progress.update(`job ${body.status}`.padEnd(11), p.done, p.total);
        if (['done', 'partial', 'failed'].includes(String(body.status)) || Date.now() >= until) return body;
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      progress.done();
    }
  };

  // A change made inside a form field (a replace or delete whose match lay in a field's
  // value) names the field, so the row says where the text was.
  const changeText = (c: Json): unknown => {
    const text = c.op === 'replace' ? `${c.find} → ${c.replace}` : (c.find ?? c.text ?? c.field);
    return c.field && c.op !== 'form' ? `${text} (field ${c.field})` : text;
  };

  const changesTable = (r: Json): string => {
    const changes = (r.changes as Json[] | undefined) ?? [];
    const lines = [`status: ${r.status}`];
    if (changes.length) {
      lines.push(
        table(
          ['PAGE', 'OP', 'TEXT', 'VERIFIED', 'FONT', 'COLLATERAL'],
          changes.map((c) => [c.page, c.op, changeText(c), c.verified, c.font_source, c.collateral_pixels]),
        ),
      );
    }
    lines.push(...failureLines(r));
    // What the document was classified as (SPEC rule 12) and what the output carries beyond
    // the edits (the 'Edited' mark, a SAMPLE mark): a user reading only the table must see them.
    for (const f of (r.flags as Json[] | undefined) ?? []) lines.push(`flagged: ${f.kind} (${f.evidence})`);
    const warnings = (r.warnings as string[] | undefined) ?? [];
    if (warnings.length) lines.push(`warnings: ${warnings.join(', ')}`);
    const usage = r.usage as Json | undefined;
    if (usage)
      lines.push(
        `pages billed: ${usage.pages_billed}, remaining: ${usage.remaining ?? 'unlimited (overage)'}`,
      );
    return lines.join('\n');
  };

  const program = new Command('pdfedit')
    .description('pdfedit: edit the text inside existing PDFs, every change verified.')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, '')),
      writeErr: (s) => io.err(s.replace(/\n$/, '')),
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      `
  admin    Manage accounts and API keys on the server (pdfedit admin --help)
  worker   Run job workers without the HTTP server (pdfedit worker --help)

The key and service come from \`pdfedit login\` (stored in ${'$'}XDG_CONFIG_HOME/pdfedit/config.json,
mode 0600); PDFEDIT_API_KEY and PDFEDIT_BASE_URL override them.
Tables are printed for people; --json prints the API's JSON for scripts.
Progress bars are drawn on stderr only when it is a terminal.

${EXIT_CODES_HELP}`,
    );

  const example = (cmd: Command, text: string) =>
    cmd.addHelpText('after', `\nExample:\n  ${text}\n\n${EXIT_CODES_HELP}`);

  example(
    program
      .command('login')
      .description('store an API key (and the service address) in the config folder')
      .option('--key <KEY>', 'the API key (sk_live_… or sk_test_…); otherwise read from standard input')
      .option('--base-url <URL>', 'the service address (default http://127.0.0.1:8080)')
      .option('--json', 'print JSON')
      .action(async (o: { key?: string; baseUrl?: string; json?: boolean }) => {
        const key = (o.key ?? (await io.readStdin()).split(/\r?\n/)[0] ?? '').trim();
        if (!key) throw new UsageError('no key given (--key, or the key on standard input)');
        const stored = readConfig(io.env);
        const baseUrl = (o.baseUrl ?? io.env.PDFEDIT_BASE_URL ?? stored.base_url ?? access().baseUrl).replace(
          /\/+$/,
          '',
        );
        if (!/^https?:\/\//.test(baseUrl))
          throw new UsageError('--base-url must start with http:// or https://');
        const { body } = await new PdfeditApi({ baseUrl, key }).json('GET', '/v1/limits');
        const file = writeConfig(io.env, { ...stored, api_key: key, base_url: baseUrl });
        print(
          !!o.json,
          { config: file, base_url: baseUrl, plan: body.plan, mode: body.mode },
          () => `Logged in to ${baseUrl} (plan ${body.plan}, ${body.mode} key). Key stored in ${file}.`,
        );
      }),
    'echo sk_live_… | pdfedit login --base-url https://pdfedit.example.com',
  );

  example(
    addEditFlags(
      program
        .command('edit')
        .description('edit a PDF (a local file, an http(s) URL or a file_… id)')
        .argument('<FILE>', 'the PDF'),
    )
      .option('-o, --output <OUT.pdf>', 'save the edited PDF here')
      .option('--password <PW>', 'open password of an encrypted PDF')
      .option('--async', 'queue as a job and print its id without waiting')
      .option('--break-signature', 'allow editing a signed PDF')
      .option('--json', 'print the edit result as JSON')
      .action(
        async (
          file: string,
          o: EditFlags & {
            output?: string;
            password?: string;
            async?: boolean;
            breakSignature?: boolean;
            json?: boolean;
          },
        ) => {
          const edits = editsOf(o);
          const client = api();
          const source = await sourceOf(client, file, o.password);
          const options = {
            ...(o.async ? { async: true } : {}),
            ...(o.breakSignature ? { break_signature: true } : {}),
          };
          let { status, body } = await client.json('POST', '/v1/edit', {
            source,
            edits,
            ...(Object.keys(options).length ? { options } : {}),
          });
          if (status === 202) {
            if (o.async) {
              print(!!o.json, body, () => `queued as job ${body.job_id} (pdfedit job ${body.job_id} --wait)`);
              return;
            }
            body = await waitJob(client, String(body.job_id), 3600);
          }
          const output = body.output as { url?: string } | null | undefined;
          if (o.output && output?.url) await download(client, output.url, o.output);
          print(!!o.json, body, () =>
            [
              changesTable(body),
              o.output && output?.url ? `saved: ${o.output}` : output?.url ? `output: ${output.url}` : '',
            ]
              .filter(Boolean)
              .join('\n'),
          );
          if (body.status !== 'done') code = EXIT.incomplete;
        },
      ),
    'pdfedit edit invoice.pdf --replace "Amount Due=Amount Owed" --redact "IBAN DE44 5001" -o out.pdf',
  );

  example(
    program
      .command('find')
      .description('find a phrase (or a regex) and list every hit with page, box and span ids')
      .argument('<FILE>', 'the PDF')
      .argument('<QUERY>', 'the phrase')
      .addOption(new Option('--match <MODE>', 'how QUERY matches').choices(MATCH_MODES).default('exact'))
      .option('--pages <RANGE>', 'only these pages, e.g. 1-3,7')
      .option('--password <PW>', 'open password')
      .option('--json', 'print JSON')
      .action(
        async (
          file: string,
          query: string,
          o: { match: MatchMode; pages?: string; password?: string; json?: boolean },
        ) => {
          const client = api();
          const source = await sourceOf(client, file, o.password);
          const { body } = await client.json<{ page_count: number; pages: TextPage[] }>('POST', '/v1/text', {
            source,
            ...(o.pages ? { pages: o.pages } : {}),
            layers: ['text'],
          });
          let hits: FindHit[];
          try {
            hits = findInPages(body.pages, query, o.match);
          } catch (err) {
            throw new UsageError((err as Error).message);
          }
          print(!!o.json, { query, match: o.match, page_count: body.page_count, hits }, () =>
            hits.length === 0
              ? `no hit of "${query}"`
              : table(
                  ['PAGE', 'BOX', 'SPANS', 'CONTEXT'],
                  hits.map((h) => [
                    h.page,
                    h.box.map((n) => n.toFixed(1)).join(','),
                    h.spans.map((s) => s.span_id).join(','),
                    h.context,
                  ]),
                ),
          );
          if (hits.length === 0) code = EXIT.incomplete;
        },
      ),
    'pdfedit find contract.pdf "Effective Date" --match icase',
  );

  example(
    program
      .command('text')
      .description('print the text of a PDF (and its form fields with --json)')
      .argument('<FILE>', 'the PDF')
      .option('--pages <RANGE>', 'only these pages, e.g. 1-3,7')
      .option('--password <PW>', 'open password')
      .option('--json', 'print the spans and form fields as JSON')
      .action(async (file: string, o: { pages?: string; password?: string; json?: boolean }) => {
        const client = api();
        const source = await sourceOf(client, file, o.password);
        const { body } = await client.json('POST', '/v1/text', {
          source,
          ...(o.pages ? { pages: o.pages } : {}),
        });
        const pages = body.pages as { page: number; text: string }[];
        print(!!o.json, body, () => pages.map((p) => `--- page ${p.page} ---\n${p.text}`).join('\n'));
      }),
    'pdfedit text report.pdf --pages 1-2',
  );

  example(
    program
      .command('preview')
      .description('render a page (or a region of it) as PNG')
      .argument('<FILE>', 'the PDF')
      .requiredOption('-o, --output <PAGE.png>', 'where to save the PNG')
      .option('--page <N>', '1-based page', '1')
      .option('--width <PX>', 'image width in pixels (16-2000)')
      .option('--region <x0,y0,x1,y1>', 'only this box of the page (points, top-left origin)')
      .option('--highlight <x0,y0,x1,y1>', 'draw this box over the page (repeatable)', collect, [])
      .option('--password <PW>', 'open password')
      .option('--json', 'print JSON')
      .action(
        async (
          file: string,
          o: {
            output: string;
            page: string;
            width?: string;
            region?: string;
            highlight: string[];
            password?: string;
            json?: boolean;
          },
        ) => {
          const client = api();
          const source = await sourceOf(client, file, o.password);
          const png = await client.preview({
            source,
            page: int('--page', o.page),
            ...(o.width ? { width: int('--width', o.width) } : {}),
            ...(o.region ? { region: box('--region', o.region) } : {}),
            ...(o.highlight.length ? { highlights: o.highlight.map((h) => box('--highlight', h)) } : {}),
          });
          writeFileSync(o.output, png);
          const size = { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
          print(
            !!o.json,
            { saved: o.output, bytes: png.length, ...size },
            () => `saved: ${o.output} (${size.width}×${size.height}, ${png.length} bytes)`,
          );
        },
      ),
    'pdfedit preview invoice.pdf --page 2 --highlight 72,90,300,104 -o page2.png',
  );

  example(
    addEditFlags(
      program
        .command('batch')
        .description('fill a template once per CSV record ({column} placeholders) and download every output')
        .argument('<TEMPLATE>', 'the template PDF'),
    )
      .requiredOption('--records <data.csv>', 'CSV with a header row naming the placeholders')
      .requiredOption('--out <DIR>', 'folder for one PDF per record')
      .option('--name <COLUMN>', 'name each output by this column (default record-0001.pdf …)')
      .option('--json', 'print JSON')
      .action(
        async (
          template: string,
          o: EditFlags & { records: string; out: string; name?: string; json?: boolean },
        ) => {
          const edits = editsOf(o);
          let records: Record<string, string>[];
          try {
            records = parseCsvRecords(readFileSync(o.records, 'utf8'), 50_000);
          } catch (err) {
            throw new UsageError(
              `--records ${o.records}: ${(err as Error).message.replace('records_url: ', '')}`,
            );
          }
          if (records.length === 0)
            throw new UsageError(`--records ${o.records}: no records below the header`);
          if (o.name && !(o.name in records[0]!))
            throw new UsageError(`--name ${o.name}: no such column in ${o.records}`);
          const client = api();
          const source = await sourceOf(client, template);
          const { body: queued } = await client.json('POST', '/v1/batch', {
            template: source,
            edits,
            records,
          });
          const job = await waitJob(client, String(queued.job_id), 24 * 3600);
          mkdirSync(o.out, { recursive: true });
          const rows = ((job.records as (Json | null)[] | undefined) ?? []).filter(
            (r): r is Json => r !== null,
          );
          const files: { index: number; status: unknown; file: string | null }[] = [];
          const used = new Set<string>();
          // One bar counting the records here, not one per file's bytes.
          client.onProgress = undefined;
          let n = 0;
          for (const r of rows) {
            const index = Number(r.index);
            let base = o.name
              ? String(records[index]?.[o.name] ?? '')
                  .replace(/[^\p{L}\p{N}._ -]+/gu, '_')
                  .trim()
              : '';
            if (!base || used.has(base)) base = `record-${String(index + 1).padStart(4, '0')}`;
            used.add(base);
            const url = (r.output as { url?: string } | null | undefined)?.url;
            let file: string | null = null;
            if (url) {
              file = path.join(o.out, `${base}.pdf`);
              const bytes = await client.download(url);
              writeFileSync(file, bytes);
            }
            progress.update('downloading', ++n, rows.length);
            files.push({ index, status: r.status, file });
          }
          progress.done();
          print(!!o.json, { job_id: job.job_id, status: job.status, records: files }, () =>
            [
              `job ${job.job_id}: ${job.status}, ${files.filter((f) => f.file).length} of ${records.length} output(s) in ${o.out}`,
              table(
                ['RECORD', 'STATUS', 'FILE'],
                files.map((f) => [f.index + 1, f.status, f.file]),
              ),
            ].join('\n'),
          );
          if (job.status !== 'done') code = EXIT.incomplete;
        },
      ),
    'pdfedit batch letter.pdf --replace "Dear Customer=Dear {name}" --records clients.csv --out letters/ --name name',
  );

  example(
    program
      .command('job')
      .description('show a job (an async edit or a batch)')
      .argument('<ID>', 'job_…')
      .option('--wait', 'wait until it finishes')
      .option('--timeout <S>', 'with --wait: give up after this many seconds', '3600')
      .option('-o, --output <OUT.pdf>', 'edit jobs: save the output here')
      .option('--json', 'print JSON')
      .action(async (id: string, o: { wait?: boolean; timeout: string; output?: string; json?: boolean }) => {
        const client = api();
        const job = o.wait
          ? await waitJob(client, id, int('--timeout', o.timeout))
          : (await client.json('GET', `/v1/jobs/${encodeURIComponent(id)}`)).body;
        const output = job.output as { url?: string } | null | undefined;
        if (o.output && output?.url) await download(client, output.url, o.output);
        const finished = ['done', 'partial', 'failed'].includes(String(job.status));
        print(!!o.json, job, () => {
          const p = job.progress as { done: number; total: number };
          const head = pairs({
            job: job.job_id,
            kind: job.kind,
            status: job.status,
            progress: `${p.done}/${p.total}`,
            created: job.created_at,
            finished: job.finished_at,
          });
          return finished && job.kind === 'edit' ? `${head}\n${changesTable(job)}` : head;
        });
        if (job.status === 'partial' || job.status === 'failed' || (o.wait && !finished))
          code = EXIT.incomplete;
      }),
    'pdfedit job job_7Hk2mQ --wait -o out.pdf',
  );

  example(
    program
      .command('jobs')
      .description("list the account's jobs, newest first")
      .option('--status <STATUS>', 'queued, running, done, partial or failed')
      .option('--since <ISO>', 'created at or after this date-time')
      .option('--limit <N>', '1-200', '50')
      .option('--json', 'print JSON')
      .action(async (o: { status?: string; since?: string; limit: string; json?: boolean }) => {
        const q = new URLSearchParams({ limit: String(int('--limit', o.limit)) });
        if (o.status) q.set('status', o.status);
        if (o.since) q.set('since', o.since);
        const { body } = await api().json('GET', `/v1/jobs?${q}`);
        const data = body.data as Json[];
        print(!!o.json, body, () =>
          data.length === 0
            ? 'no jobs'
            : table(
                ['JOB', 'KIND', 'STATUS', 'PROGRESS', 'PAGES', 'CHANGES', 'CREATED'],
                data.map((j) => {
                  const p = j.progress as { done: number; total: number };
                  return [
                    j.job_id,
                    j.kind,
                    j.status,
                    `${p.done}/${p.total}`,
                    j.pages_billed,
                    j.changes_count,
                    j.created_at,
                  ];
                }),
              ),
        );
      }),
    'pdfedit jobs --status failed --limit 10',
  );

  example(
    program
      .command('fonts')
      .description('list the fonts new text can be written in')
      .option('--json', 'print JSON')
      .action(async (o: { json?: boolean }) => {
        const { body } = await api().json('GET', '/v1/fonts');
        const fonts = body.fonts as Json[];
        print(!!o.json, body, () =>
          table(
            ['NAME', 'FAMILY', 'STYLE', 'KIND', 'METRIC-COMPATIBLE WITH'],
            fonts.map((f) => [
              f.name,
              f.family,
              f.style,
              f.kind,
              (f.metric_compatible_with as string[]).join(', '),
            ]),
          ),
        );
      }),
    'pdfedit fonts --json | jq -r ".fonts[].name"',
  );

  for (const [name, route, description] of [
    ['usage', '/v1/usage', 'pages used and remaining this period'],
    ['limits', '/v1/limits', 'what the key may do: plan, pages, rate, sizes'],
  ] as const) {
    example(
      program
        .command(name)
        .description(description)
        .option('--json', 'print JSON')
        .action(async (o: { json?: boolean }) => {
          const { body } = await api().json('GET', route);
          print(!!o.json, body, () => pairs(body));
        }),
      `pdfedit ${name} --json`,
    );
  }

  example(
    program
      .command('webhook-secret')
      .description('print the secret that signs your job webhooks (X-Signature)')
      .option('--rotate', 'replace it first; the old one stops working at once')
      .option('--json', 'print JSON')
      .action(async (o: { rotate?: boolean; json?: boolean }) => {
        const { body } = o.rotate
          ? await api().json('POST', '/v1/webhook-secret/rotate')
          : await api().json('GET', '/v1/webhook-secret');
        print(!!o.json, body, () => String(body.webhook_secret));
      }),
    'pdfedit webhook-secret --rotate',
  );

  example(
    program
      .command('mcp')
      .description(
        'run the MCP server for AI agents on stdin/stdout (tools pdf_find, pdf_edit, pdf_preview, pdf_batch, pdf_job)',
      )
      .option('--allow-dir <DIR>', 'the folder local paths may be read from and written to', '.')
      .action(async (o: { allowDir: string }) => {
        const { key, baseUrl } = access();
        if (!key)
          throw new ApiCallError(
            401,
            'unauthorized',
            'No API key.',
            'Run `pdfedit login` or set PDFEDIT_API_KEY.',
          );
        const { runStdio } = await import('../../mcp/stdio.js');
        await runStdio({ baseUrl, key, allowDir: path.resolve(o.allowDir) });
      }),
    'pdfedit mcp --allow-dir ~/Documents/contracts',
  );

  for (const cmd of program.commands) {
    cmd.exitOverride().configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, '')),
      writeErr: (s) => io.err(s.replace(/\n$/, '')),
    });
  }

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    progress.done();
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof UsageError) {
      io.err(`pdfedit: ${err.message}`);
      return EXIT.usage;
    }
    if (err instanceof ApiCallError) {
      io.err(`pdfedit: ${err.code}: ${err.message}\nhint: ${err.hint}`);
      // A refused edit (edit_failed) says why each edit failed: the hint points at them.
      for (const line of failureLines(err.body)) io.err(line);
      return exitCodeOf(err);
    }
    throw err;
  }
}

/** One line per edit that failed or found nothing, as the result (or a 422 body) lists them. */
function failureLines(r: Record<string, unknown>): string[] {
  type Entry = Record<string, unknown>;
  const lines: string[] = [];
  for (const f of (r.failed as Entry[] | undefined) ?? [])
    lines.push(`failed: edit ${f.index} (${f.op}): ${f.reason}: ${f.message}`);
  for (const u of (r.unmatched as Entry[] | undefined) ?? [])
    lines.push(`not found: edit ${u.index} (${u.op})${u.find ? ` "${u.find}"` : ''}`);
  return lines;
}

/** The config file in use (for messages). */
export { configFile };
