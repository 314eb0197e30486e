import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A relying party's key server on a private network: a network namespace of the test's own,
 * joined to this host by a veth pair, whose https server answers on a unique-local IPv6 address
 * (fd00::/8). Needs root and iproute2 (`ip netns`), as CI has; it never touches an interface or
 * namespace it did not create, and `close` removes both.
 */
export interface PrivateHost {
  /** The server's address, e.g. `fd00:5c:1a2b::2`; it answers https on ports 443 and 8443. */
  address: string;
  /** A second address in the namespace that no allowlist names; its server records every request. */
  otherAddress: string;
  /** PEM of the CA-less self-signed certificate (SAN: keys.internal and both addresses). */
  ca: string;
  /** Request lines the servers saw, `<address> <method> <path>`, in order, up to this call. */
  requests(): Promise<string[]>;
  /** Kills the server, waits until it has exited, then deletes the namespace and the folder. */
  close(): Promise<void>;
}

const SERVER = `
import { createServer } from 'node:https';
const { KEY, CERT, ADDR, OTHER, JWKS } = process.env;
const handler = (addr) => (req, res) => {
  console.log(addr + ' ' + req.method + ' ' + req.url);
  if (req.url === '/keys') { res.setHeader('content-type', 'application/json'); res.end(JWKS); return; }
  if (req.url === '/to-keys') { res.statusCode = 302; res.setHeader('location', '/keys'); res.end(); return; }
  if (req.url === '/to-other') { res.statusCode = 302; res.setHeader('location', 'https://[' + OTHER + ']/keys'); res.end(); return; }
  if (req.url === '/to-8443') { res.statusCode = 302; res.setHeader('location', 'https://[' + ADDR + ']:8443/keys'); res.end(); return; }
  if (req.url === '/to-name') { res.statusCode = 302; res.setHeader('location', 'https://other.internal/keys'); res.end(); return; }
  res.statusCode = 404; res.end();
};
const listening = [[ADDR, 443], [ADDR, 8443], [OTHER, 443]].map(([addr, port]) =>
  new Promise((resolve) => createServer({ key: KEY, cert: CERT }, handler(addr)).listen(port, addr, resolve)));
Promise.all(listening).then(() => console.log('listening'));
// A barrier: every request line written before the ask is read before its answer.
process.stdin.on('data', (d) => console.log('synced ' + d.toString().trim()));
`;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Creates the namespace, the veth pair and the key server serving `jwks`; resolves once it listens. */
export async function startPrivateHost(jwks: unknown): Promise<PrivateHost> {
  if (process.getuid?.() !== 0) throw new Error('the private-network tests need root (ip netns), as CI has');
  // Four hex digits, the first never 0: the address reads the same as its canonical form (RFC 5952).
  const tag = (randomBytes(2).readUInt16BE(0) | 0x1000).toString(16);
  const ns = `svc-private-${process.pid}-${tag}`;
  const [hostEnd, nsEnd] = [`svp${tag}h`, `svp${tag}n`];
  const prefix = `fd00:5c:${tag}`;
  const address = `${prefix}::2`;
  const otherAddress = `${prefix}::3`;
  const dir = mkdtempSync(join(tmpdir(), 'svc-private-'));
  let child: ChildProcess | undefined;
  const close = async (): Promise<void> => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'close');
      child.kill('SIGKILL');
      await exited;
    }
    // Deleting the namespace deletes the veth pair with it.
    try {
      ip('netns', 'del', ns);
    } catch {
      // not created
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-subj', '/CN=keys.internal', '-days', '1',
      '-addext', `subjectAltName=DNS:keys.internal,IP:${address},IP:${otherAddress}`], { cwd: dir, stdio: 'ignore' });
    ip('netns', 'add', ns);
    ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', nsEnd);
    ip('link', 'set', nsEnd, 'netns', ns);
    ip('-6', 'addr', 'add', `${prefix}::1/64`, 'dev', hostEnd, 'nodad');
    ip('link', 'set', hostEnd, 'up');
    ip('netns', 'exec', ns, 'ip', '-6', 'addr', 'add', `${address}/64`, 'dev', nsEnd, 'nodad');
    ip('netns', 'exec', ns, 'ip', '-6', 'addr', 'add', `${otherAddress}/64`, 'dev', nsEnd, 'nodad');
    ip('netns', 'exec', ns, 'ip', 'link', 'set', nsEnd, 'up');
    ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const env = { PATH: process.env.PATH ?? '', KEY: readFileSync(join(dir, 'key.pem'), 'utf8'), CERT: cert, ADDR: address, OTHER: otherAddress, JWKS: JSON.stringify(jwks) };
    const server = spawn('ip', ['netns', 'exec', ns, process.execPath, '--input-type=module', '-e', SERVER], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    child = server;
    let out = '';
    let err = '';
    let asks = 0;
    server.stderr.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise<void>((resolve, reject) => {
      server.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('listening\n')) resolve();
      });
      server.on('exit', (code) => reject(new Error(`the private key server exited (${code}): ${err}`)));
    });
    return {
      address,
      otherAddress,
      ca: cert,
      requests: async () => {
        asks += 1;
        const answer = `synced ${asks}\n`;
        server.stdin.write(`${asks}\n`);
        while (!out.includes(answer)) await new Promise((resolve) => server.stdout.once('data', resolve));
        return out.split('\n').filter((line) => /^[0-9a-f:]+ [A-Z]+ /.test(line));
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
