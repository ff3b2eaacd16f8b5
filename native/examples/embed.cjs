// Embedding the engine: open, read, render and edit a PDF from plain Node, on the main
// thread or in a worker_threads Worker (README "Embedding the engine").
//
//   node native/examples/embed.cjs IN.pdf FIND REPLACE OUT.pdf [--thread]
//
// PDFium comes from PDFIUM_LIB_PATH, else vendor/pdfium/lib/libpdfium.so (scripts/setup.sh).
// Prints one JSON line: what was read, the preview's size, and the edit's result.
'use strict';

const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const pdfedit = require('..');

/** @param {{ input: string, find: string, replace: string, output: string }} job */
function run(job) {
  pdfedit.init(
    process.env.PDFIUM_LIB_PATH || path.join(__dirname, '..', '..', 'vendor', 'pdfium', 'lib', 'libpdfium.so'),
  );
  const pdf = readFileSync(job.input);

  /** @type {import('..').DocInfo} */
  const info = pdfedit.openInfo(pdf);
  /** @type {import('..').TextResult} */
  const text = pdfedit.readText(pdf, { pages: [1] });
  const png = pdfedit.render(pdf, { page: 1, width: 600 });

  /** @type {import('..').EditResult} */
  const result = pdfedit.edit(pdf, {
    edits: [{ op: 'replace', find: job.find, replace: job.replace, scope: { occurrence: 'first' } }],
  });
  if (result.changes.length > 0) writeFileSync(job.output, result.pdf);
  const after = result.changes.length > 0 ? pdfedit.readText(result.pdf, { pages: [1] }) : undefined;

  let error;
  try {
    pdfedit.openInfo(Buffer.from('not a pdf'));
  } catch (err) {
    error = { code: err.code, message: err.message };
  }

  return {
    thread: isMainThread ? 'main' : 'worker',
    pageCount: info.pageCount,
    page1: text.pages[0].text,
    spans: text.pages[0].spans.length,
    png: { bytes: png.length, signature: png.subarray(1, 4).toString('latin1') },
    changes: result.changes.map((c) => ({
      op: c.op,
      page: c.page,
      find: c.find,
      replace: c.replace,
      verified: c.verified,
      font_source: c.font_source,
    })),
    unmatched: result.unmatched,
    failed: result.failed,
    pagesTouched: result.pages_touched,
    outputBytes: result.pdf.length,
    page1After: after?.pages[0].text,
    error,
  };
}

if (isMainThread) {
  const [input, find, replace, output, mode] = process.argv.slice(2);
  const job = { input, find, replace, output };
  if (!input || !find || replace === undefined || !output) {
    console.error('usage: node native/examples/embed.cjs IN.pdf FIND REPLACE OUT.pdf [--thread]');
    process.exit(2);
  }
  if (mode === '--thread') {
    const worker = new Worker(__filename, { workerData: job });
    worker.once('message', (summary) => console.log(JSON.stringify(summary)));
    worker.once('error', (err) => {
      console.error(err);
      process.exitCode = 1;
    });
  } else {
    console.log(JSON.stringify(run(job)));
  }
} else {
  parentPort.postMessage(run(workerData));
}
