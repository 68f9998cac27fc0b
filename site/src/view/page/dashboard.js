// The site's view: one screen, refreshed by polling the status every few
// seconds without reloading. Signs in with an admin token (the server sets
// an HttpOnly session cookie) and echoes the session's CSRF token on every
// POST.
//
// Element ids the tests read: #trend (data-trend), #site-depth,
// #site-latency, #alerts (.alert[data-device][data-alert]), #devices rows
// (tr[data-device][data-online]), #chart, #enroll-*, #terminals,
// #dead-letters, #counts, #grns, #corrections, #central (hidden unless this
// site forwards to a central or is one: #outbox-depth, #outbox-dead,
// #outbox-dead-letters, #central-sites rows tr[data-site]), #builds-served,
// #builds (li[data-build][data-served]), #builds-devices (the handhelds on
// an old build or not capturing: li[data-device][data-build][data-old]
// [data-problem]). body[data-state] is
// "signed-out" or "ready"; body[data-refreshes] counts renders.

const POLL_MS = 5000;
const TREND_WORDS = { draining: 'Draining normally', growing: 'Growing', escalated: 'Escalated' };
const PROFILE_FORMS = { fxr90: 'fixed gate', mc3390xr: 'handheld', rfd40: 'sled', zt411r: 'printer' };

let csrfToken = null;
let timer = null;

const $ = (id) => document.getElementById(id);

class HttpError extends Error {
  constructor(status, body) {
    super(body?.message || `HTTP ${status}`);
    this.status = status;
  }
}

async function api(path, { method = 'GET', body } = {}) {
  const headers = {};
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    if (csrfToken) headers['x-csrf-token'] = csrfToken;
  }
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  if (!response.ok) throw new HttpError(response.status, json);
  return json;
}

const clock = (rfc3339) => {
  if (!rfc3339) return 'never';
  return new Date(rfc3339).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false });
};

const age = (rfc3339, now) => {
  if (!rfc3339) return '–';
  const minutes = Math.max(0, Math.round((now - Date.parse(rfc3339)) / 60000));
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
};

// A moment that may be days ago: the time today, else the date and time.
const stamp = (rfc3339) => {
  if (!rfc3339) return 'never';
  const at = new Date(rfc3339);
  if (at.toDateString() === new Date().toDateString()) return clock(rfc3339);
  return `${at.toLocaleDateString([], { day: 'numeric', month: 'short' })} ${clock(rfc3339)}`;
};

const latency = (ms) => {
  if (ms == null) return '–';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
};

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name === 'onclick') node.addEventListener('click', value);
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

/** A list row whose text parts sit apart (each its own span). */
function row(attrs, ...parts) {
  return el('li', attrs, ...parts.map((part) => (part instanceof Node ? part : el('span', {}, part))));
}

function listOr(target, items, none) {
  target.replaceChildren(...(items.length ? items : [el('li', { class: 'none' }, none)]));
}

/** A button that asks once more before it acts (no modal dialogs). */
function confirmButton(label, confirmLabel, action) {
  const button = el('button', { type: 'button', class: 'quiet' }, label);
  button.addEventListener('click', async () => {
    if (button.dataset.armed !== 'true') {
      button.dataset.armed = 'true';
      button.textContent = confirmLabel;
      return;
    }
    button.disabled = true;
    try {
      await action();
    } catch (err) {
      button.textContent = `Failed: ${err.message}`;
      button.disabled = false;
      return;
    }
    await refresh();
  });
  return button;
}

