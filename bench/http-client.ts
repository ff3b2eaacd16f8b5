/**
 * The HTTP bench's client (bench/http.ts), on a worker thread of its own: a client in the
 * service's own thread would do its work (writing the request, reading and taking in the
 * answer, its own promise callbacks) on the service's event loop, between the service's
 * steps, and the time it takes would count as the service's overhead. Here it runs beside
 * the service, as a caller on another machine does; the wall time of each call is taken on
 * this thread, from the request's bytes handed to the socket to the answer's last byte.
 */
import { Agent, request } from 'node:http';
import { parentPort } from 'node:worker_threads';

/** One call the bench asks for. */
export interface ClientCall {
  id: number;
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** Its answer: the HTTP status, whether it was a replay, the body's text, the wall time (ms). */
export interface ClientAnswer {
  id: number;
  status: number;
  replayed: boolean;
  text: string;
  wall: number;
  error?: string;
}

// node:http on a keep-alive agent: a light client (fetch's streams cost about a
// millisecond of CPU per call).
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
const port = parentPort;
if (!port) throw new Error('bench/http-client.ts runs as a worker thread');

port.on('message', (call: ClientCall) => {
  const fail = (err: Error) =>
    port.postMessage({ id: call.id, status: 0, replayed: false, text: '', wall: 0, error: err.message });
  const req = request(call.url, { method: 'POST', agent, headers: call.headers });
  let t0 = 0n;
  req.on('error', fail);
  req.on('response', (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', fail);
    res.on('end', () => {
      const wall = Number(process.hrtime.bigint() - t0) / 1e6;
      const answer: ClientAnswer = {
        id: call.id,
        status: res.statusCode ?? 0,
        replayed: res.headers['idempotent-replayed'] !== undefined,
        text: Buffer.concat(chunks).toString('utf8'),
        wall,
      };
      port.postMessage(answer);
    });
  });
  t0 = process.hrtime.bigint();
  req.end(call.body);
});
