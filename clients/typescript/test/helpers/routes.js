// The server's route table, read from shared/httpapi/routes.go, and a
// fetch that records which routes a client called.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './server.js';

/** @returns {{ name: string, method: string, pattern: string, re: RegExp }[]} */
export function routeTable() {
  const src = readFileSync(join(repoRoot, 'shared/httpapi/routes.go'), 'utf8');
  const out = [];
  for (const m of src.matchAll(/\{"([a-z-]+)", http\.Method(\w+), "([^"]+)"/g)) {
    const re = new RegExp('^' + m[3].replace(/\{[a-z]+\}/g, '[^/]+') + '$');
    out.push({ name: m[1], method: m[2].toUpperCase(), pattern: m[3], re });
  }
  return out;
}

/**
 * A fetch that records the route of every request it sends (first match
 * in table order, as the server's router picks literal paths first).
 * @param {ReturnType<typeof routeTable>} table
 * @param {Set<string>} seen route names
 * @param {{ method: string, path: string }[]} [extra] requests of no route
 * @returns {typeof fetch}
 */
export function recordingFetch(table, seen, extra = []) {
  return async (input, init) => {
    const u = new URL(String(input));
    const method = (init?.method ?? 'GET').toUpperCase();
    const hits = table.filter((r) => r.method === method && r.re.test(u.pathname));
    // A literal segment wins over a wildcard (/queue/{name}/job vs /queue/{name}/jobs are distinct anyway).
    hits.sort((a, b) => (a.pattern.match(/\{/g)?.length ?? 0) - (b.pattern.match(/\{/g)?.length ?? 0));
    if (hits[0]) seen.add(hits[0].name);
    else extra.push({ method, path: u.pathname });
    return fetch(input, init);
  };
}