function renderStatus(status) {
  const now = Date.parse(status.server_time);
  const trend = $('trend');
  trend.dataset.trend = status.trend;
  trend.textContent = TREND_WORDS[status.trend] ?? status.trend;
  $('site-depth').textContent = status.queue_depth;
  $('site-latency').textContent = latency(status.median_sync_latency_ms);
  $('updated').textContent = `updated ${clock(status.server_time)}`;

  const offline = status.devices.filter((d) => d.alert);
  $('alerts').replaceChildren(
    ...offline.map((d) =>
      el(
        'p',
        { class: 'alert', role: 'alert', dataset: { device: d.device_id, alert: d.alert } },
        el('span', { class: 'prio' }, d.alert),
        `${d.device_id} (${PROFILE_FORMS[d.profile] ?? d.profile}) offline since ${clock(d.offline_since)}`,
      ),
    ),
  );

  $('devices').tBodies[0].replaceChildren(
    ...status.devices.map((d) =>
      el(
        'tr',
        { dataset: { device: d.device_id, online: String(d.online) } },
        el('td', {}, d.device_id, d.commissioned ? '' : ' (sim)'),
        el('td', {}, d.profile),
        el('td', {}, el('span', { class: 'dot', 'aria-hidden': 'true' }), d.online ? 'online' : `offline (${d.alert})`),
        el('td', {}, clock(d.last_seen_at)),
        el('td', { class: 'num', 'data-field': 'depth' }, d.queue_depth ?? '–'),
        el('td', { class: 'num' }, d.queue_depth ? age(d.oldest_queued_at, now) : '–'),
        el('td', {}, confirmButton('Revoke', `Revoke ${d.device_id}?`, () =>
          api(`/v1/site/devices/${encodeURIComponent(d.device_id)}/revoke`, { method: 'POST' }))),
      ),
    ),
  );

  listOr(
    $('terminals'),
    status.terminals.map((t) => row({ dataset: { device: t.device_id } }, el('strong', {}, t.device_id), t.source, `seen ${clock(t.last_seen_at)}`)),
    'No terminal has reported.',
  );
  $('listener-depth').textContent = status.listener.queue_depth;
  $('dead-total').textContent = status.listener.dead_letters_total;
  listOr(
    $('dead-letters'),
    status.listener.dead_letters.map((d) =>
      row({}, el('strong', {}, d.device_serial), `${d.kind} ${d.subject}`, `→ ${d.status ?? '?'} ${d.body ?? ''}`),
    ),
    'No dead letters.',
  );

  const outbox = status.central_outbox;
  const forwards = outbox.site_id != null || outbox.pending > 0 || outbox.dead_letters_total > 0;
  $('outbox').hidden = !forwards;
  $('outbox-site').textContent = outbox.site_id ?? '(forwarding off)';
  $('outbox-url').textContent = outbox.central_url ?? '';
  $('outbox-depth').textContent = outbox.pending;
  $('outbox-oldest').textContent = outbox.pending ? age(outbox.oldest_pending_at, now) : '–';
  $('outbox-dead').textContent = outbox.dead_letters_total;
  $('outbox-error').hidden = outbox.last_error == null;
  $('outbox-error').textContent = outbox.last_error == null ? '' : `Last delivery failed ${age(outbox.last_error_at, now)} ago: ${outbox.last_error}`;
  listOr(
    $('outbox-dead-letters'),
    outbox.dead_letters.map((d) =>
      row({ dataset: { key: d.key } }, el('strong', {}, `#${d.seq}`), d.key, `→ ${d.status ?? '?'} ${d.reason}`),
    ),
    'No dead letters.',
  );
  $('central-sites-panel').hidden = status.central_sites.length === 0;
  $('central-sites').tBodies[0].replaceChildren(
    ...status.central_sites.map((s) =>
      el(
        'tr',
        { dataset: { site: s.site_id } },
        el('td', {}, s.site_id),
        el('td', {}, stamp(s.first_seen_at)),
        el('td', {}, stamp(s.last_seen_at)),
        el('td', { class: 'num' }, s.hops_received),
        el('td', { class: 'num' }, s.last_seq),
      ),
    ),
  );
  $('central').hidden = !forwards && status.central_sites.length === 0;

  const decisions = status.decisions;
  listOr(
    $('counts'),
    decisions.count_variances.map((c) =>
      row(
        { dataset: { count: c.count_id } },
        el('strong', {}, `${c.count_id} at ${c.location}/${c.zone}`),
        `missing ${c.missing.length ? c.missing.join(', ') : 'none'}`,
        `unexpected ${c.unexpected.length ? c.unexpected.join(', ') : 'none'}`,
        confirmButton('Approve variance', 'Confirm approve', () =>
          api(`/v1/site/counts/${encodeURIComponent(c.count_id)}/approve`, { method: 'POST' })),
      ),
    ),
    'No count variance waits.',
  );
  listOr(
    $('grns'),
    decisions.grns.map((g) =>
      row(
        { dataset: { grn: g.grn_id } },
        el('strong', {}, g.grn_id),
        `short ${g.short}, excess ${g.excess}`,
        confirmButton('Resolve', 'Confirm resolve', () =>
          api(`/v1/site/grns/${encodeURIComponent(g.grn_id)}/resolve`, { method: 'POST' })),
      ),
    ),
    'No GRN waits.',
  );
  $('corrections-total').textContent = decisions.corrections_total ? `(${decisions.corrections_total})` : '';
  listOr(
    $('corrections'),
    decisions.corrections.map((c) =>
      row(
        { dataset: { key: c.key, reason: c.reason ?? '' } },
        el('strong', {}, c.reason === 'undo_window_expired' ? 'undo past 120 s' : c.reason ?? 'rejected'),
        `${c.device_id} · ${c.command} #${c.client_seq ?? '–'}`,
        `at ${clock(c.received_at)}`,
      ),
    ),
    'Nothing to correct.',
  );
}

