import { randomBytes } from 'node:crypto';

/**
 * A `client_id` for a registered client: 128 random bits in base64url, never beginning with `-`, so that it is
 * always a plain argument (`svc-connect clients show <id>`, shell scripts), never read as an option.
 */
export function newClientId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
