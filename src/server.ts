import { buildServer } from './app.js';
import { loadConfig } from './config.js';

/** Boots the service: listen, and close gracefully on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig();
  const server = await buildServer(config);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    server.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      server.log.error('graceful shutdown timed out');
      process.exit(1);
    }, 30_000);
    force.unref();
    server.close().then(
      () => process.exit(0),
      (err) => {
        server.log.error({ err }, 'error while closing');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await server.listen({ port: config.port, host: config.host });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
