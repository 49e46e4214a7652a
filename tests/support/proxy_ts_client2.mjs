// @modelcontextprotocol/client 2.4.0's own OAuth support against toolkit's OAuthProxy.
//
//   node <copy in .interop/ts-client2/>/proxy_ts_client2.mjs URL TOOL
//
// Copied next to the pinned install (.interop/ts-client2/) by tests/test_oauth_proxy.py so it resolves
// that package. The library's flow, as its documentation has a user wire it: an OAuthClientProvider
// (dynamic registration, in-memory storage), connect() until UnauthorizedError, the user's browser,
// transport.finishAuth(callback params), a new transport and connect() again. The browser follows
// redirects with one cookie jar, answers toolkit's consent page with "Allow" (its hidden fields),
// lets the upstream (oidc-provider) log in by itself, and stops at the redirect URI. Then it calls
// TOOL and prints ONE JSON line: the structured result and how many consent pages it saw.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';

const [url, tool] = process.argv.slice(2);
const redirectUrl = 'http://127.0.0.1:33420/callback';

const cookies = new Map();
function remember(response) {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair.indexOf('=');
    cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1));
  }
}
const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
const unescape = (text) => text.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#x27;', "'")
  .replaceAll('&lt;', '<').replaceAll('&gt;', '>');

let consentPages = 0;
async function browse(authorizationUrl) {
  let response = await fetch(authorizationUrl, { redirect: 'manual', headers: { cookie: cookieHeader() } });
  for (let hop = 0; hop < 12; hop++) {
    remember(response);
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location'), response.url || authorizationUrl);
      if (next.origin + next.pathname === redirectUrl) return next.searchParams;
      response = await fetch(next, { redirect: 'manual', headers: { cookie: cookieHeader() } });
    } else if (response.status === 200) {
      const page = await response.text();
      const fields = Object.fromEntries([...page.matchAll(/<input type="hidden" name="(pending|csrf)" value="([^"]*)">/g)]
        .map(([, name, value]) => [name, unescape(value)]));
      const action = new URL(unescape(page.match(/<form method="post" action="([^"]+)">/)[1]), url);
      consentPages += 1;
      response = await fetch(action, {
        method: 'POST', redirect: 'manual',
        headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, decision: 'approve' }).toString(),
      });
    } else {
      throw new Error(`${response.url} answered ${response.status}: ${(await response.text()).slice(0, 500)}`);
    }
  }
  throw new Error('no redirect to the redirect URI');
}

let clientInformation, tokens, codeVerifier, pending;
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return {
      client_name: 'ts-client 2.4.0 via toolkit', redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
    };
  },
  clientInformation: () => clientInformation,
  saveClientInformation: (info) => { clientInformation = info; },
  tokens: () => tokens,
  saveTokens: (saved) => { tokens = saved; },
  redirectToAuthorization: (authorizationUrl) => { pending = browse(authorizationUrl.toString()); },
  saveCodeVerifier: (verifier) => { codeVerifier = verifier; },
  codeVerifier: () => codeVerifier,
};

const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
let client = new Client({ name: 'proxy-ts', version: '1.0.0' });
try {
  await client.connect(transport);
} catch (error) {
  if (!(error instanceof UnauthorizedError) || pending === undefined) throw error;
  await transport.finishAuth(await pending);
  client = new Client({ name: 'proxy-ts', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
}
const result = await client.callTool({ name: tool, arguments: {} });
console.log(JSON.stringify({ structured: result.structuredContent, consentPages }));
await client.close();
