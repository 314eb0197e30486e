import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { ClientMetadata } from 'oidc-provider';

/**
 * A relying party that signs her in within a popup (oidc-client-ts `signinPopup`, MSAL `loginPopup`): its page shows in
 * `#result` what its callback, in the popup, hands it through `window.opener`. Served on `rp.localhost`.
 */
export interface PopupRelyingParty {
  /** Its page, which opens the popup. */
  page: string;
  /** A static client whose redirect URI is its callback. */
  client: ClientMetadata;
  close(): Promise<void>;
}

/** Starts a {@link PopupRelyingParty} on a port of its own. */
export async function startPopupRelyingParty(): Promise<PopupRelyingParty> {
  const server: Server = createServer((req, res) => {
    res.setHeader('content-type', 'text/html');
    if (req.url?.startsWith('/cb')) {
      return void res.end('<script>window.opener ? window.opener.postMessage(location.search, location.origin) : document.title = "no opener";</script>');
    }
    res.end(`<p id="result"></p><script>addEventListener("message", (e) => { document.getElementById("result").textContent = e.data; });</script>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    page: `http://rp.localhost:${port}/`,
    client: { client_id: 'popup-rp', client_secret: 'popup-rp-secret-that-is-long-enough-0123456789', redirect_uris: [`http://rp.localhost:${port}/cb`] },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
