// Starts the real local server (cmd/ocypod-local, embedded store) for a
// test file: built once per `node --test` run, on a free port.

import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, existsSync, rmSync, readdirSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/**
 * The server binary: OCYLESS_LOCAL_BIN (or OCYLESS_TEST_SERVER) when set, as
 * `make test-clients` sets it, else built with
 * `go build` into a directory shared by the test files of one run (they
 * are children of the same test runner, so keyed by its pid); the first
 * file builds it while the others wait.
 * @returns {Promise<string>}
 */
export async function serverBinary() {
  const given = process.env.OCYLESS_LOCAL_BIN || process.env.OCYLESS_TEST_SERVER;
  if (given) return given;
  const top = join(tmpdir(), 'ocyless-ts-tests');
  mkdirSync(top, { recursive: true });
  // Directories of runs whose runner is gone are removed.
  for (const d of readdirSync(top)) {
    const pid = Number(d);
    if (pid && pid !== process.ppid && !alive(pid)) rmSync(join(top, d), { recursive: true, force: true });
  }
  const dir = join(top, String(process.ppid));
  const bin = join(dir, 'ocypod-local');
  const ok = join(dir, 'built');
  const lock = join(top, `${process.ppid}.lock`);
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (existsSync(ok)) return bin;
    let mine = false;
    try {
      mkdirSync(lock);
      mine = true;
    } catch {
      // another test file is building it
    }
    if (mine) {
      try {
        if (!existsSync(ok)) {
          mkdirSync(dir, { recursive: true });
          try {
            execFileSync('go', ['build', '-o', bin, './cmd/ocypod-local'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
          } catch (err) {
            throw new Error(`building the server failed (go build -o ${bin} ./cmd/ocypod-local in ${repoRoot}; is Go on PATH?): ${err}`);
          }
          writeFileSync(ok, '');
        }
        return bin;
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for another test file to build ${bin}`);
    // A lock left by a killed build is stale after 5 minutes.
    try {
      if (Date.now() - statSync(lock).mtimeMs > 300_000) rmSync(lock, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
    await delay(200);
  }
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM';
  }
}

/**
 * Starts a server on a free port (OCYPOD_PORT=0; the port is read from its
 * "Starting queue server at" line) with the embedded store and one-second
 * sweeps, and waits until /health answers 200.
 * @param {Record<string, string>} [env] more OCYPOD_* settings
 * @returns {Promise<{ url: string, stop: () => Promise<void>, logs: () => string }>}
 */
export async function startServer(env = {}) {
  const bin = await serverBinary();
  /** @type {Record<string, string | undefined>} */
  const childEnv = { ...process.env };
  for (const k of Object.keys(childEnv)) if (k.startsWith('OCYPOD_')) delete childEnv[k];
  Object.assign(childEnv, {
    OCYPOD_HOST: '127.0.0.1',
    OCYPOD_PORT: '0',
    OCYPOD_TIMEOUT_CHECK_INTERVAL: '1s',
    OCYPOD_RETRY_CHECK_INTERVAL: '1s',
    OCYPOD_EXPIRY_CHECK_INTERVAL: '1s',
    OCYPOD_SHUTDOWN_TIMEOUT: '1s',
    OCYPOD_LOG_LEVEL: 'info',
    ...env,
  });
  const child = spawn(bin, [], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() });
  let log = '';
  /** @type {(addr: string) => void} */
  let gotAddr = () => {};
  const addr = new Promise((/** @type {(a: string) => void} */ r) => { gotAddr = r; });
  const onData = (/** @type {Buffer} */ b) => {
    log = (log + b.toString()).slice(-20_000);
    const m = /Starting queue server at: (\S+?)"?(\s|$)/.exec(log);
    if (m) gotAddr(m[1]);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise((r) => child.once('exit', r));
  const giveUp = new AbortController();
  const url = await Promise.race([
    addr.then((a) => `http://${a}`),
    exited.then((code) => { throw new Error(`the server exited (${code}) before listening:\n${log}`); }),
    delay(30_000, undefined, { signal: giveUp.signal }).then(() => {
      throw new Error(`the server did not say where it listens within 30s:\n${log}`);
    }),
  ]).finally(() => giveUp.abort());
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      if (r.status === 200) break;
    } catch {
      // not ready
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server at ${url} was not healthy within 30s:\n${log}`);
    }
    await delay(50);
  }
  return {
    url,
    logs: () => log,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}
