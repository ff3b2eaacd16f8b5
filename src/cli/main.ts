import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type CliIo, EXIT_FAILED, EXIT_OK, EXIT_USAGE, processIo } from './io.js';
import { runUserCommand, USER_COMMANDS, USER_USAGE } from './user/index.js';
import { EXIT_CODES_HELP } from './user/output.js';

/**
 * The whole usage text. admin and worker are loaded only when needed (they pull in the
 * database and queue layers, about two seconds of start-up the user commands do without).
 */
export async function usage(): Promise<string> {
  const [{ ADMIN_USAGE }, { WORKER_USAGE }] = await Promise.all([
    import('./admin.js'),
    import('./worker.js'),
  ]);
  return `pdfedit: command-line tool of the pdfedit service.

Usage: pdfedit <command> [options]

Commands:
  admin    Manage accounts and API keys (pdfedit admin --help)
  worker   Run job workers without the HTTP server

${USER_USAGE}

${EXIT_CODES_HELP}
  (admin and worker: 0 done, 1 failed, 2 wrong command line)

Options:
  -h, --help   Show this help

${ADMIN_USAGE}

${WORKER_USAGE}`;
}

const COMMANDS: Record<string, (args: string[], io: CliIo) => Promise<number>> = {
  admin: async (args, io) => (await import('./admin.js')).runAdmin(args, io),
  worker: async (args, io) => (await import('./worker.js')).runWorker(args, io),
  // The user commands parse their own name (commander): hand them the whole rest.
  ...Object.fromEntries(
    USER_COMMANDS.map((name) => [name, (args: string[], io: CliIo) => runUserCommand([name, ...args], io)]),
  ),
};

/** Runs the CLI on `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  // Global options come before the command; everything after it belongs to the command
  // (which parses it strictly), so parse loosely: only the help flag and the first positional.
  const { tokens } = parseArgs({
    args: argv,
    options: { help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const commandIndex = tokens.find((t) => t.kind === 'positional')?.index;
  const helpIndex = tokens.find((t) => t.kind === 'option' && t.name === 'help')?.index;
  if (helpIndex !== undefined && (commandIndex === undefined || helpIndex < commandIndex)) {
    io.out(await usage());
    return EXIT_OK;
  }
  const name = commandIndex === undefined ? undefined : argv[commandIndex];
  const command = name === undefined || !Object.hasOwn(COMMANDS, name) ? undefined : COMMANDS[name];
  if (!command || commandIndex === undefined) {
    io.err(name === undefined ? 'pdfedit: no command given' : `pdfedit: unknown command "${name}"`);
    io.err(await usage());
    return EXIT_USAGE;
  }
  try {
    return await command(argv.slice(commandIndex + 1), io);
  } catch (err) {
    io.err(`pdfedit: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT_FAILED;
  }
}

/** True when this module is the program (`tsx src/cli/main.ts`), not imported by bin/. */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