async function refresh() {
  try {
    const status = await api('/v1/site/status');
    renderStatus(status);
    renderBuilds(await api('/v1/site/builds'));
    $('chart').src = `/v1/site/chart.svg?hours=12&at=${Date.parse(status.server_time)}`;
    document.body.dataset.state = 'ready';
    document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes ?? 0) + 1);
  } catch (err) {
    if (err.status === 401) signedOut();
    else $('updated').textContent = `not updated: ${err.message}`;
  }
}

/** The fleet by build: the served build first; the handhelds behind it or stopped. */
function renderBuilds(fleet) {
  $('builds-served').textContent = fleet.served;
  $('builds-schema').textContent = fleet.schema;
  listOr(
    $('builds'),
    fleet.builds.map((b) => row({ dataset: { build: b.build, served: String(b.served) } },
      el('code', {}, b.build), `${b.devices} device${b.devices === 1 ? '' : 's'}`, b.served ? 'served' : 'old build')),
    'No handheld has reported a build.',
  );
  listOr(
    $('builds-devices'),
    fleet.devices.filter((d) => d.old || d.problem).map((d) =>
      row({ class: 'old-build', dataset: { device: d.device_id, build: d.build, old: String(d.old), problem: d.problem ?? '' } },
        el('strong', {}, d.device_id), d.old ? `old build ${d.build}` : `build ${d.build}`,
        d.problem ? `not capturing: ${d.problem}` : 'capturing')),
    'Every handheld runs the served build.',
  );
}

function signedOut() {
  clearInterval(timer);
  timer = null;
  csrfToken = null;
  document.body.dataset.state = 'signed-out';
  $('view').hidden = true;
  $('sign-out').hidden = true;
  $('sign-in').hidden = false;
}

function signedIn(session) {
  csrfToken = session.csrf_token;
  $('sign-in').hidden = true;
  $('view').hidden = false;
  $('sign-out').hidden = false;
  refresh();
  clearInterval(timer);
  timer = setInterval(refresh, POLL_MS);
}

$('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('sign-in-error').textContent = '';
  try {
    const session = await api('/v1/site/login', { method: 'POST', body: { token: $('admin-token').value.trim() } });
    $('admin-token').value = '';
    signedIn(session);
  } catch (err) {
    $('sign-in-error').textContent = err.status === 401 ? 'That is not an admin token.' : err.message;
  }
});

$('sign-out').addEventListener('click', async () => {
  try {
    await api('/v1/site/logout', { method: 'POST' });
  } finally {
    signedOut();
  }
});

$('enroll-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('enroll-error').textContent = '';
  try {
    const device = await api('/v1/site/devices', {
      method: 'POST',
      body: {
        device_id: $('enroll-id').value.trim(),
        profile: $('enroll-profile').value,
        commissioned: $('enroll-commissioned').checked,
      },
    });
    $('enroll-qr').src = `data:image/svg+xml;base64,${btoa(device.qr_svg)}`;
    $('enroll-link').textContent = device.setup_link;
    $('enroll-result').hidden = false;
    $('enroll-id').value = '';
    await refresh();
  } catch (err) {
    $('enroll-error').textContent = err.message;
  }
});

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && timer) refresh();
});

api('/v1/site/session').then(signedIn, signedOut);
