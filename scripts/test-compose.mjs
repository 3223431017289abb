// `npm run test:compose`: the operator's Docker path, for real, from the working tree. Needs a
// Docker engine and Compose (v2 `docker compose` or v1 `docker-compose`); not part of `npm test`.
//   1. builds the images (runtime, devnet, operator and lb targets);
//   2. checks that a service without its secrets refuses to start, naming each one;
//   3. `up -d --build` with the devnet profile from a copy of .env.example, on a free gateway
//      port, under its own project name (its own containers, network and volumes; NODE_IMAGE
//      passed to the build from the environment), waiting for every health check (`--wait` with
//      Compose v2; v1 has no `--wait`, so the health states are polled); checks every container's
//      hardening (read-only root, no capabilities, no new privileges, limits); then reads, in each
//      running service, its environment and its secrets folder: only its own secrets;
//   4. the two Redis roles: every service's REDIS_URL is `redis-rebuildable` and its
//      REDIS_RECORDS_URL `redis`; `redis` fsyncs always, `redis-rebuildable` every second (their
//      command lines: no user may CONFIG GET), both with the append-only file on (INFO); the
//      `redis-acl` step refuses REDIS_URL set without REDIS_RECORDS_URL. Redis users,
//      on each of the two servers: with each process's own credentials, each is refused (NOPERM)
//      outside its role (e.g. the indexer cannot write an API key), the default user is off
//      (NOAUTH, PING included); and the key CLI run inside the gateway's container (the gateway's user) cannot
//      create a key;
//   5. waits for all three books, fetches the API reference page and its Redoc bundle (the image
//      holds no redoc package nor React), then runs the SDK demo through the compose gateway: a
//      signed swap executed on every devnet chain; lists their audit records with the `operator` tool;
//      then each Redis holds only its role's keys (core's redisKeyRole);
//   6. creates a key with the `keys` tool (its own Redis user), restarts both Redis servers, checks
//      the key signs; then `down` (volumes kept), drops the rebuildable server's volume (a
//      deployment from before the split meets an empty one), `up -d`, and checks it again;
//   7. scales indexer-8453 to two replicas, kills one, checks the book still advances;
//   8. a hostile client through the balancer: 40 wrong keys, each with a forged X-Forwarded-For,
//      are counted as one client (the balancer replaces the header) and refused 429 past the
//      limit, while the valid key still passes; pipelined requests with forged internal
//      headers, and a sign with `Expect: 100-continue`, are each answered in order;
//   9. scales the gateway to three replicas behind the balancer (lb): prices asked through its one
//      port reach all three (each one's request count, read from its own operator port, grows),
//      and each operator port is published on loopback only;
//  10. always tears everything down (`down -v`).
// Each step prints its time; the whole run ends with `test:compose passed in N s`.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root } from './lib/pnpm.mjs';
import { freePort } from './lib/redis.mjs';

// Which role each key has: core's own map (the build, `npm run test:compose` runs ensure first).
const { redisKeyRole } = createRequire(import.meta.url)(path.join(root, 'packages/core/dist/redis/redis-roles.js'));
/** The two Redis servers of the compose file, by role, and the appendfsync each runs with. */
const REDIS_SERVERS = [
  { service: 'redis', role: 'records', appendfsync: 'always', url: 'redis://redis:6379' },
  { service: 'redis-rebuildable', role: 'rebuildable', appendfsync: 'everysec', url: 'redis://redis-rebuildable:6379' },
];

const t0 = Date.now();
const secs = (since) => ((Date.now() - since) / 1000).toFixed(1);
const log = (msg) => console.log(`[test:compose] ${msg}`);
function fail(msg) {
  console.error(`[test:compose] FAILED: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  return { code: r.status ?? 1, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, stdout: r.stdout ?? '', error: r.error };
}

// --- the engine and Compose ---------------------------------------------------------------------
const info = run('docker', ['info', '--format', '{{.ServerVersion}}']);
if (info.error || info.code !== 0) {
  console.error(
    `[test:compose] needs a reachable Docker engine: \`docker info\` failed${info.error ? ` (${info.error.code})` : `:\n${info.out.trim()}`}\n` +
      'Start Docker (or set DOCKER_HOST) and run `npm run test:compose` again.',
  );
  process.exit(1);
}
let compose;
if (run('docker', ['compose', 'version']).code === 0) compose = ['docker', ['compose']];
else if (run('docker-compose', ['version']).code === 0) compose = ['docker-compose', []];
else {
  console.error('[test:compose] needs Docker Compose: neither `docker compose` (v2) nor `docker-compose` (v1) works.');
  process.exit(1);
}
log(`engine ${info.stdout.trim()}, compose: ${[compose[0], ...compose[1]].join(' ')}`);

