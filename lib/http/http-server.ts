import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The largest request head svc-connect's servers read (Node's default is 16 KiB): an authorization request whose
 * parameters are within every budget fits in the query, 8 KiB of `claims` percent-encoded three characters a byte
 * included.
 */
export const MAX_REQUEST_HEAD_BYTES: number = 64 * 1024;

const refusal = (status: string, description: string): string => {
  const body = JSON.stringify({ error: 'invalid_request', error_description: description });
  return `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\npragma: no-cache\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

/** What Node's HTTP parser refused, answered in OAuth's JSON instead of Node's bare status line. */
function refusalOf(err: NodeJS.ErrnoException): string {
  if (err.code === 'HPE_HEADER_OVERFLOW') return refusal('431 Request Header Fields Too Large', 'the request head is larger than 64 KiB: send large parameters in a POST body or pushed (PAR)');
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return refusal('408 Request Timeout', 'the request was not received in time');
  return refusal('400 Bad Request', 'the request is not valid HTTP');
}

/** What {@link stopServing} calls: the servers of {@link createHttpServer} stopping their connections after each answer. */
const stoppers = new WeakMap<Server, () => void>();

/**
 * Node's HTTP server for `listener` (Koa's `app.callback()`, whose promise settles its own errors), as the bundled
 * server listens: request heads up to {@link MAX_REQUEST_HEAD_BYTES}, and a request it cannot read (a longer head,
 * malformed HTTP) refused as JSON, also after earlier answers on the same keep-alive connection; never in the middle
 * of an answer already begun.
 */
export function createHttpServer(listener: (req: IncomingMessage, res: ServerResponse) => unknown): Server {
  const unfinished = new WeakMap<Socket, Set<ServerResponse>>();
  const answering = new Set<ServerResponse>();
  let stopping = false;
  // The last answer on its connection: `Connection: close`, or once begun, the connection closed when it is idle.
  const last = (res: ServerResponse): void => {
    if (!res.headersSent) res.shouldKeepAlive = false;
    else res.once('finish', () => server.closeIdleConnections());
  };
  const tracked: RequestListener = (req, res) => {
    const answers = unfinished.get(req.socket) ?? new Set<ServerResponse>();
    unfinished.set(req.socket, answers.add(res));
    answering.add(res);
    res.once('close', () => {
      answers.delete(res);
      answering.delete(res);
    });
    if (stopping) last(res);
    void listener(req, res);
  };
  const server = createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, tracked).on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const begun = [...(unfinished.get(socket) ?? [])].some((res) => res.headersSent);
    if (err.code !== 'ECONNRESET' && socket.writable && !begun) socket.end(refusalOf(err));
    else socket.destroy();
  });
  stoppers.set(server, () => {
    stopping = true;
    answering.forEach(last);
  });
  return server;
}

/**
 * Stops `server` (one of {@link createHttpServer}'s) taking connections, closes its idle ones now and every other after
 * the answer under way (`Connection: close`: Node would keep serving one that was busy at `close()`, a proxy's pooled
 * connection, until its keep-alive timeout); `done` once the last is closed.
 */
export function stopServing(server: Server, done: () => void): void {
  stoppers.get(server)?.();
  server.close(() => done());
  server.closeIdleConnections();
}
