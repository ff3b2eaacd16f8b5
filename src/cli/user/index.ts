import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import type { CliIo } from '../io.js';
import { processIo } from '../io.js';
import { runUser, type UserIo } from './program.js';

/** The user commands (`pdfedit <name> --help` for each). */
export const USER_COMMANDS = [
  'login',
  'edit',
  'find',
  'text',
  'preview',
  'batch',
  'job',
  'jobs',
  'fonts',
  'usage',
  'limits',
  'webhook-secret',
  'mcp',
] as const;

export const USER_USAGE = `User commands (against the API; pdfedit <command> --help shows options and an example):
  login            Store an API key and the service address
  edit FILE        Replace, delete, redact, insert, fill forms; -o OUT.pdf
  find FILE TEXT   Find a phrase: pages, boxes, span ids
  text FILE        Print the text (and form fields with --json)
  preview FILE     Render a page as PNG (-o PAGE.png)
  batch TEMPLATE   Fill a template per CSV record (--records data.csv --out DIR/)
  job ID           Show a job (--wait to wait for it)
  jobs             List jobs
  fonts            List the fonts new text can use
  usage            Pages used this period
  limits           What the key may do
  webhook-secret   Print (or --rotate) the webhook signing secret
  mcp              Run the MCP server for AI agents on stdio`;

/** On a terminal: asks for the key on stderr and reads one line, unechoed. Otherwise: all of stdin. */
async function readKey(): Promise<string> {
  if (!process.stdin.isTTY) return readAll(process.stdin);
  // The prompt is shown; what is typed is not echoed (a key on the screen is a key in the scrollback).
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const answer = rl.question('API key (sk_live_… or sk_test_…): ');
    muted = true;
    return await answer;
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    stream.on('data', (c: Buffer) => parts.push(Buffer.from(c)));
    stream.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    stream.on('error', reject);
  });
}

/** Runs a user command; `argv` starts with the command's name. */
export function runUserCommand(argv: string[], io: CliIo): Promise<number> {
  const real = io === processIo;
  const userIo: UserIo = {
    ...io,
    errRaw: real ? (s) => process.stderr.write(s) : (s) => io.err(s),
    errIsTty: real && process.stderr.isTTY === true,
    readStdin: () => (real ? readKey() : Promise.resolve('')),
  };
  return runUser(argv, userIo);
}
