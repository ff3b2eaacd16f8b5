import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { USER_COMMANDS } from '../../src/cli/user/index.js';
import { corpusPath, pdftotext, pngSize } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { freePort } from '../helpers/moto.js';
import { type FileServer, serveFiles } from '../helpers/serve.js';
import { type LiveApp, runCli, startLiveApp } from '../mcp/live.js';

/** main() in this process with captured output (no service call: help and usage errors). */
async function inProcess(args: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l), env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

describe.skipIf(!HAVE_CORPUS)('pdfedit user commands against a running service (child processes)', () => {
  let live: LiveApp;
  let files: FileServer;
  let dir: string;
  /** Environment with the key given by PDFEDIT_API_KEY. */
  let env: Record<string, string>;
  const pdf = () => path.join(dir, 'invoice.pdf');

  beforeAll(async () => {
    live = await startLiveApp();
    files = await serveFiles({ [INVOICE]: corpusPath(INVOICE) });
    dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-cli-'));
    copyFileSync(corpusPath(INVOICE), pdf());
    env = {
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      PDFEDIT_API_KEY: live.key,
      PDFEDIT_BASE_URL: live.baseUrl,
    };
  });
  afterAll(async () => {
    await files?.close();
    await live?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('login stores the key (mode 0600) from stdin; the environment overrides it', async () => {
    const home = path.join(dir, 'home-login');
    const loginEnv = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'cfg') };
    const res = await runCli(['login', '--base-url', live.baseUrl, '--json'], loginEnv, `${live.key}\n`);
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({ base_url: live.baseUrl, plan: 'growth', mode: 'live' });
    const file = path.join(home, 'cfg/pdfedit/config.json');
    expect(out.config).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ api_key: live.key, base_url: live.baseUrl });
    // The stored key and address are used…
    const limits = await runCli(['limits', '--json'], loginEnv);
    expect(limits.code, limits.stderr).toBe(0);
    expect(JSON.parse(limits.stdout).plan).toBe('growth');
    // …unless PDFEDIT_API_KEY says otherwise (exit 3: authentication).
    const bad = await runCli(['limits'], {
      ...loginEnv,
      PDFEDIT_API_KEY: 'sk_live_000000000000000000000000',
    });
    expect(bad.code).toBe(3);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^pdfedit: unauthorized: .+\nhint: .+/);
    // A wrong key is not stored.
    const wrong = await runCli(
      ['login', '--key', 'sk_live_000000000000000000000000', '--base-url', live.baseUrl],
      loginEnv,
    );
    expect(wrong.code).toBe(3);
    expect(JSON.parse(readFileSync(file, 'utf8')).api_key).toBe(live.key);
  });

  it('edit: replace, -o OUT.pdf, table by default, --json for scripts', async () => {
    const out = path.join(dir, 'owed.pdf');
    const res = await runCli(['edit', pdf(), '--replace', 'Amount Due=Amount Owed', '-o', out], env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/status: done/);
    expect(res.stdout).toMatch(/PAGE\s+OP\s+TEXT\s+VERIFIED\s+FONT\s+COLLATERAL/);
    expect(res.stdout).toMatch(/1\s+replace\s+Amount Due → Amount Owed\s+true/);
    expect(res.stdout).toContain(`saved: ${out}`);
    // The invoice is flagged: the table says so, and that the output carries the 'Edited' mark.
    expect(res.stdout).toMatch(/^flagged: invoice \(/m);
    expect(res.stdout).toMatch(/^warnings: .*edited_mark/m);
    expect(pdftotext(out)).toContain('Amount Owed');
    expect(res.stderr).toBe(''); // no progress bar into a pipe

    const json = await runCli(['edit', files.url(INVOICE), '--delete', 'Bayside Wholesale', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const r = JSON.parse(json.stdout);
    expect(r.status).toBe('done');
    expect(r.changes[0]).toMatchObject({ op: 'delete', verified: true });
    expect(r.output.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/files\//);
  });

  it('edit: --insert after an anchor and --fill form fields (checkbox as true), verified', async () => {
    const ins = await runCli(['edit', pdf(), '--insert', 'Bayside Wholesale=Ltd', '--json'], env);
    expect(ins.code, ins.stderr).toBe(0);
    expect(JSON.parse(ins.stdout).changes[0]).toMatchObject({ op: 'insert', text: 'Ltd', verified: true });

    const form = path.join(dir, 'form.pdf');
    copyFileSync(corpusPath('form-libreoffice-writer-needappearances.pdf'), form);
    const filled = path.join(dir, 'filled.pdf');
    const res = await runCli(
      ['edit', form, '--fill', 'Last Name=Lovelace', '--fill', 'gdpr=true', '-o', filled, '--json'],
      env,
    );
    expect(res.code, res.stderr).toBe(0);
    const r = JSON.parse(res.stdout);
    expect(r.status).toBe('done');
    const byField = Object.fromEntries(
      r.changes.map((c: { field: string; value: unknown }) => [c.field, c.value]),
    );
    expect(byField).toMatchObject({ 'Last Name': 'Lovelace', gdpr: true });
    const text = await runCli(['text', filled, '--json'], env);
    const fields = JSON.parse(text.stdout).fields as { name: string; value: unknown }[];
    expect(fields.find((f) => f.name === 'Last Name')?.value).toBe('Lovelace');
    expect(fields.find((f) => f.name === 'gdpr')?.value).toBe(true);

    // A replace whose match lies in a field's value edits the field; the table names it.
    const again = await runCli(
      ['edit', filled, '--replace', 'Lovelace=Babbage', '-o', path.join(dir, 'r.pdf')],
      env,
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/Lovelace → Babbage \(field Last Name\)/);
  });

  it('edit: nothing found is exit 1; a missing file_id exit 5; a wrong command line exit 2', async () => {
    const none = await runCli(['edit', pdf(), '--replace', 'No such phrase anywhere=x', '--json'], env);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout).unmatched).toHaveLength(1);

    // A refused edit (422 edit_failed) names each failure's reason on stderr.
    const long = `Amount Due ${'and a great deal more text than the line has room for '.repeat(3)}`;
    const refused = await runCli(['edit', pdf(), '--replace', `Amount Due=${long}`], env);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(/edit_failed/);
    expect(refused.stderr).toMatch(/failed: edit 0 \(replace\): overflow: /);

    const missing = await runCli(['edit', 'file_doesnotexist', '--replace', 'a=b'], env);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toMatch(/not_found/);

    const usage = await runCli(['edit', pdf(), '--bogus'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/unknown option '--bogus'/);
    for (const args of [
      ['edit', pdf()],
      ['edit', pdf(), '--replace', 'no-equals-sign'],
      ['find', pdf()],
      ['preview', pdf()],
      ['batch', pdf(), '--replace', 'a=b'],
      ['frobnicate'],
    ]) {
      const res = await inProcess(args, env);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.err.length, args.join(' ')).toBeGreaterThan(0);
    }
  });

  it('find, text and preview', async () => {
    const find = await runCli(['find', pdf(), 'amount due', '--match', 'icase', '--json'], env);
    expect(find.code, find.stderr).toBe(0);
    const f = JSON.parse(find.stdout);
    expect(f.hits[0]).toMatchObject({ page: 1, text: 'Amount Due' });
    expect(f.hits[0].spans[0].span_id).toBeTruthy();
    const human = await runCli(['find', pdf(), 'Amount Due'], env);
    expect(human.stdout).toMatch(/PAGE\s+BOX\s+SPANS\s+CONTEXT\n1\s+/);
    const nothing = await runCli(['find', pdf(), 'zebra crossing'], env);
    expect(nothing.code).toBe(1);

    const text = await runCli(['text', pdf()], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^--- page 1 ---\n/);
    expect(text.stdout).toContain('Bayside Wholesale');
    const tj = await runCli(['text', pdf(), '--json'], env);
    expect(JSON.parse(tj.stdout).page_count).toBe(1);

    const png = path.join(dir, 'page1.png');
    const prev = await runCli(
      [
        'preview',
        pdf(),
        '--page',
        '1',
        '--width',
        '500',
        '--highlight',
        '72,90,300,104',
        '-o',
        png,
        '--json',
      ],
      env,
    );
    expect(prev.code, prev.stderr).toBe(0);
    expect(JSON.parse(prev.stdout)).toMatchObject({ saved: png, width: 500 });
    expect(pngSize(readFileSync(png)).width).toBe(500);
  });

  it('batch: 20 CSV records, one downloaded output per record', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `Client ${String(i + 1).padStart(2, '0')}`);
    const csv = path.join(dir, 'clients.csv');
    writeFileSync(csv, `name,city\n${names.map((n, i) => `"${n}","Town, ${i}"`).join('\n')}\n`);
    const out = path.join(dir, 'letters');
    const res = await runCli(
      [
        'batch',
        pdf(),
        '--replace',
        'Bayside Wholesale={name} Wholesale',
        '--records',
        csv,
        '--out',
        out,
        '--name',
        'name',
        '--json',
      ],
      env,
    );
    expect(res.code, res.stderr).toBe(0);
    const r = JSON.parse(res.stdout);
    expect(r.status).toBe('done');
    expect(r.records).toHaveLength(20);
    expect(readdirSync(out).sort()).toEqual(names.map((n) => `${n}.pdf`).sort());
    for (const i of [0, 19])
      expect(pdftotext(path.join(out, `${names[i]}.pdf`))).toContain(`${names[i]} Wholesale`);
    expect(res.stderr).toBe('');

    // job, jobs
    const job = await runCli(['job', r.job_id, '--wait', '--json'], env);
    expect(job.code).toBe(0);
    expect(JSON.parse(job.stdout)).toMatchObject({ job_id: r.job_id, kind: 'batch', status: 'done' });
    const human = await runCli(['job', r.job_id], env);
    expect(human.stdout).toMatch(/status\s+done/);
    const jobs = await runCli(['jobs', '--json', '--limit', '5'], env);
    expect(JSON.parse(jobs.stdout).data.map((j: { job_id: string }) => j.job_id)).toContain(r.job_id);
    const jobsHuman = await runCli(['jobs'], env);
    expect(jobsHuman.stdout).toMatch(/JOB\s+KIND\s+STATUS/);
    expect(jobsHuman.stdout).toContain(r.job_id);
  });

  it('async edit, then job --wait -o', async () => {
    const queued = await runCli(
      ['edit', pdf(), '--replace', 'Amount Due=Total Due', '--async', '--json'],
      env,
    );
    expect(queued.code, queued.stderr).toBe(0);
    const id = JSON.parse(queued.stdout).job_id;
    expect(id).toMatch(/^job_/);
    const out = path.join(dir, 'job.pdf');
    const res = await runCli(['job', id, '--wait', '-o', out], env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/status\s+done/);
    expect(pdftotext(out)).toContain('Total Due');
  });

  it('fonts, usage, limits, webhook-secret [--rotate]', async () => {
    const fonts = await runCli(['fonts', '--json'], env);
    expect(JSON.parse(fonts.stdout).fonts.length).toBeGreaterThan(0);
    expect((await runCli(['fonts'], env)).stdout).toMatch(/^NAME\s+FAMILY\s+STYLE\s+KIND/);
    const usage = await runCli(['usage', '--json'], env);
    expect(JSON.parse(usage.stdout).pages_used).toBeGreaterThan(0);
    expect((await runCli(['usage'], env)).stdout).toMatch(/pages_used\s+\d+/);
    expect((await runCli(['limits'], env)).stdout).toMatch(/plan\s+growth/);

    const secret = await runCli(['webhook-secret'], env);
    expect(secret.stdout.trim()).toMatch(/^whsec_\w+$/);
    const rotated = await runCli(['webhook-secret', '--rotate', '--json'], env);
    const next = JSON.parse(rotated.stdout).webhook_secret;
    expect(next).not.toBe(secret.stdout.trim());
    expect((await runCli(['webhook-secret'], env)).stdout.trim()).toBe(next);
  });

  it('exit 6 when the service cannot be reached; --help with an example on every command', async () => {
    const port = await freePort();
    const down = await runCli(['limits'], { ...env, PDFEDIT_BASE_URL: `http://127.0.0.1:${port}` });
    expect(down.code).toBe(6);
    expect(down.stderr).toMatch(/network_error: Could not reach/);

    const top = await runCli(['--help'], env);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/admin[\s\S]*worker[\s\S]*edit FILE[\s\S]*webhook-secret/);
    for (const cmd of USER_COMMANDS) {
      const res = await inProcess([cmd, '--help'], env);
      expect(res.code, cmd).toBe(0);
      expect(res.out, cmd).toMatch(new RegExp(`Usage: pdfedit ${cmd}`));
      expect(res.out, cmd).toMatch(new RegExp(`Example:\\n  (echo .* \\| )?pdfedit ${cmd}`));
      expect(res.out, cmd).toMatch(/Exit codes:\n {2}0 {2}done/);
    }
    expect(existsSync(path.join(dir, 'config'))).toBe(false);
  });
});