const project = `pmmtest${randomBytes(3).toString('hex')}`;
const work = mkdtempSync(path.join(tmpdir(), 'pmm-compose-'));
const envFile = path.join(work, '.env');
const gatewayPort = await freePort();
copyFileSync(path.join(root, '.env.example'), envFile);
writeFileSync(envFile, `${readFileSync(envFile, 'utf8')}\nGATEWAY_PORT=${gatewayPort}\nENV_FILE=${envFile}\n`);
/** The development API key: the devnet writes it into the gateway's secrets folder. */
let devKey;
// Without the Redis URLs of this shell (a test Redis's): the services use the compose file's own two.
const composeEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^REDIS_(RECORDS_)?URL$/.test(name))),
  ENV_FILE: envFile,
  GATEWAY_PORT: String(gatewayPort),
};
/** Compose v2 has `up --wait`; v1 (docker-compose 1.29) does not. */
const hasWait = compose[0] === 'docker';

/** Runs a compose command for this project (`env`: more variables for its interpolation); throws with its output when it fails. */
function dc(args, { check = true, profile = true, env = {} } = {}) {
  const full = [
    ...compose[1],
    '-p',
    project,
    '--env-file',
    envFile,
    ...(profile ? ['--profile', 'devnet'] : []),
    ...args,
  ];
  const r = run(compose[0], full, { env: { ...composeEnv, ...env } });
  if (check && r.code !== 0) fail(`${compose[0]} ${full.join(' ')} exited ${r.code}:\n${r.out}`);
  return r;
}

