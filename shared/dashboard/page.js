'use strict';
// The dashboard: a client of the JSON API of its own origin. Every piece of
// data reaches the DOM as a text node or an attribute value, never as
// markup; the page's Content-Security-Policy enforces Trusted Types, so a
// string handed to an HTML sink would throw rather than render.
(() => {
  const STATUSES = ['queued', 'scheduled', 'waiting', 'running', 'completed', 'failed', 'timed_out', 'cancelled'];
  const PAGE_SIZES = [20, 50, 100];
  const LIST_FIELDS = ['id', 'status', 'tags', 'key', 'priority', 'worker', 'retries_attempted', 'created_at', 'ended_at', 'error'];
  const JOB_FIELDS = ['id', 'queue', 'status', 'tags', 'created_at', 'started_at', 'ended_at', 'last_heartbeat',
    'input', 'output', 'timeout', 'heartbeat_timeout', 'expires_after', 'retries', 'retries_attempted',
    'retry_delays', 'ended', 'priority', 'run_at', 'key', 'depends_on', 'dependents', 'retry_backoff',
    'timeout_retries', 'tracked', 'worker', 'attempt', 'error', 'history'];
  // What each status can be changed to from here (the API decides; these
  // only choose which buttons to offer).
  const CANCELLABLE = new Set(['queued', 'scheduled', 'waiting', 'running', 'failed']);
  const RETRYABLE = new Set(['running', 'failed', 'timed_out', 'cancelled']);
  const REQUEUEABLE = new Set(['failed', 'timed_out', 'cancelled']);
  const REFRESH_MS = 5000;
  // Throughput is charted per minute over the last hour, as the server
  // counts it (GET /queue/{name}/stats?by=minute).
  const MINUTES = 60;
  // The overview reads at most this many running and queued jobs a queue.
  const RUNNING_LIMIT = 100;
  const OLDEST_SCAN = 100;
  const FAILURE_PREVIEW = 20;
  const RETRY_LIMIT = 1000;

  // The page is served at <root>/ui, so the API's root is the page's
  // directory, whatever prefix a proxy or a stage puts in front.
  const root = new URL('./', document.baseURI);
  const $ = (id) => document.getElementById(id);
  const main = $('main');

  // ---- the API ----------------------------------------------------------

  // parse keeps a number whose text a double cannot hold (a large integer,
  // 1.10) as that text, where the browser can (JSON.rawJSON).
  const parse = (text) => JSON.parse(text, (key, value, ctx) =>
    typeof value === 'number' && ctx && typeof ctx.source === 'string' &&
      ctx.source !== String(value) && typeof JSON.rawJSON === 'function' ? JSON.rawJSON(ctx.source) : value);

  class APIError extends Error {
    constructor(message, status) { super(message); this.status = status; }
  }

  async function call(method, path, body) {
    const init = { method, cache: 'no-store', credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const what = method + ' /' + path;
    let res;
    try {
      res = await fetch(new URL(path, root), init);
    } catch (e) {
      throw new APIError(what + ': the server could not be reached (' + e.message + ')', 0);
    }
    const text = await res.text();
    if (!res.ok) {
      let msg = what + ': ' + res.status + (res.statusText ? ' ' + res.statusText : '') + (text ? ': ' + text : '');
      if (res.status === 403) {
        msg += '\n(A local server refuses pages from other hosts; a deployed API with IAM auth refuses every' +
          ' unsigned request, and this page cannot sign: see the README\'s Dashboard section.)';
      }
      throw new APIError(msg, res.status);
    }
    return text === '' ? null : parse(text);
  }

  // A queue or failure group named "." or ".." cannot be put in a URL
  // path: URL parsing takes the segment, and its escaped forms %2E and
  // %2E%2E alike, as a directory step, so queue/%2E%2E/jobs would ask for
  // /jobs. The page shows such names without links and never sends them.
  const addressable = (s) => s !== '.' && s !== '..';
  // enc makes text one path segment of an API address.
  const enc = (s) => {
    if (!addressable(s)) throw new APIError('"' + s + '" cannot be sent in a URL path (a browser reads it as a directory step)', 0);
    return encodeURIComponent(s);
  };
  // frag makes text one segment of the page's own fragment, where dots
  // are kept as they are.
  const frag = (s) => encodeURIComponent(s);
  const qs = (params) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
    const s = p.toString();
    return s ? '?' + s : '';
  };

  // ---- DOM --------------------------------------------------------------

  // h builds an element. Children are nodes or become text nodes; props
  // set properties and attributes, never markup.
  function h(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'data') Object.assign(e.dataset, v);
      else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
      else if (k === 'disabled' || k === 'checked' || k === 'selected' || k === 'value') e[k] = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    append(e, kids);
    return e;
  }

  function append(e, kids) {
    for (const kid of kids.flat(Infinity)) {
      if (kid !== undefined && kid !== null && kid !== false) e.append(kid instanceof Node ? kid : String(kid));
    }
  }

  // svg builds an SVG element: attributes are the page's own numbers and
  // names; text (a <title>) is a text node.
  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
    append(e, kids);
    return e;
  }

  const link = (hash, ...kids) => h('a', { href: hash }, ...kids);
  // A queue "." or ".." has no view: its name shows as text, marked.
  const queueLink = (name) => addressable(name) ? link('#/queue/' + frag(name), name)
    : h('span', { class: 'mono unaddressable', title: 'This name cannot be used in a URL path: see the note below' }, name, '*');
  const jobLink = (id) => link('#/job/' + frag(String(id)), String(id));
  const statusText = (s) => h('span', { class: 'status status-' + s, data: { status: s } }, s);
  const none = () => h('span', { class: 'muted' }, '—');
  const json = (v) => JSON.stringify(v, null, 2);
  const when = (t) => t ? h('span', { title: t }, t.replace('T', ' ').replace(/\.\d+Z$/, 'Z')) : none();
  const tags = (list) => Array.isArray(list) && list.length ? list.map((t) => h('span', { class: 'tag' }, t)) : none();
  const table = (head, rows, props) => h('table', props,
    h('thead', null, h('tr', null, head.map((c) => h('th', { class: c.num ? 'num' : null }, c.label ?? c)))),
    h('tbody', null, rows));
  const num = (n, status) => h('td', { class: 'num' + (n ? '' : ' zero'), data: status ? { status } : null }, String(n ?? 0));
  // count is a queue's count of one status, a link to that listing.
  const count = (name, n, status) => h('td', { class: 'num' + (n ? '' : ' zero'), data: { status } },
    n && addressable(name) ? link('#/queue/' + frag(name) + '?status=' + status, String(n)) : String(n ?? 0));

  // span is a duration in milliseconds, in its two largest units.
  function span(ms) {
    if (!(ms >= 0)) ms = 0;
    const s = Math.floor(ms / 1000);
    const units = [[86400, 'd'], [3600, 'h'], [60, 'm'], [1, 's']];
    for (let i = 0; i < units.length; i++) {
      const [size, u] = units[i];
      if (s >= size || size === 1) {
        const big = Math.floor(s / size);
        const next = units[i + 1];
        const small = next ? Math.floor((s % size) / next[0]) : 0;
        return big + u + (next && small ? ' ' + small + next[1] : '');
      }
    }
    return '0s';
  }
  const since = (t) => Date.now() - Date.parse(t);
  const age = (t) => t ? h('span', { title: t, data: { age: String(Math.floor(since(t) / 1000)) } }, span(since(t))) : none();
  // preview is the first line of an error, cut short; the whole is its
  // tooltip.
  function preview(e) {
    if (!e) return none();
    const msg = String(e.message ?? '');
    const line = msg.split('\n')[0];
    const short = line.length > 120 ? line.slice(0, 119) + '…' : line + (line === msg ? '' : ' …');
    return h('span', { class: 'error-preview', title: e.group + ': ' + msg }, h('span', { class: 'mono' }, e.group), ': ', short);
  }

  function showError(e) {
    $('error-text').textContent = e instanceof Error ? e.message : String(e);
    $('error').hidden = false;
  }
  function clearError() {
    $('error').hidden = true;
    $('error-text').textContent = '';
  }
  // notice tells the outcome of an action, until the user goes to
  // another view than the one it belongs to.
  let noticeHash = '';
  const notice = (text, hash = location.hash) => {
    $('notice').textContent = text;
    noticeHash = hash;
  };

  // acting counts actions under way: no refresh runs meanwhile.
  let acting = 0;

  // button runs action once per click, disabled while it runs. A success
  // re-renders the view (or goes elsewhere); a failure is shown, and the
  // view re-rendered, since the refusal often means it was out of date.
  function button(label, attrs, action) {
    const b = h('button', Object.assign({ type: 'button' }, attrs), label);
    b.addEventListener('click', async () => {
      clearError();
      notice('');
      b.disabled = true;
      acting++;
      try {
        await action(b);
      } catch (e) {
        showError(e);
        await render();
      } finally {
        acting--;
        b.disabled = false;
      }
    });
    return b;
  }

  // confirmButton asks for a second click before a destructive action.
  // While one is armed, refreshes wait, so that it stays armed.
  function confirmButton(label, confirmLabel, attrs, action) {
    return button(label, attrs, async (b) => {
      if (!b.classList.contains('armed')) {
        b.classList.add('armed');
        b.textContent = confirmLabel;
        return;
      }
      await action(b);
    });
  }

  // ---- throughput -------------------------------------------------------

  // statsPath is a queue's statistics of today with the last hour's
  // per-minute counts.
  const statsPath = (name) => 'queue/' + enc(name) + '/stats' + qs({ by: 'minute' });

  const SERIES = ['created', 'completed', 'failed'];

  // minuteLabel is "HH:MM" (UTC) of the i-th minute from start.
  const minuteLabel = (start, i) => {
    const t = Date.parse(start);
    return Number.isFinite(t) ? new Date(t + i * 60000).toISOString().slice(11, 16) : '?';
  };

  // chart draws the last hour's three series (stats.minutes: created,
  // completed, failed, oldest minute first) as lines: a small inline SVG,
  // its numbers in data attributes and its summary in a <title>.
  function chart(name, minutes, width, height) {
    const series = SERIES.map((k) => {
      const values = Array.isArray(minutes?.[k]) ? minutes[k].slice(-MINUTES).map((v) => Number(v) || 0) : [];
      while (values.length < MINUTES) values.unshift(0);
      return values;
    });
    const max = Math.max(1, ...series.flat());
    const pad = 2;
    const x = (i) => pad + (i * (width - 2 * pad)) / (MINUTES - 1);
    const y = (v) => height - pad - (v * (height - 2 * pad)) / max;
    const lines = series.map((values, k) =>
      svg('g', { class: 'series-' + SERIES[k], 'data-series': SERIES[k], 'data-values': values.join(',') },
        svg('polyline', { points: values.map((v, i) => x(i).toFixed(1) + ',' + y(v).toFixed(1)).join(' ') })));
    const sum = (k) => series[k].reduce((a, v) => a + v, 0);
    const last = (k) => series[k][MINUTES - 1];
    const from = minuteLabel(minutes?.start, 0), to = minuteLabel(minutes?.start, MINUTES - 1);
    const summary = 'Per minute, ' + from + ' to ' + to + ' UTC: ' +
      SERIES.map((s, k) => s + ' ' + sum(k)).join(', ') + ' (peak ' + max + '/min)';
    return h('span', { class: 'chart', data: { chart: name } },
      svg('svg', { width, height, viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-label': summary, 'data-chart': '' },
        svg('title', null, summary),
        svg('line', { class: 'axis', x1: 0, y1: height - 0.5, x2: width, y2: height - 0.5 }),
        lines),
      h('span', { class: 'chart-now', title: 'This minute so far: created, completed, failed' },
        SERIES.map((s, k) => h('span', { class: 'series-' + s, data: { now: s } }, String(last(k))))));
  }

  const legend = () => h('p', { class: 'muted legend' },
    'Charts: jobs ', h('span', { class: 'series-created' }, 'created'), ', ', h('span', { class: 'series-completed' }, 'completed'),
    ' and ', h('span', { class: 'series-failed' }, 'failed'), ' (attempts that failed or timed out) per minute over the last hour, ' +
    'as the server counts them (GET /queue/{name}/stats?by=minute, summed over the queue\'s partitions). ' +
    'The numbers on the right are this minute\'s so far.');

  // ---- routing ----------------------------------------------------------

  // route reads the location's fragment: #/, #/queue/<name>?status=&limit=,
  // #/job/<id>.
  function route() {
    const [path, query] = location.hash.replace(/^#/, '').split('?');
    const parts = path.split('/').filter(Boolean).map((s) => {
      try { return decodeURIComponent(s); } catch { return s; }
    });
    return { view: parts[0] || '', arg: parts[1], params: new URLSearchParams(query || '') };
  }

  // pages is the queue view's paging: cursors of the pages seen, so that
  // Previous goes back. It belongs to one queue, status and page size.
  let pages = { key: '', cursors: [null], index: 0 };

  // openGroups are the failure groups shown open, kept across refreshes.
  const openGroups = new Set();

  let rendering = 0;
  // render shows the view the location names. A refresh (background)
  // that ends while an action runs or a confirmation is armed is dropped,
  // so that the button clicked stays as it is.
  async function render(background = false) {
    const seq = ++rendering;
    main.setAttribute('aria-busy', 'true');
    document.body.dataset.state = 'loading';
    const r = route();
    try {
      let view;
      if (r.view === 'queue' && r.arg) view = await queueView(r.arg, r.params);
      else if (r.view === 'job' && r.arg) view = await jobView(r.arg);
      else view = await overview();
      if (seq !== rendering) return;
      if (background && (acting || main.querySelector('.armed'))) {
        document.body.dataset.state = 'ready';
        return;
      }
      swap(view);
      $('updated').textContent = 'updated ' + new Date().toTimeString().slice(0, 8);
      document.body.dataset.state = 'ready';
    } catch (e) {
      if (seq !== rendering) return;
      showError(e);
      document.body.dataset.state = 'error';
    } finally {
      if (seq === rendering) main.removeAttribute('aria-busy');
    }
  }

  // swap replaces the view in one step (no blank frame) and gives the
  // focus back to the control that had it, found by its id or its key.
  function swap(view) {
    const had = main.contains(document.activeElement) ? document.activeElement : null;
    const key = had && (had.id ? '#' + CSS.escape(had.id) : had.dataset.key ? '[data-key="' + CSS.escape(had.dataset.key) + '"]' : null);
    main.replaceChildren(...view.filter((v) => v !== null && v !== undefined && v !== false));
    if (key) main.querySelector(key)?.focus({ preventScroll: true });
  }

  function crumbs(...items) {
    $('crumbs').replaceChildren(...items.map((it) => typeof it === 'string' ? h('span', null, it) : it));
  }

  // ---- views ------------------------------------------------------------

  // notFound turns a 404 into null: a name /info lists may belong to a
  // deleted queue whose jobs remain.
  const notFound = (p) => p.catch((e) => {
    if (e.status === 404) return null;
    throw e;
  });

  async function overview() {
    crumbs('Queues');
    const [info, workers, failures] = await Promise.all([call('GET', 'info'), call('GET', 'workers'), call('GET', 'failures')]);
    const names = Object.keys(info.queues).sort();
    const perQueue = await Promise.all(names.map(async (n) => {
      if (!addressable(n)) return null;
      const c = info.queues[n];
      const [settings, stats, queued, running] = await Promise.all([
        notFound(call('GET', 'queue/' + enc(n))),
        notFound(call('GET', statsPath(n))),
        c.queued ? call('GET', 'queue/' + enc(n) + '/jobs' + qs({ status: 'queued', limit: OLDEST_SCAN, fields: 'id,created_at' })) : null,
        c.running ? call('GET', 'queue/' + enc(n) + '/jobs' + qs({ status: 'running', limit: RUNNING_LIMIT, fields: 'id,worker,started_at,last_heartbeat' })) : null,
      ]);
      return { settings, stats, queued, running };
    }));
    const groups = await Promise.all(Object.keys(failures).map((g) =>
      openGroups.has(g) && addressable(g) ? call('GET', 'failures/' + enc(g) + qs({ limit: FAILURE_PREVIEW, fields: 'id,queue,worker,ended_at,error' })) : null));
    const rows = names.map((name, i) => {
      const c = info.queues[name];
      const q = perQueue[i];
      const s = q ? q.settings : undefined;
      return h('tr', { data: { queue: name } },
        h('td', null, queueLink(name)),
        STATUSES.map((st) => count(name, c[st], st)),
        h('td', { data: { field: 'state' } }, s === undefined ? h('span', { class: 'muted' }, 'unknown')
          : s === null ? h('span', { class: 'muted' }, 'deleted') : s.paused ? h('span', { class: 'paused' }, 'paused') : 'active'),
        h('td', { data: { field: 'throughput' } }, q && q.stats ? chart(name, q.stats.minutes, 150, 28) : none()),
        h('td', { data: { field: 'oldest' } }, oldest(c.queued, q && q.queued)),
        h('td', null, s ? pauseButton(name, !!s.paused) : null));
    });
    const running = names.flatMap((name, i) => (perQueue[i]?.running?.jobs || []).map((j) => ({ name, j })));
    const moreRunning = names.filter((name, i) => perQueue[i]?.running?.next_cursor);
    const stats = info.statistics || {};
    const odd = names.filter((n) => !addressable(n));
    return [
      h('h2', null, 'Queues'),
      names.length ? table(['Queue', ...STATUSES.map((s) => ({ label: s, num: true })), 'State', 'Last hour, per minute', 'Oldest queued', ''],
        rows, { id: 'queues' }) : h('p', { class: 'muted' }, 'No queues.'),
      names.length ? legend() : null,
      h('p', { class: 'muted legend' }, 'Oldest queued: how long ago the oldest queued job was created (a job queued again for a retry counts from its creation). ' +
        'It is exact while a queue holds at most ' + OLDEST_SCAN + ' queued jobs; past that, it is the oldest of the first ' + OLDEST_SCAN + ' in take order (priority, then queue order), marked ≥.'),
      odd.length ? h('p', { class: 'note', id: 'unaddressable' }, '* Queue ', odd.map((n, i) => [i ? ' and ' : '', h('span', { class: 'mono' }, n)]),
        ': a browser cannot send a name of only dots in a URL path (it reads . and .., escaped as %2E or not, as directory steps), ' +
        'so this page can neither open nor change it; its counts above come from GET /info. A client that sends %2E as it is reaches it.') : null,
      h('div', { class: 'stats', id: 'statistics' }, Object.entries(stats).map(([k, v]) =>
        h('div', { data: { stat: k } }, h('span', null, k.replace(/^total_jobs_/, '').replace(/_/g, ' ')), String(v)))),
      h('h2', null, 'Running jobs'),
      running.length ? table(['Queue', 'Job', 'Worker', 'Started', 'Running for', 'Last heartbeat'],
        running.map(({ name, j }) => h('tr', { data: { running: String(j.id) } },
          h('td', null, queueLink(name)), h('td', null, jobLink(j.id)), h('td', { class: 'mono', data: { field: 'worker' } }, j.worker ?? none()),
          h('td', null, when(j.started_at)), h('td', { data: { field: 'running-for' } }, age(j.started_at)),
          h('td', null, j.last_heartbeat ? [age(j.last_heartbeat), ' ago'] : none()))), { id: 'running' })
        : h('p', { class: 'muted', id: 'running' }, 'No job is running.'),
      moreRunning.length ? h('p', { class: 'muted' }, 'Only the first ' + RUNNING_LIMIT + ' of ', moreRunning.map((n, i) => [i ? ', ' : '',
        link('#/queue/' + frag(n) + '?status=running', n)]), ' are shown.') : null,
      h('h2', null, 'Workers'),
      workers.length ? table(['Worker', 'Last seen', { label: 'Running', num: true }, { label: 'Timed out', num: true }],
        workers.map((w) => h('tr', { data: { worker: w.name } },
          h('td', { class: 'mono' }, w.name), h('td', null, when(w.last_seen)), num(w.running), num(w.timed_out))), { id: 'workers' })
        : h('p', { class: 'muted' }, 'No worker took a job recently.'),
      h('h2', null, 'Failed for good, by group'),
      Object.keys(failures).length ? table(['Group', { label: 'Jobs', num: true }, ''],
        Object.entries(failures).flatMap(([g, n], i) => failureRows(g, n, groups[i])), { id: 'failures' })
        : h('p', { class: 'muted', id: 'failures' }, 'None.'),
    ];
  }

  // oldest shows the age of the oldest queued job among those read (the
  // first OLDEST_SCAN in take order), exact when they are all of them.
  function oldest(queued, page) {
    if (!queued || !page || !page.jobs.length) return none();
    const first = page.jobs.reduce((a, j) => (Date.parse(j.created_at) < Date.parse(a.created_at) ? j : a));
    const exact = !page.next_cursor;
    return h('span', { data: { job: String(first.id), exact: String(exact) }, title: 'job ' + first.id + ', created ' + first.created_at +
      (exact ? '' : ' (oldest of the first ' + OLDEST_SCAN + ' in take order)') }, exact ? '' : '≥ ', span(since(first.created_at)));
  }

  // failureRows is a failure group's row, with its jobs under it when it
  // is open.
  function failureRows(group, n, page) {
    const open = openGroups.has(group) && page;
    const toggle = addressable(group) ? h('button', {
      type: 'button', class: 'toggle', 'aria-expanded': String(!!open), data: { key: 'group:' + group, action: 'toggle' },
      on: { click: () => { if (openGroups.has(group)) openGroups.delete(group); else openGroups.add(group); render(); } },
    }, open ? '▾ ' : '▸ ', h('span', { class: 'mono' }, group))
      : h('span', { class: 'mono unaddressable', title: 'This group cannot be used in a URL path' }, group, '*');
    const retry = addressable(group) ? confirmButton('Retry group', 'Click again to retry ' + Math.min(n, RETRY_LIMIT) + ' job' + (n === 1 ? '' : 's'),
      { data: { action: 'retry-group', key: 'retry:' + group }, title: 'Queue the group\'s jobs again (POST /failures/{group}/retry), ' + RETRY_LIMIT + ' at most at a time' },
      async () => {
        const res = await call('POST', 'failures/' + enc(group) + '/retry' + qs({ limit: RETRY_LIMIT }));
        notice('Group ' + group + ': ' + res.retried + ' job' + (res.retried === 1 ? '' : 's') + ' queued again');
        await render();
      }) : null;
    const rows = [h('tr', { data: { group } }, h('td', null, toggle), num(n), h('td', null, retry))];
    if (open) {
      const more = page.total - page.jobs.length;
      rows.push(h('tr', { class: 'group-jobs', data: { groupJobs: group } }, h('td', { colspan: 3 },
        page.jobs.length ? table(['Job', 'Queue', 'Worker', 'Ended', 'Error'], page.jobs.map((j) => h('tr', { data: { job: String(j.id) } },
          h('td', null, jobLink(j.id)), h('td', null, queueLink(j.queue)), h('td', { class: 'mono' }, j.worker ?? none()),
          h('td', null, when(j.ended_at)), h('td', { data: { field: 'error' } }, preview(j.error))))) : h('p', { class: 'muted' }, 'No job left in this group.'),
        more > 0 ? h('p', { class: 'muted' }, 'and ' + more + ' more (the first ' + FAILURE_PREVIEW + ' are shown).') : null)));
    }
    return rows;
  }

  function pauseButton(name, paused) {
    return button(paused ? 'Resume' : 'Pause', { data: { action: paused ? 'resume' : 'pause', key: (paused ? 'resume:' : 'pause:') + name } }, async () => {
      await call('PATCH', 'queue/' + enc(name), { paused: !paused });
      notice('Queue ' + name + (paused ? ' resumed' : ' paused'));
      await render();
    });
  }

  async function queueView(name, params) {
    crumbs(link('#/', 'Queues'), '›', h('span', { class: 'mono' }, name));
    if (!addressable(name)) {
      return [h('h2', null, 'Queue ', h('span', { class: 'mono' }, name)),
        h('p', { class: 'note', id: 'unaddressable' }, 'A queue named ', h('span', { class: 'mono' }, name),
          ' cannot be sent in a URL path by a browser (it reads it as a directory step, escaped as %2E or not): this page cannot show or change it.' +
          ' A client that sends %2E as it is reaches it.')];
    }
    const status = STATUSES.includes(params.get('status')) ? params.get('status') : '';
    const asked = parseInt(params.get('limit'), 10);
    const limit = asked >= 1 && asked <= 1000 ? asked : PAGE_SIZES[0];
    const key = [name, status, limit].join('\u0000');
    if (pages.key !== key) pages = { key, cursors: [null], index: 0 };
    const cursor = pages.cursors[pages.index];
    const [settings, page, stats, schedules] = await Promise.all([
      call('GET', 'queue/' + enc(name)),
      call('GET', 'queue/' + enc(name) + '/jobs' + qs({ status, limit, cursor, fields: LIST_FIELDS.join(',') })),
      call('GET', statsPath(name)),
      call('GET', 'queue/' + enc(name) + '/schedules'),
    ]);
    const go = (s, l) => { location.hash = '#/queue/' + frag(name) + qs({ status: s, limit: l === PAGE_SIZES[0] ? '' : l }); };
    const statusSelect = h('select', { id: 'status-filter', 'aria-label': 'Status', on: { change: (e) => go(e.target.value, limit) } },
      h('option', { value: '', selected: status === '' }, 'every status'),
      STATUSES.map((s) => h('option', { value: s, selected: s === status }, s)));
    const sizes = PAGE_SIZES.includes(limit) ? PAGE_SIZES : [...PAGE_SIZES, limit].sort((a, b) => a - b);
    const sizeSelect = h('select', { id: 'page-size', 'aria-label': 'Page size', on: { change: (e) => go(status, +e.target.value) } },
      sizes.map((n) => h('option', { value: String(n), selected: n === limit }, n + ' per page')));
    const move = (to) => () => { pages.index = to; return render(); };
    const next = page.next_cursor;
    const rows = page.jobs.map((j) => h('tr', { data: { job: String(j.id) } },
      h('td', null, jobLink(j.id)), h('td', null, statusText(j.status)), h('td', null, tags(j.tags)),
      h('td', { class: 'mono' }, j.key ?? none()), h('td', { class: 'num' }, String(j.priority ?? 0)),
      h('td', { class: 'mono' }, j.worker ?? none()), h('td', { class: 'num' }, String(j.retries_attempted)),
      h('td', null, when(j.created_at)), h('td', null, when(j.ended_at)), h('td', { data: { field: 'error' } }, j.error ? preview(j.error) : none())));
    const dur = (d) => d && d.count ? span(d.mean * 1000) + ' mean of ' + d.count : none();
    return [
      h('h2', null, 'Queue ', h('span', { class: 'mono' }, name), settings.paused ? h('span', { class: 'paused' }, ' (paused)') : null),
      h('div', { class: 'actions' }, pauseButton(name, !!settings.paused)),
      fields(settings, 'settings'),
      h('h2', null, 'Today (UTC)'),
      h('div', { class: 'stats', id: 'queue-stats' },
        ['created', 'completed', 'failed', 'retries'].map((k) => h('div', { data: { stat: k } }, h('span', null, k), String(stats[k]))),
        h('div', { data: { stat: 'wait' } }, h('span', null, 'wait (queued to taken)'), dur(stats.wait)),
        h('div', { data: { stat: 'run' } }, h('span', null, 'run (taken to ended)'), dur(stats.run))),
      h('div', { class: 'big-chart' }, chart(name, stats.minutes, 480, 80)),
      legend(),
      h('h2', null, 'Schedules'),
      schedules.length ? table(['ID', 'When', 'Next run', 'Job'], schedules.map((s) => h('tr', { data: { schedule: s.id } },
        h('td', { class: 'mono' }, s.id), h('td', { class: 'mono' }, s.cron ? 'cron ' + s.cron : 'every ' + s.every),
        h('td', null, when(s.next_run)), h('td', { class: 'mono schedule-job' }, JSON.stringify(s.job)))), { id: 'schedules' })
        : h('p', { class: 'muted', id: 'schedules' }, 'No schedules.'),
      h('h2', null, 'Jobs'),
      h('div', { class: 'bar' }, statusSelect, sizeSelect,
        button('First', { id: 'page-first', disabled: pages.index === 0 }, move(0)),
        button('Previous', { id: 'page-prev', disabled: pages.index === 0 }, move(pages.index - 1)),
        button('Next', { id: 'page-next', disabled: !next }, () => {
          pages.cursors[pages.index + 1] = next;
          pages.cursors.length = pages.index + 2;
          return move(pages.index + 1)();
        }),
        h('span', { class: 'muted', id: 'page-number' }, 'page ' + (pages.index + 1))),
      page.jobs.length ? table(['ID', 'Status', 'Tags', 'Key', { label: 'Priority', num: true }, 'Worker',
        { label: 'Retries', num: true }, 'Created', 'Ended', 'Error'], rows, { id: 'jobs' })
        : h('p', { class: 'muted', id: 'no-jobs' }, 'No jobs' + (status ? ' with status ' + status : '') + '.'),
    ];
  }

  // fields shows an object's scalar members as a definition list.
  function fields(obj, id) {
    return h('dl', { class: 'fields', id }, Object.entries(obj).map(([k, v]) => [
      h('dt', null, k), h('dd', { data: { field: k } }, value(k, v))]));
  }

  function value(k, v) {
    if (v === null || v === undefined) return none();
    if (k === 'status') return statusText(v);
    if (k === 'queue') return queueLink(v);
    if (k === 'tags') return tags(v);
    if (k.endsWith('_at') || k === 'last_heartbeat') return when(v);
    if ((k === 'depends_on' || k === 'dependents') && Array.isArray(v)) {
      return v.length ? v.map((id, i) => [i ? ', ' : '', jobLink(id)]) : none();
    }
    if (typeof v === 'object') return h('span', { class: 'mono' }, JSON.stringify(v));
    return h('span', { class: typeof v === 'string' ? 'mono' : null }, String(v));
  }

  const jobError = (e) => e ? [h('span', { class: 'mono' }, e.group), ': ', h('span', { class: 'mono' }, e.message)] : none();

  async function jobView(id) {
    const job = await call('GET', 'job/' + encodeURIComponent(id) + qs({ fields: JOB_FIELDS.join(',') }));
    crumbs(link('#/', 'Queues'), '›', queueLink(job.queue), '›', h('span', null, 'job ' + job.id));
    const path = 'job/' + encodeURIComponent(String(job.id));
    const actions = [];
    if (CANCELLABLE.has(job.status)) {
      actions.push(button('Cancel', { data: { action: 'cancel' } }, async () => {
        await call('PATCH', path, { status: 'cancelled' });
        notice('Job ' + job.id + ' cancelled');
        await render();
      }));
    }
    if (RETRYABLE.has(job.status)) {
      actions.push(button('Retry', { data: { action: 'retry' }, title: 'Run it again, counting against its retries' }, async () => {
        const res = await call('POST', path + '/retry');
        const spent = res.status === 'failed' || res.status === 'timed_out';
        notice('Job ' + job.id + ' retried: now ' + res.status + (spent ? ' (no retry was left: Requeue runs it afresh)' : ''));
        await render();
      }));
    }
    if (REQUEUEABLE.has(job.status)) {
      actions.push(button('Requeue', { data: { action: 'requeue' }, title: 'Back to queued, its output and times cleared' }, async () => {
        await call('PATCH', path, { status: 'queued' });
        notice('Job ' + job.id + ' requeued');
        await render();
      }));
    }
    actions.push(confirmButton('Delete', 'Click again to delete job ' + job.id, { class: 'danger', data: { action: 'delete' } }, async () => {
      await call('DELETE', path);
      const to = addressable(job.queue) ? '#/queue/' + frag(job.queue) : '#/';
      notice('Job ' + job.id + ' deleted', to);
      location.hash = to;
    }));
    const scalars = Object.fromEntries(Object.entries(job).filter(([k]) => !['input', 'output', 'error', 'history'].includes(k)));
    const history = job.history || [];
    return [
      h('h2', null, 'Job ' + job.id, ' ', statusText(job.status)),
      h('div', { class: 'actions' }, actions),
      fields(scalars, 'job-fields'),
      h('h2', null, 'Input'), h('pre', { id: 'job-input' }, json(job.input)),
      h('h2', null, 'Output'), h('pre', { id: 'job-output' }, json(job.output)),
      h('h2', null, 'Error'), h('div', { id: 'job-error' }, job.error ? h('pre', null, jobError(job.error)) : none()),
      h('h2', null, 'History'),
      history.length ? table([{ label: 'Attempt', num: true }, 'Worker', 'Started', 'Ended', 'Status', 'Error'],
        history.map((a) => h('tr', { data: { attempt: String(a.attempt) } }, h('td', { class: 'num' }, String(a.attempt)),
          h('td', { class: 'mono' }, a.worker ?? none()), h('td', null, when(a.started_at)), h('td', null, when(a.ended_at)),
          h('td', null, statusText(a.status)), h('td', null, jobError(a.error)))), { id: 'history' })
        : h('p', { class: 'muted', id: 'history' }, 'No attempt has ended yet.'),
    ];
  }

  // ---- refresh ----------------------------------------------------------

  // The page refreshes itself every REFRESH_MS while auto-refresh is on
  // and the tab is visible; a hidden tab makes no request, and refreshes
  // at once when shown again. A refresh waits while an action runs or a
  // confirmation is armed, so that a second click finds its button.
  let timer = 0;
  const auto = $('auto');
  const hidden = () => document.visibilityState === 'hidden';
  function schedule() {
    clearTimeout(timer);
    timer = 0;
    const state = !auto.checked ? 'off' : hidden() ? 'paused' : 'on';
    document.body.dataset.refresh = state;
    $('refresh-state').textContent = state === 'paused' ? 'paused while the tab is hidden' : '';
    if (state === 'on') timer = setTimeout(tick, REFRESH_MS);
  }
  async function tick() {
    timer = 0;
    if (!auto.checked || hidden()) return schedule();
    if (!acting && !main.hasAttribute('aria-busy') && !main.querySelector('.armed')) {
      await render(true);
    }
    schedule();
  }
  auto.addEventListener('change', () => {
    if (auto.checked) tick(); else schedule();
  });
  document.addEventListener('visibilitychange', () => {
    if (!hidden() && auto.checked) tick(); else schedule();
  });
  $('refresh').addEventListener('click', () => { clearError(); render(); });
  $('error-close').addEventListener('click', clearError);
  window.addEventListener('hashchange', () => {
    clearError();
    if (noticeHash !== location.hash) notice('');
    render();
  });
  render().then(schedule);
})();
