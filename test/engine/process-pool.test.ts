import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type CallTrace, EnginePool, type EnginePoolOptions } from '../../src/engine/pool.js';
import { ApiError } from '../../src/kernel/api-error.js';
import { expensiveShadingPdf, flateBombPdf } from './hostile-pdf.js';

const PDFIUM = loadConfig({}).pdfiumLibPath;
const SHADING = expensiveShadingPdf(4000); // about 1.5 s per 200-px render on this machine
const CHEAP = expensiveShadingPdf(40);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}

/** Issues 18 item 2 and 21 item 1: engine calls in processes, each with its budgets. */
describe('engine process pool', () => {
  let pool: EnginePool | undefined;
  const traces: CallTrace[] = [];
  const make = (opts: Partial<EnginePoolOptions>) => {
    traces.length = 0;
    pool = new EnginePool({
      pdfiumLibPath: PDFIUM,
      processes: 1,
      timeoutMs: 60_000,
      onCall: (t) => traces.push(t),
      ...opts,
    });
    return pool;
  };
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('ends a call over its budget with 504 engine_timeout and serves the next from a fresh process', async () => {
    const p = make({});
    await p.open(CHEAP); // the process is up
    const [first] = p.pids;
    expect(first).toBeDefined();
    const err = await failure(p.render({ pdf: SHADING, page: 1, width: 1000, maxBytes: 1 << 20 }, 300));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('engine_timeout');
    expect((err as ApiError).status).toBe(504);
    // The process that ran it is ended, not left to finish in the background.
    await until(() => !alive(first!));
    const png = await p.render({ pdf: CHEAP, page: 1, width: 100, maxBytes: 1 << 20 });
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(traces.at(-1)!.pid).not.toBe(first);
    expect(p.stats.timedOut).toBe(1);
  });

  it('answers 500 engine_error for a document past the memory ceiling, and keeps serving', async () => {
    // 1 GiB of address space: the process starts and renders (it maps ~760 MiB idle), and a
    // content stream that inflates to 512 MiB cannot fit.
    const p = make({ memoryMb: 1024 });
    const bomb = await flateBombPdf(512);
    expect(bomb.length).toBeLessThan(16 * 1024);
    await p.open(CHEAP);
    const [first] = p.pids;
    const err = await failure(p.readText({ pdf: bomb, text: true, forms: false }));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('engine_error');
    expect((err as ApiError).status).toBe(500);
    expect(p.stats.crashed).toBe(1);
    const info = await p.open(CHEAP);
    expect(info.pageCount).toBe(1);
    expect(traces.at(-1)!.pid).not.toBe(first);
  }, 60_000);

  it('runs two documents at once on two processes', async () => {
    const p = make({ processes: 2 });
    await Promise.all([p.open(CHEAP), p.open(CHEAP)]);
    await until(() => p.stats.free === 2);
    traces.length = 0;
    const render = () => p.render({ pdf: SHADING, page: 1, width: 120, maxBytes: 1 << 20 });
    await Promise.all([render(), render()]);
    const [a, b] = traces.filter((t) => t.op === 'render');
    expect(a && b).toBeTruthy();
    expect(a!.pid).not.toBe(b!.pid);
    // Each process reports when it started and ended its render: the intervals overlap.
    expect(a!.startedAt).toBeLessThan(b!.endedAt);
    expect(b!.startedAt).toBeLessThan(a!.endedAt);
  }, 30_000);

  it('replaces a process in which a call failed untyped, so its next call gets a fresh one', async () => {
    const p = make({});
    await p.open(CHEAP);
    const [first] = p.pids;
    // An edit the addon refuses as an argument error (an op outside its EditOp enum, napi's
    // InvalidArg): not a code of the closed list, so engine_error, as a failed allocation or
    // a panic inside PDFium would be.
    const bad = { pdf: CHEAP, edits: [{ index: 0, op: 'rewrite', find: 'x', replace: 'y' }], options: {} };
    const err = await failure(p.edit(bad as unknown as Parameters<typeof p.edit>[0]));
    expect((err as ApiError).code).toBe('engine_error');
    expect(p.stats.failed).toBe(1);
    await until(() => !alive(first!));
    await p.open(CHEAP);
    expect(traces.at(-1)!.pid).not.toBe(first);
    // A typed refusal keeps its process.
    const refused = await failure(p.open(Buffer.from('not a pdf')));
    expect((refused as ApiError).code).not.toBe('engine_error');
    const [second] = p.pids;
    await p.open(CHEAP);
    expect(traces.at(-1)!.pid).toBe(second);
    expect(p.stats.failed).toBe(1);
  }, 30_000);

  it('replaces a process whose address space is near its ceiling after a call', async () => {
    // A headroom larger than what any process has left under its ceiling (it maps about
    // 760-825 MiB once it has served): every call is its process's last.
    const p = make({ memoryMb: 1024, headroomMb: 1000 });
    await p.open(CHEAP);
    await p.open(CHEAP);
    const pids = traces.map((t) => t.pid);
    expect(pids[0]).not.toBe(pids[1]);
    expect(p.stats.failed).toBe(0);
    // The default headroom (64 MiB) leaves a served process alone.
    await p.close();
    const q = make({ memoryMb: 1024 });
    await q.open(CHEAP);
    await q.open(CHEAP);
    expect(traces[0]!.pid).toBe(traces[1]!.pid);
  }, 30_000);

  it('recycles a process whose memory grew past the threshold after its call', async () => {
    // A threshold under any engine process's resident size: every call is its process's last.
    const p = make({ recycleMb: 1 });
    await p.open(CHEAP);
    await p.open(CHEAP);
    const pids = traces.map((t) => t.pid);
    expect(pids[0]).not.toBe(pids[1]);
    expect(p.stats.recycled).toBe(2);
    await until(() => !alive(pids[0]!));
  });

  it('refuses calls past its queue with 429 rate_limited', async () => {
    const p = make({ maxQueue: 2 });
    const calls = [p.open(CHEAP), p.open(CHEAP)];
    const err = await failure(p.open(CHEAP));
    expect((err as ApiError).code).toBe('rate_limited');
    await Promise.all(calls);
  });

  it('reports saturation while no process is free', async () => {
    const p = make({ timeoutMs: 200 });
    await p.open(CHEAP, undefined, 30_000);
    expect(p.stats).toMatchObject({ processes: 1, busy: 0, free: 1, queued: 0, saturatedMs: 0 });
    const long = failure(p.render({ pdf: SHADING, page: 1, width: 1000, maxBytes: 1 << 20 }, 1_000));
    const queued = p.open(CHEAP, undefined, 30_000);
    await new Promise((r) => setTimeout(r, 400));
    const s = p.stats;
    expect(s).toMatchObject({ busy: 1, free: 0, queued: 1 });
    expect(s.saturatedMs).toBeGreaterThan(200);
    expect(((await long) as ApiError).code).toBe('engine_timeout');
    await queued;
    expect(p.stats.saturatedMs).toBe(0);
  });
});