const gateway = `http://127.0.0.1:${gatewayPort}`;
async function api(pathname, key, body, base = gateway) {
  const res = await fetch(`${base}${pathname}`, {
    method: body ? 'POST' : 'GET',
    headers: { 'X-API-KEY': key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(5_000),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}
/**
 * Writes `request` to the balancer on one raw socket, and `body` once the balancer answers
 * `100 Continue` (a request with `Expect: 100-continue`); resolves with everything read once
 * `done(text so far)`, or after 5 s.
 */
function rawExchange(request, done, body) {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: gatewayPort });
    let text = '';
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(finish, 5_000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      text += chunk;
      if (body !== undefined && /^HTTP\/1\.1 100 /m.test(text)) {
        socket.write(body);
        body = undefined;
      }
      if (done(text)) finish();
    });
    socket.on('error', reject);
    socket.write(request);
  });
}
async function until(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) fail(`${what}: not within ${timeoutMs / 1000} s${last ? ` (${last.message})` : ''}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * `up -d` and then every container healthy: `--wait` where Compose has it (v2); with v1, the
 * containers' health states polled until each with a health check is healthy and each one-shot
 * (redis-acl) has exited 0.
 */
async function upAndWait(args, timeoutMs = 240_000) {
  if (hasWait) {
    dc(['up', '-d', '--wait', ...args]);
    return;
  }
  dc(['up', '-d', ...args]);
  await until(
    'every container healthy',
    async () => {
      const ids = dc(['ps', '-q']).stdout.trim().split('\n').filter(Boolean);
      const containers = ids.map((id) => JSON.parse(run('docker', ['inspect', id]).stdout)[0]);
      const bad = containers.filter(({ State: s, Config: c }) => {
        if (c.Labels['com.docker.compose.service'] !== 'redis-acl')
          return s.Health ? s.Health.Status !== 'healthy' : s.Status !== 'running';
        if (s.Status === 'exited' && s.ExitCode !== 0) fail(`redis-acl exited ${s.ExitCode}`);
        return s.Status !== 'exited';
      });
      return ids.length > 0 && bad.length === 0;
    },
    timeoutMs,
  );
}

/** What Redis answers `command` run as `user` (its password) inside the container of `server` (a compose service), or without login. */
function asRedisUser(server, user, password, command) {
  const login = user ? ['--user', user, '--pass', password, '--no-auth-warning'] : [];
  return dc(['exec', '-T', server, 'redis-cli', ...login, ...command], { check: false }).out.trim();
}

// fetch's AbortSignal.timeout does not keep Node alive; this does, until the end.
const keepAlive = setInterval(() => {}, 1_000);
let step = Date.now();
try {
  // 1. Images
  log('building the images');
  // The Dockerfile pins its base image by digest; NODE_IMAGE overrides it (a local stand-in
  // has no registry digest; REDIS_IMAGE does the same for compose's Redis, from this environment).
  const baseImage = process.env.NODE_IMAGE ? ['--build-arg', `NODE_IMAGE=${process.env.NODE_IMAGE}`] : [];
  if (process.env.NODE_IMAGE || process.env.REDIS_IMAGE)
    log(
      `base images overridden: ${process.env.NODE_IMAGE ?? 'pinned node'}, ${process.env.REDIS_IMAGE ?? 'pinned redis'}`,
    );
  const build = run('docker', ['build', '-q', ...baseImage, '-t', 'pmm-quote-service:local', '.']);
  if (build.code !== 0) fail(`docker build failed:\n${build.out}`);
  const buildDevnet = run('docker', [
    'build',
    '-q',
    ...baseImage,
    '--target',
    'devnet',
    '-t',
    'pmm-quote-devnet:local',
    '.',
  ]);
  if (buildDevnet.code !== 0) fail(`docker build --target devnet failed:\n${buildDevnet.out}`);
  const buildOperator = run('docker', [
    'build',
    '-q',
    ...baseImage,
    '--target',
    'operator',
    '-t',
    'pmm-operator:local',
    '.',
  ]);
  if (buildOperator.code !== 0) fail(`docker build --target operator failed:\n${buildOperator.out}`);
  const buildLb = run('docker', ['build', '-q', ...baseImage, '--target', 'lb', '-t', 'pmm-quote-lb:local', '.']);
  if (buildLb.code !== 0) fail(`docker build --target lb failed:\n${buildLb.out}`);
  for (const image of [
    'pmm-quote-service:local',
    'pmm-quote-devnet:local',
    'pmm-operator:local',
    'pmm-quote-lb:local',
  ]) {
    const size = run('docker', ['image', 'inspect', '--format', '{{.Size}}', image]).stdout.trim();
    log(`image ${image}: ${(Number(size) / 1e6).toFixed(0)} MB`);
  }
  log(`images built in ${secs(step)} s`);

  // 2. Without secrets a service refuses to start and names each one.
  const refused = run('docker', [
    'run',
    '--rm',
    '-e',
    'SERVED_CHAINS=8453,56',
    'pmm-quote-service:local',
    'node',
    'services/signer/dist/main.js',
  ]);
  for (const name of ['INTERNAL_TOKEN', 'SIGNER_KEY_8453', 'SIGNER_KEY_56'])
    if (refused.code === 0 || !refused.out.includes(name))
      fail(`the signer without secrets should name ${name}:\n${refused.out}`);
  log('without secrets the signer refuses to start, naming INTERNAL_TOKEN, SIGNER_KEY_8453 and SIGNER_KEY_56');

  // 3. Up, devnet profile. `--build` builds through Compose, which passes NODE_IMAGE from this
  // environment (a stand-in base has no registry digest: without the build argument it fails).
  step = Date.now();
  await upAndWait(['--build']);
  log(`\`up -d --build${hasWait ? ' --wait' : ''}\` and every container healthy in ${secs(step)} s`);

  // Every container hardened: read-only root, no capabilities, no new privileges, limits.
  for (const id of dc(['ps', '-q']).stdout.trim().split('\n').filter(Boolean)) {
    const inspected = JSON.parse(run('docker', ['inspect', id]).stdout)[0];
    const h = inspected.HostConfig;
    const name = inspected.Config.Labels['com.docker.compose.service'];
    const problems = [
      h.ReadonlyRootfs !== true && 'a writable root filesystem',
      JSON.stringify(h.CapDrop) !== '["ALL"]' && `capabilities not dropped (${JSON.stringify(h.CapDrop)})`,
      !(h.SecurityOpt ?? []).includes('no-new-privileges:true') && 'no no-new-privileges',
      !(h.PidsLimit > 0) && 'no process limit',
      !name.startsWith('redis') && !(h.Memory > 0) && 'no memory limit',
    ].filter(Boolean);
    if (problems.length > 0) fail(`${name} runs with ${problems.join(', ')}`);
  }
  const write = dc(['exec', '-T', 'gateway', 'node', '-e', "require('fs').writeFileSync('/app/x', '')"], {
    check: false,
  });
  if (write.code === 0 || !/EROFS/.test(write.out)) fail(`the gateway could write into its image:\n${write.out}`);
  log('every container: read-only root (EROFS inside), capabilities dropped, no new privileges, limits');

  // Each service holds its own secrets only: read from inside each running container.
  const secretName = /^(INTERNAL_TOKEN|DEV_API_KEY|SIGNER_KEY|SIGNER_KEYSTORE|QUOTER_KEY|REDIS_PASSWORD)/;
  const expected = {
    // The quoter keys too: the signer's firm quotes (a sign with amountIn) authorise quote() with them.
    signer: [
      'internal_token',
      'quoter_key_4663',
      'quoter_key_56',
      'quoter_key_8453',
      'redis_password',
      'signer_key_4663',
      'signer_key_56',
      'signer_key_8453',
    ],
    gateway: ['dev_api_key', 'internal_token', 'redis_password'],
    'indexer-8453': ['quoter_key', 'redis_password'],
    'indexer-56': ['quoter_key', 'redis_password'],
    'indexer-4663': ['quoter_key', 'redis_password'],
    // The ledgers hold no key: only their own Redis user's password.
    'ledger-8453': ['redis_password'],
    'ledger-56': ['redis_password'],
    'ledger-4663': ['redis_password'],
  };
  const probe =
    "const fs=require('fs');const ls=(d)=>{try{return fs.readdirSync(d).sort()}catch{return []}};" +
    "console.log(JSON.stringify({env:Object.keys(process.env),secrets:ls('/run/secrets/pmm'),devnet:ls('/devnet')}))";
  for (const [service, files] of Object.entries(expected)) {
    const held = await until(
      `the secrets folder of ${service}`,
      async () => {
        const r = dc(['exec', '-T', service, 'node', '-e', probe], { check: false });
        if (r.code !== 0) return undefined;
        const seen = JSON.parse(r.stdout);
        return seen.secrets.length > 0 ? seen : undefined;
      },
      120_000,
    );
    const envSecrets = held.env.filter((n) => secretName.test(n));
    if (JSON.stringify(held.secrets) !== JSON.stringify(files) || envSecrets.length > 0)
      fail(`${service} holds ${JSON.stringify({ folder: held.secrets, env: envSecrets })}, expected ${files}`);
    if (held.devnet.some((f) => f !== 'chains.json' && !f.endsWith('.tmp')))
      fail(`${service} sees more than the chains file in /devnet: ${held.devnet}`);
  }
  devKey = dc(['exec', '-T', 'gateway', 'cat', '/run/secrets/pmm/dev_api_key']).stdout.trim();
  log('each service holds only its own secrets (its folder; none in its environment)');

  // 4. The two Redis roles: each service's URLs, each server's fsync policy and append-only file.
  const containers = dc(['ps', '-q'])
    .stdout.trim()
    .split('\n')
    .filter(Boolean)
    .map((id) => JSON.parse(run('docker', ['inspect', id]).stdout)[0]);
  const serviceOf = (c) => c.Config.Labels['com.docker.compose.service'];
  const envOf = (c) =>
    Object.fromEntries(c.Config.Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  const redisUsers = Object.keys(expected);
  for (const c of containers.filter((c) => redisUsers.includes(serviceOf(c)))) {
    const env = envOf(c);
    if (env.REDIS_URL !== REDIS_SERVERS[1].url || env.REDIS_RECORDS_URL !== REDIS_SERVERS[0].url)
      fail(`${serviceOf(c)} has REDIS_URL=${env.REDIS_URL} REDIS_RECORDS_URL=${env.REDIS_RECORDS_URL}`);
  }
  for (const { service, appendfsync } of REDIS_SERVERS) {
    // No Redis user may read the configuration (CONFIG GET): the server's command line says it.
    const args = containers.find((c) => serviceOf(c) === service).Args;
    const option = (name) => args[args.indexOf(`--${name}`) + 1];
    if (
      option('appendfsync') !== appendfsync ||
      option('appendonly') !== 'yes' ||
      option('maxmemory-policy') !== 'noeviction'
    )
      fail(`${service} runs ${JSON.stringify(args)}, expected appendonly yes, appendfsync ${appendfsync}, noeviction`);
  }
  log(
    `two Redis roles: ${redisUsers.length} services with REDIS_URL=${REDIS_SERVERS[1].url} and REDIS_RECORDS_URL=${REDIS_SERVERS[0].url}; ` +
      REDIS_SERVERS.map(({ service, appendfsync }) => `${service} appendfsync ${appendfsync}`).join(', '),
  );
  // REDIS_URL set without REDIS_RECORDS_URL (a deployment from before the two roles): refused before any Redis starts.
  const ownRedis = dc(['run', '--rm', '-T', 'redis-acl'], {
    check: false,
    env: { REDIS_URL: 'redis://someone:password-in-url@elsewhere:6379' },
  });
  if (
    ownRedis.code === 0 ||
    !/REDIS_URL is set but REDIS_RECORDS_URL is not/.test(ownRedis.out) ||
    ownRedis.out.includes('password-in-url')
  )
    fail(
      `redis-acl with REDIS_URL alone should refuse, naming REDIS_RECORDS_URL, not the URL (exit ${ownRedis.code}):\n${ownRedis.out}`,
    );
  log('the redis-acl step refuses REDIS_URL set without REDIS_RECORDS_URL, naming it');

  // Redis users: each process's credentials, from its own container, refused outside its role.
  const passwordOf = (service) => dc(['exec', '-T', service, 'cat', '/run/secrets/pmm/redis_password']).stdout.trim();
  // The tools run only on demand: their passwords, from the folder the ACL file was rendered from.
  const toolPassword = (user) =>
    dc(['exec', '-T', 'devnet', 'cat', `/devnet-secrets/redis-users/${user}`]).stdout.trim();
  const anyKey = `pmm:apikey:${'f'.repeat(64)}`;
  const matrix = [
    // [user, password, command, expected answer]
    ['indexer-8453', passwordOf('indexer-8453'), ['SET', anyKey, '{}'], /NOPERM/],
    ['indexer-8453', passwordOf('indexer-8453'), ['SADD', 'pmm:apikeys', 'x'], /NOPERM/],
    ['indexer-8453', passwordOf('indexer-8453'), ['DEL', 'pmm:{8453}:audit'], /NOPERM/],
    ['indexer-8453', passwordOf('indexer-8453'), ['SET', 'pmm:{56}:book', '{}'], /NOPERM/],
    ['indexer-8453', passwordOf('indexer-8453'), ['EXISTS', 'pmm:{8453}:book'], /^\d+$/],
    ['gateway', passwordOf('gateway'), ['SET', 'pmm:integrator:evil', '{}'], /NOPERM/],
    ['gateway', passwordOf('gateway'), ['DEL', 'pmm:{8453}:audit'], /NOPERM/],
    ['gateway', passwordOf('gateway'), ['SCARD', 'pmm:apikeys'], /^\d+$/],
    ['signer', passwordOf('signer'), ['SET', anyKey, '{}'], /NOPERM/],
    ['signer', passwordOf('signer'), ['SET', 'pmm:{8453}:book', '{}'], /NOPERM/],
    ['indexer-56', passwordOf('indexer-56'), ['SET', 'pmm:{8453}:book', '{}'], /NOPERM/],
    // No user reads the server's configuration (its passwords) or touches scripts and functions.
    ['indexer-8453', passwordOf('indexer-8453'), ['CONFIG', 'GET', '*'], /NOPERM/],
    ['signer', passwordOf('signer'), ['CONFIG', 'GET', 'requirepass'], /NOPERM/],
    ['signer', passwordOf('signer'), ['SCRIPT', 'FLUSH'], /NOPERM/],
    ['gateway', passwordOf('gateway'), ['FUNCTION', 'FLUSH'], /NOPERM/],
    ['keys', toolPassword('keys'), ['DEL', 'pmm:{8453}:audit'], /NOPERM/],
    ['keys', toolPassword('keys'), ['FLUSHALL'], /NOPERM/],
    ['operator', toolPassword('operator'), ['SET', anyKey, '{}'], /NOPERM/],
    ['operator', toolPassword('operator'), ['XLEN', 'pmm:{8453}:audit'], /^\d+$/],
    ['gateway', 'not-the-password-0123456789', ['PING'], /WRONGPASS/],
    [undefined, undefined, ['SCARD', 'pmm:apikeys'], /NOAUTH/],
    [undefined, undefined, ['PING'], /NOAUTH/],
  ];
  // The same users on both servers (one ACL file): the same answers from each.
  for (const { service } of REDIS_SERVERS)
    for (const [user, password, command, answerLike] of matrix) {
      const answer = asRedisUser(service, user, password, command);
      if (!answerLike.test(answer))
        fail(
          `Redis ${service} as ${user ?? 'the default user'}: ${command.join(' ')} answered ${JSON.stringify(answer)}, expected ${answerLike}`,
        );
    }
  // Each server's append-only file on, as a service user sees it (INFO, which the durability checks read).
  for (const { service } of REDIS_SERVERS) {
    const persistence = asRedisUser(service, 'signer', passwordOf('signer'), ['INFO', 'persistence']);
    if (!/^aof_enabled:1\r?$/m.test(persistence)) fail(`${service}: INFO persistence says\n${persistence}`);
  }
  // A compromised gateway cannot mint a key: the key CLI inside its container runs as its user.
  const minted = dc(
    ['exec', '-T', 'gateway', 'node', 'services/gateway/dist/cli/keys.js', 'create', '--integrator', 'mallory'],
    { check: false },
  );
  if (minted.code === 0 || !/NOPERM/.test(minted.out))
    fail(`the key CLI in the gateway's container should be refused (NOPERM):\n${minted.out}`);
  log(
    `Redis users: ${matrix.length} checks on each of ${REDIS_SERVERS.map((s) => s.service).join(' and ')} (each refused outside its role, the default user off), ` +
      'both with aof_enabled:1, key CLI refused as the gateway',
  );

  // 5. Books on every chain, then the demo (sign, approve, swap on-chain) through the gateway.
  for (const chainId of [8453, 56, 4663])
    await until(
      `book of chain ${chainId}`,
      async () => (await api(`/v2/price?chainId=${chainId}`, devKey)).status === 200,
      240_000,
    );
  log(`all three books served ${secs(step)} s after \`up\``);

  // The API reference page works from the image: its script is the build's copy of Redoc's
  // bundle, and the image holds neither the redoc package nor the React it brings.
  const page = await fetch(`${gateway}/docs`, { signal: AbortSignal.timeout(5_000) });
  const script = /<script src="([^"]+)"/.exec(await page.text())?.[1];
  const bundle = script && (await fetch(new URL(script, `${gateway}/docs`), { signal: AbortSignal.timeout(5_000) }));
  const bundleBytes = bundle?.ok ? (await bundle.arrayBuffer()).byteLength : 0;
  if (page.status !== 200 || bundleBytes < 1_000_000)
    fail(`/docs answered ${page.status}, its script ${script} ${bundle?.status} with ${bundleBytes} bytes`);
  const modules = dc([
    'exec',
    '-T',
    'gateway',
    'node',
    '-e',
    "console.log(require('fs').readdirSync('node_modules/.pnpm').join('\\n'))",
  ]);
  const unwanted = modules.stdout.split('\n').filter((dir) => /^(redoc|react|react-dom|mobx|core-js)@/.test(dir));
  if (unwanted.length > 0) fail(`the runtime image holds ${unwanted.join(', ')}`);
  log(`/docs and its ${(bundleBytes / 1e6).toFixed(1)} MB bundle served from the image, which holds no redoc or React`);
  const stack = JSON.parse(dc(['exec', '-T', 'devnet', 'cat', '/devnet/chains.json']).stdout);
  for (const [id, chain] of Object.entries(stack.chains)) {
    const port = { 8453: 8545, 56: 8546, 4663: 8547 }[id];
    const hostPort = dc(['port', 'devnet', String(port)])
      .stdout.trim()
      .split(':')
      .pop();
    chain.rpcUrl = `http://127.0.0.1:${hostPort}`;
    chain.wsUrl = `ws://127.0.0.1:${hostPort}`;
  }
  stack.gateway = { url: gateway, apiKey: devKey };
  const stackFile = path.join(work, 'stack.json');
  writeFileSync(stackFile, JSON.stringify(stack, null, 2));
  const demo = run(process.execPath, [
    '-r',
    './scripts/lib/ts-register.cjs',
    'packages/client/examples/demo.ts',
    stackFile,
  ]);
  if (demo.code !== 0) fail(`the demo (signed swaps through the compose gateway) failed:\n${demo.out}`);
  log('signed swaps executed on-chain through the compose gateway on all three chains');
  // Their audit records, read by the operator tool as the read-only `operator` user.
  const audit = dc(['run', '--rm', '-T', 'operator', 'audit.js', 'list', '--chain', 'all'], { check: false });
  const records = audit.stdout.split('\n').filter((l) => l.trim()).length;
  if (audit.code !== 0 || records < 3)
    fail(`\`run operator audit.js list\` exited ${audit.code} with ${records} lines:\n${audit.out}`);
  log(`the operator tool lists ${records} audit records as the \`operator\` Redis user`);
  // Each server holds only its role's keys (listed by SCAN, which any service user may run).
  const operatorPassword = toolPassword('operator');
  const held = {};
  for (const { service, role } of REDIS_SERVERS) {
    const keys = asRedisUser(service, 'operator', operatorPassword, ['--scan']).split('\n').filter(Boolean).sort();
    const misplaced = keys.filter((key) => redisKeyRole(key, 'pmm') !== role);
    if (misplaced.length > 0) fail(`${service} (${role}) holds ${misplaced.join(', ')}`);
    held[role] = keys;
  }
  const missing = [
    ...['pmm:{8453}:audit', 'pmm:{56}:ledger:cursor', 'pmm:integrator:dev', 'pmm:apikeys'].filter(
      (k) => !held.records.includes(k),
    ),
    ...['pmm:{4663}:book', 'pmm:{8453}:pairs', 'pmm:{56}:mids'].filter((k) => !held.rebuildable.includes(k)),
  ];
  if (missing.length > 0) fail(`expected on their servers, missing: ${missing.join(', ')}`);
  log(
    `each Redis holds only its role's keys: redis ${held.records.length} records, redis-rebuildable ${held.rebuildable.length} rebuildable`,
  );

  // 6. A key created with the key CLI (the `keys` tool, its own Redis user) survives a Redis restart.
  const user = stack.chains['8453'].testUser.address;
  const created = dc(['run', '--rm', '-T', 'keys', 'create', '--integrator', 'composetest', '--whitelist', user]);
  const key = /^API key: (\S+)$/m.exec(created.stdout)?.[1];
  if (!key) fail(`the key CLI printed no key:\n${created.out}`);
  const chain = stack.chains['8453'];
  const signBody = {
    chainId: 8453,
    tokenIn: chain.quoteToken.address,
    tokenOut: chain.baseTokens[0].address,
    fee: '10',
    userAddress: user,
  };
  const signs = async () => (await api('/v2/swap/sign', key, signBody)).status === 200;
  await until('the new key signs', signs, 10_000);
  step = Date.now();
  dc(['restart', 'redis', 'redis-rebuildable']);
  await until('the key signs after `restart redis redis-rebuildable`', signs, 60_000);
  log(`after \`restart redis redis-rebuildable\` the CLI-made key signs again (${secs(step)} s)`);
  // Down, and the rebuildable server's volume gone (what a deployment from before the split
  // starts with, or a lost server): the records alone bring the service back.
  step = Date.now();
  dc(['down']);
  const dropped = run('docker', ['volume', 'rm', `${project}_redis-rebuildable-data`]);
  if (dropped.code !== 0) fail(`docker volume rm ${project}_redis-rebuildable-data:\n${dropped.out}`);
  await upAndWait(['--no-build']);
  await until('the key signs after `down`, the rebuildable volume dropped, and `up`', signs, 180_000);
  for (const chainId of [8453, 56, 4663])
    await until(
      `book of chain ${chainId} rebuilt`,
      async () => (await api(`/v2/price?chainId=${chainId}`, devKey)).status === 200,
      120_000,
    );
  log(
    `after \`down\`, the rebuildable volume dropped, and \`up -d\`: the CLI-made key signs again, all three books served (${secs(step)} s)`,
  );

  // 7. Two indexers for 8453; kill one; the book keeps advancing.
  dc(['up', '-d', '--no-build', '--scale', 'indexer-8453=2']);
  const replicas = dc(['ps', '-q', 'indexer-8453']).stdout.trim().split('\n').filter(Boolean);
  if (replicas.length !== 2) fail(`expected 2 indexer-8453 replicas, got ${replicas.length}`);
  await new Promise((r) => setTimeout(r, 5_000));
  run('docker', ['kill', replicas[0]]);
  const blockNow = async () => (await api('/v2/price?chainId=8453', devKey)).body?.blockNumber ?? 0;
  const first = await until('a book after killing a replica', blockNow, 20_000);
  await until(
    'the book advancing by 3 blocks with one replica left',
    async () => (await blockNow()) >= first + 3,
    30_000,
  );
  log(`with one of two indexer-8453 replicas killed, the book advanced from block ${first}`);

  // 8. A hostile client through the balancer (one gateway, so one failure counter).
  step = Date.now();
  const statuses = [];
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${gateway}/v2/price?chainId=8453`, {
      headers: { 'X-API-KEY': `pmm_wrong_${i}`, 'X-Forwarded-For': `198.51.100.${i + 1}` },
      signal: AbortSignal.timeout(5_000),
    });
    statuses.push(res.status);
    await res.arrayBuffer();
  }
  const limited = statuses.filter((s) => s === 429).length;
  if (limited === 0 || statuses.some((s) => s !== 401 && s !== 429))
    fail(`40 wrong keys with forged X-Forwarded-For through the balancer: ${JSON.stringify(statuses)}`);
  if ((await api('/v2/price?chainId=8453', devKey)).status !== 200)
    fail('the valid key was refused after the wrong ones');
  const raw = await rawExchange(
    [0, 1]
      .map(
        (i) =>
          `GET /v2/price?chainId=8453 HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${devKey}\r\nX-Internal-Token: forged-${i}\r\n` +
          `X-Integrator-Id: someone-else\r\nX-Request-Id: pipelined-${i}\r\n\r\n`,
      )
      .join(''),
    (text) => /x-request-id: pipelined-1[\s\S]*\r\n\r\n\{/i.test(text),
  );
  if (
    // Not anchored to a line start: the second status line follows the first body directly.
    (raw.match(/HTTP\/1\.1 200 /g) ?? []).length !== 2 ||
    !/x-request-id: pipelined-0[\s\S]*x-request-id: pipelined-1/i.test(raw)
  )
    fail(`pipelined requests through the balancer not answered in order:\n${raw.slice(0, 2_000)}`);
  const body = JSON.stringify(signBody);
  const expectAnswer = await rawExchange(
    `POST /v2/swap/sign HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${key}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
    (text) => /"verificationData"[\s\S]*\}$|"error"[\s\S]*\}$/.test(text),
    body,
  );
  if (!/^HTTP\/1\.1 200 /m.test(expectAnswer) || !expectAnswer.includes('verificationData'))
    fail(`a sign with Expect: 100-continue through the balancer:\n${expectAnswer.slice(0, 2_000)}`);
  log(
    `hostile client through the balancer: ${limited} of 40 wrong keys with forged X-Forwarded-For refused 429 (one client), ` +
      `the valid key passes; pipelined requests with forged internal headers and an Expect: 100-continue sign answered (${secs(step)} s)`,
  );

  // 8. Three gateways behind the balancer: prices through its one port reach each of them.
  step = Date.now();
  await upAndWait(['--no-build', '--scale', 'gateway=3']);
  const gateways = dc(['ps', '-q', 'gateway']).stdout.trim().split('\n').filter(Boolean);
  if (gateways.length !== 3) fail(`expected 3 gateway replicas, got ${gateways.length}`);
  const opsBindings = gateways.map(
    (id) => JSON.parse(run('docker', ['inspect', id]).stdout)[0].NetworkSettings.Ports['9080/tcp'],
  );
  for (const binding of opsBindings)
    if (binding?.length !== 1 || binding[0].HostIp !== '127.0.0.1')
      fail(`a gateway's operator port is published on ${JSON.stringify(binding)}, expected loopback only`);
  /** Each replica's count of answered /v2/price requests, from its own /metrics. */
  const priceCounts = async () =>
    Promise.all(
      opsBindings.map(async ([{ HostPort }]) => {
        const text = await (
          await fetch(`http://127.0.0.1:${HostPort}/metrics`, { signal: AbortSignal.timeout(5_000) })
        ).text();
        return [...text.matchAll(/^http_requests_total\{[^}]*route="\/v2\/price"[^}]*\} (\d+)/gm)].reduce(
          (n, m) => n + Number(m[1]),
          0,
        );
      }),
    );
  const before = await priceCounts();
  let answered = 0;
  await until(
    'prices through the balancer reaching all three gateways',
    async () => {
      for (let i = 0; i < 10; i++) if ((await api('/v2/price?chainId=8453', devKey)).status === 200) answered++;
      const after = await priceCounts();
      return after.every((n, i) => n > before[i]);
    },
    60_000,
  );
  log(
    `\`--scale gateway=3\`: ${answered} prices through the balancer on port ${gatewayPort} reached all three gateways; their operator ports on loopback only (${secs(step)} s)`,
  );

  log(`test:compose passed in ${secs(t0)} s`);
} catch (err) {
  if (!process.exitCode) {
    console.error(`[test:compose] FAILED: ${err.message}`);
    process.exitCode = 1;
  }
  const logs = dc(['logs', '--no-color', '--tail', '40'], { check: false });
  console.error(logs.out);
} finally {
  step = Date.now();
  dc(['down', '-v', '--remove-orphans'], { check: false });
  rmSync(work, { recursive: true, force: true });
  log(`torn down (down -v) in ${secs(step)} s`);
  clearInterval(keepAlive);
}
