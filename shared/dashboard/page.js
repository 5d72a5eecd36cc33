'use strict';
// The dashboard: a client of the JSON API of its own origin. Every piece of
// data reaches the DOM as a text node or an attribute value, never as
// markup; the page's Content-Security-Policy enforces Trusted Types, so a
// string handed to an HTML sink would throw rather than render.
(() => {
  const STATUSES = ['queued', 'scheduled', 'waiting', 'running', 'completed', 'failed', 'timed_out', 'cancelled'];
  const PAGE_SIZES = [20, 50, 100];
  const LIST_FIELDS = ['id', 'status', 'tags', 'key', 'priority', 'worker', 'retries_attempted', 'created_at', 'ended_at'];
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

  // enc makes text one path segment; "." and ".." (valid queue names) are
  // escaped too, or URL resolution would take them as directory steps.
  const enc = (s) => (s === '.' || s === '..') ? s.replace(/\./g, '%2E') : encodeURIComponent(s);
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
    for (const kid of kids.flat(Infinity)) {
      if (kid !== undefined && kid !== null && kid !== false) e.append(kid instanceof Node ? kid : String(kid));
    }
    return e;
  }

  const link = (hash, ...kids) => h('a', { href: hash }, ...kids);
  const queueLink = (name) => link('#/queue/' + enc(name), name);
  const jobLink = (id) => link('#/job/' + enc(String(id)), String(id));
  const statusText = (s) => h('span', { class: 'status status-' + s, data: { status: s } }, s);
  const none = () => h('span', { class: 'muted' }, '—');
  const json = (v) => JSON.stringify(v, null, 2);
  const when = (t) => t ? h('span', { title: t }, t.replace('T', ' ').replace(/\.\d+Z$/, 'Z')) : none();
  const tags = (list) => Array.isArray(list) && list.length ? list.map((t) => h('span', { class: 'tag' }, t)) : none();
  const table = (head, rows, props) => h('table', props,
    h('thead', null, h('tr', null, head.map((c) => h('th', { class: c.num ? 'num' : null }, c.label ?? c)))),
    h('tbody', null, rows));
  const num = (n, status) => h('td', { class: 'num' + (n ? '' : ' zero'), data: status ? { status } : null }, String(n ?? 0));

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

  // button runs action once per click, disabled while it runs. A success
  // re-renders the view (or goes elsewhere); a failure is shown, and the
  // view re-rendered, since the refusal often means it was out of date.
  function button(label, attrs, action) {
    const b = h('button', Object.assign({ type: 'button' }, attrs), label);
    b.addEventListener('click', async () => {
      clearError();
      notice('');
      b.disabled = true;
      try {
        await action(b);
      } catch (e) {
        showError(e);
        await render();
      } finally {
        b.disabled = false;
      }
    });
    return b;
  }

  // confirmButton asks for a second click before a destructive action.
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

  let rendering = 0;
  async function render() {
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
      main.replaceChildren(...view);
      document.body.dataset.state = 'ready';
    } catch (e) {
      if (seq !== rendering) return;
      showError(e);
      document.body.dataset.state = 'error';
    } finally {
      if (seq === rendering) main.removeAttribute('aria-busy');
    }
  }

  function crumbs(...items) {
    $('crumbs').replaceChildren(...items.map((it) => typeof it === 'string' ? h('span', null, it) : it));
  }

  // ---- views ------------------------------------------------------------

  async function overview() {
    crumbs('Queues');
    const [info, workers, failures] = await Promise.all([call('GET', 'info'), call('GET', 'workers'), call('GET', 'failures')]);
    const names = Object.keys(info.queues).sort();
    // A name /info lists may belong to a deleted queue whose jobs remain.
    const settings = await Promise.all(names.map((n) => call('GET', 'queue/' + enc(n)).catch((e) => {
      if (e.status === 404) return null;
      throw e;
    })));
    const rows = names.map((name, i) => {
      const c = info.queues[name];
      const s = settings[i];
      return h('tr', { data: { queue: name } },
        h('td', null, queueLink(name)),
        STATUSES.map((st) => num(c[st], st)),
        h('td', { data: { field: 'state' } }, s === null ? h('span', { class: 'muted' }, 'deleted')
          : s.paused ? h('span', { class: 'paused' }, 'paused') : 'active'),
        h('td', null, s === null ? null : pauseButton(name, !!s.paused)));
    });
    const stats = info.statistics || {};
    return [
      h('h2', null, 'Queues'),
      names.length ? table(['Queue', ...STATUSES.map((s) => ({ label: s, num: true })), 'State', ''], rows, { id: 'queues' })
        : h('p', { class: 'muted' }, 'No queues.'),
      h('div', { class: 'stats', id: 'statistics' }, Object.entries(stats).map(([k, v]) =>
        h('div', { data: { stat: k } }, h('span', null, k.replace(/^total_jobs_/, '').replace(/_/g, ' ')), String(v)))),
      h('h2', null, 'Workers'),
      workers.length ? table(['Worker', 'Last seen', { label: 'Running', num: true }, { label: 'Timed out', num: true }],
        workers.map((w) => h('tr', { data: { worker: w.name } },
          h('td', { class: 'mono' }, w.name), h('td', null, when(w.last_seen)), num(w.running), num(w.timed_out))), { id: 'workers' })
        : h('p', { class: 'muted' }, 'No worker took a job recently.'),
      h('h2', null, 'Failed for good, by group'),
      Object.keys(failures).length ? table(['Group', { label: 'Jobs', num: true }],
        Object.entries(failures).map(([g, n]) => h('tr', { data: { group: g } }, h('td', { class: 'mono' }, g), num(n))), { id: 'failures' })
        : h('p', { class: 'muted' }, 'None.'),
    ];
  }

  function pauseButton(name, paused) {
    return button(paused ? 'Resume' : 'Pause', { data: { action: paused ? 'resume' : 'pause' } }, async () => {
      await call('PATCH', 'queue/' + enc(name), { paused: !paused });
      notice('Queue ' + name + (paused ? ' resumed' : ' paused'));
      await render();
    });
  }

  async function queueView(name, params) {
    crumbs(link('#/', 'Queues'), '›', h('span', { class: 'mono' }, name));
    const status = STATUSES.includes(params.get('status')) ? params.get('status') : '';
    const asked = parseInt(params.get('limit'), 10);
    const limit = asked >= 1 && asked <= 1000 ? asked : PAGE_SIZES[0];
    const key = [name, status, limit].join('\u0000');
    if (pages.key !== key) pages = { key, cursors: [null], index: 0 };
    const cursor = pages.cursors[pages.index];
    const [settings, page] = await Promise.all([
      call('GET', 'queue/' + enc(name)),
      call('GET', 'queue/' + enc(name) + '/jobs' + qs({ status, limit, cursor, fields: LIST_FIELDS.join(',') })),
    ]);
    const go = (s, l) => { location.hash = '#/queue/' + enc(name) + qs({ status: s, limit: l === PAGE_SIZES[0] ? '' : l }); };
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
      h('td', null, when(j.created_at)), h('td', null, when(j.ended_at))));
    return [
      h('h2', null, 'Queue ', h('span', { class: 'mono' }, name), settings.paused ? h('span', { class: 'paused' }, ' (paused)') : null),
      h('div', { class: 'actions' }, pauseButton(name, !!settings.paused)),
      fields(settings, 'settings'),
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
        { label: 'Retries', num: true }, 'Created', 'Ended'], rows, { id: 'jobs' })
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
    const job = await call('GET', 'job/' + enc(id) + qs({ fields: JOB_FIELDS.join(',') }));
    crumbs(link('#/', 'Queues'), '›', queueLink(job.queue), '›', h('span', null, 'job ' + job.id));
    const path = 'job/' + enc(String(job.id));
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
      const to = '#/queue/' + enc(job.queue);
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

  // ---- start ------------------------------------------------------------

  let timer = 0;
  $('auto').addEventListener('change', (e) => {
    clearInterval(timer);
    timer = e.target.checked ? setInterval(() => { if (!main.hasAttribute('aria-busy')) render(); }, REFRESH_MS) : 0;
  });
  $('refresh').addEventListener('click', () => { clearError(); render(); });
  $('error-close').addEventListener('click', clearError);
  window.addEventListener('hashchange', () => {
    clearError();
    if (noticeHash !== location.hash) notice('');
    render();
  });
  render();
})();
