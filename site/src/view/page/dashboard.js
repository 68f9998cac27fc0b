// The site's view: one screen, refreshed by polling the status every few
// seconds without reloading. Signs in with an admin token (the server sets
// an HttpOnly session cookie) and echoes the session's CSRF token on every
// POST.
//
// Element ids the tests read: #trend (data-trend), #site-depth,
// #site-latency, #alerts (.alert[data-device][data-alert]), #devices rows
// (tr[data-device][data-online], button[data-action=revoke|commission],
// td[data-session] with button[data-action=close-session]), #chart, #enroll-*, #terminals,
// #dead-letters, #counts, #grns, #corrections, #printers rows
// (tr[data-printer][data-faults]), printer faults in #alerts
// (.alert[data-printer][data-fault]), #printer-*, #print-jobs
// (li[data-job][data-reason]), #central (hidden unless this
// site forwards to a central or is one: #outbox-depth, #outbox-dead,
// #outbox-dead-letters, #central-sites rows tr[data-site]), #builds-served,
// #builds (li[data-build][data-served]), #builds-devices (the handhelds on
// an old build or not capturing: li[data-device][data-build][data-old]
// [data-problem]), #stranded and #rescues rows (tr[data-device]), a
// device rejecting now in #alerts (.alert[data-device][data-rejecting],
// its count in the window) and its #devices row (tr[data-rejecting]).
// body[data-state] is "signed-out" or "ready"; body[data-refreshes] counts
// renders.
//
// Every word comes from the view's catalogue (l10n.js); #language picks the
// language, remembered in this browser.

import { LOCALES, attr, dayAndMonth, has, locale, msg, number, setLocale, start, t, timeOfDay } from './l10n.js';

const POLL_MS = 5000;
const TREND_WORDS = { draining: msg('trend-draining'), growing: msg('trend-growing'), escalated: msg('trend-escalated') };
const FAULT_WORDS = { paper_out: msg('fault-paper-out'), head_open: msg('fault-head-open'), ribbon_out: msg('fault-ribbon-out'), paused: msg('fault-paused') };
const PRINT_REASONS = {
  read_back_mismatch: msg('print-read-back-mismatch'),
  void_tag: msg('print-void-tag'),
  no_answer: msg('print-no-answer'),
  interrupted: msg('print-interrupted'),
};
const PROFILE_FORMS = { fxr90: msg('form-fxr90'), mc3390xr: msg('form-mc3390xr'), rfd40: msg('form-rfd40'), zt411r: msg('form-zt411r') };

/** The words of a table's entry, or the raw value when the table has none. */
const word = (table, key) => (table[key] ? t(table[key]) : key);

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

// Every time on the page is on the site's clock (status.time_zone), not
// the browser's.
let siteZone;

const clock = (rfc3339) => {
  if (!rfc3339) return t('never');
  return timeOfDay(new Date(rfc3339), siteZone);
};

const day = (date) => date.toLocaleDateString('en-CA', { timeZone: siteZone });

const age = (rfc3339, now) => {
  if (!rfc3339) return '–';
  const minutes = Math.max(0, Math.round((now - Date.parse(rfc3339)) / 60000));
  return minutes < 60
    ? t('age-minutes', { minutes })
    : t('age-hours', { hours: Math.floor(minutes / 60), minutes: minutes % 60 });
};

// A moment that may be days ago: the time today, else the date and time.
const stamp = (rfc3339) => {
  if (!rfc3339) return t('never');
  const at = new Date(rfc3339);
  if (day(at) === day(new Date())) return clock(rfc3339);
  return t('stamp-day-time', { day: dayAndMonth(at, siteZone), time: clock(rfc3339) });
};

const latency = (ms) => {
  if (ms == null) return '–';
  if (ms < 1000) return t('latency-ms', { ms });
  if (ms < 60_000) return t('latency-seconds', { seconds: number(ms / 1000, { minimumFractionDigits: 1, maximumFractionDigits: 1 }) });
  const seconds = Math.round(ms / 1000);
  return t('latency-minutes', { minutes: Math.floor(seconds / 60), seconds: seconds % 60 });
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

/** How long a button asked once stays asking: across the refreshes that redraw it. */
const ARMED_MS = 15_000;
/** Buttons asked once, by what they act on, until when they stay asking. */
const armed = new Map();

/**
 * A button that asks once more before it acts (no modal dialogs). `key`
 * names what it acts on: a refresh redraws the button, and one asked
 * within {@link ARMED_MS} is drawn asking still, so the second tap acts.
 */
function confirmButton(label, confirmLabel, action, key) {
  const button = el('button', { type: 'button', class: 'quiet' }, label);
  const arm = () => {
    button.dataset.armed = 'true';
    button.textContent = confirmLabel;
  };
  if ((armed.get(key) ?? 0) > Date.now()) arm();
  else armed.delete(key);
  button.addEventListener('click', async () => {
    if (button.dataset.armed !== 'true') {
      armed.set(key, Date.now() + ARMED_MS);
      arm();
      return;
    }
    armed.delete(key);
    button.disabled = true;
    try {
      await action();
    } catch (err) {
      button.textContent = t('action-failed', { error: err.message });
      button.disabled = false;
      return;
    }
    await refresh();
  });
  return button;
}

/** Commission: a device in training (its items land as simulation) posts for real from now on. */
function commissionButton(deviceId) {
  const button = confirmButton(t('commission'), t('commission-confirm', { device: deviceId }), () =>
    api(`/v1/site/devices/${encodeURIComponent(deviceId)}/commission`, { method: 'POST' }), `commission ${deviceId}`);
  button.dataset.action = 'commission';
  return button;
}

/** Revoke: the device's token stops working at once. */
function revokeButton(deviceId) {
  const button = confirmButton(t('revoke'), t('revoke-confirm', { device: deviceId }), () =>
    api(`/v1/site/devices/${encodeURIComponent(deviceId)}/revoke`, { method: 'POST' }), `revoke ${deviceId}`);
  button.dataset.action = 'revoke';
  return button;
}

/**
 * A device's open session, with Close session: for a handheld that lost its
 * storage or broke mid-shift, whose operator (or itself, set up again) is
 * refused a new session until this one is closed.
 */
function sessionCell(d) {
  const s = d.open_session;
  if (!s) return el('td', { class: 'muted' }, '–');
  const what = s.opened_at
    ? t('session-since', { operator: s.operator_id ?? '?', mode: modeWords(s.mode), time: clock(s.opened_at) })
    : t('session-open', { operator: s.operator_id ?? '?', mode: modeWords(s.mode) });
  const button = confirmButton(t('close-session'), t('close-session-confirm', { device: d.device_id }), () =>
    api(`/v1/site/devices/${encodeURIComponent(d.device_id)}/close-session`, { method: 'POST' }), `close-session ${s.session_id}`);
  button.dataset.action = 'close-session';
  return el('td', { dataset: { session: s.session_id } }, what, ' ', button);
}

/**
 * Names each cell after its column (data-label), so a narrow screen can
 * show a table.cards row as a card of labelled lines (dashboard.css).
 */
function labelCells(table) {
  const names = [...table.tHead.rows[0].cells].map((th) => th.textContent.trim());
  for (const tr of table.tBodies[0].rows) {
    [...tr.cells].forEach((td, i) => { td.dataset.label = names[i] ?? ''; });
  }
}

function renderStatus(status) {
  const now = Date.parse(status.server_time);
  siteZone = status.time_zone;
  const trend = $('trend');
  trend.dataset.trend = status.trend;
  trend.textContent = word(TREND_WORDS, status.trend);
  $('site-depth').textContent = number(status.queue_depth);
  $('site-latency').textContent = latency(status.median_sync_latency_ms);
  $('updated').textContent = t('updated', { time: clock(status.server_time), zone: status.time_zone });

  const offline = status.devices.filter((d) => d.alert);
  const rejecting = status.rejections?.rejecting ?? [];
  const rejectingIds = new Set(rejecting.map((r) => r.device_id));
  const storage = status.storage === 'full'
    ? [el(
        'p',
        { class: 'alert', role: 'alert', dataset: { alert: 'P1', storage: 'full' } },
        el('span', { class: 'prio' }, 'P1'),
        t('storage-full'),
      )]
    : [];
  $('alerts').replaceChildren(
    ...storage,
    ...offline.map((d) =>
      el(
        'p',
        { class: 'alert', role: 'alert', dataset: { device: d.device_id, alert: d.alert } },
        el('span', { class: 'prio' }, d.alert),
        t('device-offline-since', { device: d.device_id, form: word(PROFILE_FORMS, d.profile), time: clock(d.offline_since) }),
      ),
    ),
    ...rejecting.map((r) => rejectingAlert(r, status.rejections.window_minutes)),
    ...status.printers.flatMap((p) =>
      p.faults.map((fault) =>
        el(
          'p',
          { class: 'alert', role: 'alert', dataset: { printer: p.printer_id, fault, alert: p.alert } },
          el('span', { class: 'prio' }, p.alert),
          t('printer-fault', { printer: p.printer_id, fault: word(FAULT_WORDS, fault) }),
        ),
      ),
    ),
  );

  $('printers').tBodies[0].replaceChildren(
    ...status.printers.map((p) =>
      el(
        'tr',
        { dataset: { printer: p.printer_id, faults: p.faults.join(' ') } },
        el('td', {}, el('bdi', {}, p.printer_id)),
        el('td', {}, el('bdi', {}, p.address)),
        el('td', {}, p.faults.length
          ? new Intl.ListFormat(locale(), { type: 'unit' }).format(p.faults.map((f) => word(FAULT_WORDS, f)))
          : p.last_error ? t('printer-not-answering', { error: p.last_error }) : t('printer-ready')),
        el('td', {}, stamp(p.status_at)),
        el('td', { class: 'num' }, number(p.jobs_pending)),
      ),
    ),
  );
  labelCells($('printers'));

  $('devices').tBodies[0].replaceChildren(
    ...status.devices.map((d) =>
      el(
        'tr',
        { dataset: { device: d.device_id, online: String(d.online), rejecting: String(rejectingIds.has(d.device_id)) } },
        el(
          'td',
          {},
          el('bdi', {}, d.device_id),
          ...(rejectingIds.has(d.device_id) ? [' ', el('span', { class: 'rejecting-mark' }, t('device-rejecting'))] : []),
          ...(d.commissioned ? [] : [' ', t('device-simulation'), ' ', commissionButton(d.device_id)]),
        ),
        el('td', {}, el('bdi', {}, d.profile)),
        el('td', { class: 'words' }, el('span', { class: 'dot', 'aria-hidden': 'true' }), d.online ? t('device-online') : d.alert ? t('device-offline', { alert: d.alert }) : t('device-not-heard')),
        el('td', {}, clock(d.last_seen_at)),
        el('td', { class: 'num', 'data-field': 'depth' }, d.queue_depth == null ? '–' : number(d.queue_depth)),
        el('td', { class: 'num' }, d.queue_depth ? age(d.oldest_queued_at, now) : '–'),
        sessionCell(d),
        el('td', {}, revokeButton(d.device_id)),
      ),
    ),
  );
  labelCells($('devices'));
  renderRescues(status.rescues ?? [], status.stranded ?? []);

  listOr(
    $('terminals'),
    status.terminals.map((terminal) => row({ dataset: { device: terminal.device_id } },
      el('strong', {}, el('bdi', {}, terminal.device_id)), word(SOURCE_WORDS, terminal.source), t('terminal-seen', { time: clock(terminal.last_seen_at) }))),
    t('terminals-none'),
  );
  $('listener-depth').textContent = number(status.listener.queue_depth);
  $('dead-total').textContent = number(status.listener.dead_letters_total);
  $('set-aside-total').textContent = number(status.listener.set_aside_total);
  listOr(
    $('set-aside'),
    status.listener.set_aside.map((s) =>
      row(
        { dataset: { seq: s.seq } },
        el('strong', {}, el('bdi', {}, s.device_serial)),
        word(RECORD_WORDS, s.kind), ' ', el('bdi', {}, s.subject),
        t('set-aside-attempts', { attempts: s.attempts, time: stamp(s.last_attempt_at), error: s.last_error ?? '?' }),
        t('set-aside-next', { time: clock(s.next_attempt_at) }),
      ),
    ),
    t('set-aside-none'),
  );
  listOr(
    $('dead-letters'),
    status.listener.dead_letters.map((d) =>
      row({}, el('strong', {}, el('bdi', {}, d.device_serial)), el('span', {}, word(RECORD_WORDS, d.kind), ' ', el('bdi', {}, d.subject)), el('bdi', {}, `→ ${d.status ?? '?'} ${d.body ?? ''}`)),
    ),
    t('dead-letters-none'),
  );

  const outbox = status.central_outbox;
  const forwards = outbox.site_id != null || outbox.pending > 0 || outbox.dead_letters_total > 0;
  $('outbox').hidden = !forwards;
  $('outbox-site').textContent = outbox.site_id ?? t('outbox-off');
  $('outbox-url').textContent = outbox.central_url ?? '';
  $('outbox-depth').textContent = number(outbox.pending);
  $('outbox-oldest').textContent = outbox.pending ? age(outbox.oldest_pending_at, now) : '–';
  $('outbox-dead').textContent = number(outbox.dead_letters_total);
  $('outbox-error').hidden = outbox.last_error == null;
  $('outbox-error').textContent = outbox.last_error == null ? '' : t('outbox-failed', { age: age(outbox.last_error_at, now), error: outbox.last_error });
  listOr(
    $('outbox-dead-letters'),
    outbox.dead_letters.map((d) =>
      row({ dataset: { key: d.key } }, el('strong', {}, `#${d.seq}`), el('bdi', {}, d.key), el('bdi', {}, `→ ${d.status ?? '?'} ${d.reason}`)),
    ),
    t('dead-letters-none'),
  );
  $('central-sites-panel').hidden = status.central_sites.length === 0;
  $('central-sites').tBodies[0].replaceChildren(
    ...status.central_sites.map((s) =>
      el(
        'tr',
        { dataset: { site: s.site_id } },
        el('td', {}, el('bdi', {}, s.site_id)),
        el('td', {}, stamp(s.first_seen_at)),
        el('td', {}, stamp(s.last_seen_at)),
        el('td', { class: 'num' }, number(s.hops_received)),
        el('td', { class: 'num' }, s.last_seq),
      ),
    ),
  );
  $('central').hidden = !forwards && status.central_sites.length === 0;
  renderSites(status.central_sites, now);
}

// ---- the company's view (on a central) -------------------------------------
// #sites lists every site as a card (a[data-site][data-trend][data-contact]
// inside #site-cards, linking to #site=ID); #site-detail shows one site's
// summary (#site-detail-facts, dt/dd pairs; #site-detail-view links to the
// site's own view when it sent its address). A site's times are shown on
// its own clock (summary.time_zone).

// A site sends its summary every 10 s; past a minute without contact its
// card says how long it has been silent.
const SITE_LATE_MS = 60_000;
let lastSites = [];
let lastSitesNow = 0;

const clockIn = (rfc3339, zone) => {
  if (!rfc3339) return t('never');
  return timeOfDay(new Date(rfc3339), zone);
};

const selectedSite = () => {
  const match = /^#site=(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
};

/** The facts of one site's summary, as label and value pairs. */
function siteFacts(site, now) {
  const s = site.summary;
  const late = now - Date.parse(site.last_seen_at) > SITE_LATE_MS;
  const since = { age: age(site.last_seen_at, now), time: clockIn(site.last_seen_at, s?.time_zone ?? siteZone) };
  const contact = late ? t('contact-silent', since) : t('contact-ago', since);
  if (!s) return [[t('fact-last-contact'), contact, 'contact'], [t('fact-status'), t('fact-status-not-sent')]];
  const offline = s.devices_offline === 0
    ? t('fact-none')
    : el('span', {}, `${number(s.devices_offline)} `, el('span', { class: 'prio', dataset: { alert: s.alert ?? '' } }, s.alert ?? ''));
  return [
    [t('fact-queue-depth'), number(s.queue_depth)],
    [t('fact-oldest-item'), s.oldest_queued_at ? t('fact-oldest-since', { age: age(s.oldest_queued_at, now), time: clockIn(s.oldest_queued_at, s.time_zone) }) : t('fact-none-waiting')],
    [t('fact-devices-offline'), offline],
    [t('fact-outbox'), s.outbox_pending === 0 ? t('fact-outbox-sent') : t('fact-outbox-waiting', { count: s.outbox_pending, lag: latency(s.outbox_lag_ms) })],
    [t('fact-last-contact'), contact, 'contact'],
  ];
}

function factList(target, pairs) {
  target.replaceChildren(...pairs.flatMap(([label, value]) => [el('dt', {}, label), el('dd', {}, value)]));
}

/**
 * The priority the site raises a rejecting device's alert at (the server's
 * `REJECTING_PRIORITY`, alert `DeviceRejecting`): nothing is lost, but the
 * operator's work is refused, so someone should walk over soon.
 */
const REJECTING_ALERT = 'P2';

/**
 * A device that keeps producing rejections (`status.rejections.rejecting`:
 * at least `rejecting_at_least` within `window_minutes`), as a banner: its
 * id, the rejections in the window and their rate, the reason most carry
 * and when the latest came. Only devices rejecting now are drawn; with
 * none, the banner row is not there at all.
 */
function rejectingAlert(r, minutes) {
  const reason = r.top_reason
    ? has(`reason-${r.top_reason}`) ? t(`reason-${r.top_reason}`) : r.top_reason
    : t('rejecting-no-reason');
  return el(
    'p',
    { class: 'alert rejecting', role: 'alert', dataset: { device: r.device_id, alert: REJECTING_ALERT, rejecting: String(r.recent) } },
    el('span', { class: 'prio' }, REJECTING_ALERT),
    el('span', {}, t('rejecting-label')),
    el('strong', {}, el('bdi', {}, r.device_id)),
    el('span', { 'data-field': 'recent' }, t('rejecting-count', { count: r.recent, minutes, rate: r.per_minute })),
    el('span', { class: 'reason', dataset: { reason: r.top_reason } }, t('rejecting-reason', { reason })),
    el('span', {}, t('rejecting-latest', { time: stamp(r.last_rejected_at) })),
  );
}

// Rescued queues: the revoked handhelds that still held scans at their
// last heartbeat (#stranded rows tr[data-device][data-rescued]) and the
// rescue files imported (#rescues rows tr[data-device]), in a panel of its
// own after the devices, made here on first use.
function renderRescues(rescues, stranded) {
  let panel = $('rescues-panel');
  if (!panel) {
    // heads: [message id, numeric?] per column; a numeric column's header
    // lines up with its figures (th.num, td.num: both at the inline end).
    const table = (id, heads) => el(
      'table',
      { id, class: 'cards' },
      el('thead', {}, el('tr', {}, ...heads.map(([h, numeric]) => el('th', { ...(numeric ? { class: 'num' } : {}), dataset: { l10nId: h } }, t(h))))),
      el('tbody'),
    );
    panel = el(
      'section',
      { id: 'rescues-panel', class: 'panel' },
      el('h2', { dataset: { l10nId: 'rescues-heading' } }, t('rescues-heading')),
      el('p', { id: 'stranded-none', class: 'muted', dataset: { l10nId: 'stranded-none' } }, t('stranded-none')),
      el('div', { class: 'scroll' }, table('stranded', [[msg('stranded-device')], [msg('stranded-revoked')], [msg('stranded-queued'), true], [msg('stranded-file')]])),
      el('div', { class: 'scroll' }, table('rescues', [[msg('rescues-device')], [msg('rescues-imported')], [msg('rescues-applied'), true], [msg('rescues-replayed'), true], [msg('rescues-refused'), true]])),
    );
    $('devices').closest('section').after(panel);
  }
  $('stranded-none').hidden = stranded.length > 0;
  $('stranded').hidden = stranded.length === 0;
  $('stranded').tBodies[0].replaceChildren(
    ...stranded.map((d) =>
      el(
        'tr',
        { dataset: { device: d.device_id, rescued: String(d.rescued_at != null) } },
        el('td', {}, el('bdi', {}, d.device_id)),
        el('td', {}, stamp(d.revoked_at)),
        el('td', { class: 'num' }, number(d.queued)),
        el('td', {}, d.rescued_at ? t('stranded-imported', { time: stamp(d.rescued_at) }) : t('stranded-not-imported', { command: 'stockhop-site rescue import' })),
      ),
    ),
  );
  labelCells($('stranded'));
  $('rescues').hidden = rescues.length === 0;
  $('rescues').tBodies[0].replaceChildren(
    ...rescues.map((r) =>
      el(
        'tr',
        { dataset: { device: r.device_id } },
        el('td', {}, el('bdi', {}, r.device_id)),
        el('td', {}, stamp(r.imported_at)),
        el('td', { class: 'num' }, number(r.applied)),
        el('td', { class: 'num' }, number(r.replayed)),
        el('td', { class: 'num' }, number(r.rejected)),
      ),
    ),
  );
  labelCells($('rescues'));
}

function renderSites(sites, now) {
  lastSites = sites;
  lastSitesNow = now;
  const selected = selectedSite();
  const site = sites.find((s) => s.site_id === selected);
  $('sites').hidden = sites.length === 0 || site !== undefined;
  $('sites-count').textContent = sites.length ? `· ${number(sites.length)}` : '';
  $('site-cards').replaceChildren(
    ...sites.map((s) => {
      const trend = s.summary?.trend ?? 'unknown';
      const late = now - Date.parse(s.last_seen_at) > SITE_LATE_MS;
      const facts = el('dl', { class: 'facts' });
      factList(facts, siteFacts(s, now).filter(([, , key]) => key !== 'contact' || late));
      return el(
        'li',
        {},
        el(
          'a',
          { class: 'site-card', href: `#site=${encodeURIComponent(s.site_id)}`, dataset: { site: s.site_id, trend, contact: late ? 'late' : 'ok' } },
          el('span', { class: 'name' }, el('bdi', {}, s.site_id), el('span', { class: 'state' }, TREND_WORDS[trend] ? t(TREND_WORDS[trend]) : t('trend-none'))),
          facts,
        ),
      );
    }),
  );
  $('site-detail').hidden = site === undefined;
  if (!site) return;
  const trend = site.summary?.trend ?? 'unknown';
  $('site-detail-name').textContent = site.summary ? `${site.site_id} · ${site.summary.time_zone}` : site.site_id;
  $('site-detail-trend').dataset.trend = trend;
  $('site-detail-trend').textContent = TREND_WORDS[trend] ? t(TREND_WORDS[trend]) : t('trend-none');
  factList($('site-detail-facts'), [
    ...siteFacts(site, now),
    [t('fact-status-taken'), site.summary ? clockIn(site.summary.taken_at, site.summary.time_zone) : '–'],
    [t('fact-hops-received'), number(site.hops_received)],
    [t('fact-restored'), site.epoch_started_at == null ? t('never') : t('fact-restored-at', { time: stamp(site.epoch_started_at), epoch: site.epoch, after: site.epoch_after_seq })],
    // An ISO date (2026-12-06): the same in every language.
    [t('fact-first-contact'), `${new Date(site.first_seen_at).toLocaleDateString('en-CA', { timeZone: site.summary?.time_zone ?? siteZone })} ${clockIn(site.first_seen_at, site.summary?.time_zone ?? siteZone)}`],
  ]);
  const view = $('site-detail-view');
  view.hidden = !site.summary?.view_url;
  if (site.summary?.view_url) view.href = site.summary.view_url;
}

window.addEventListener('hashchange', () => {
  renderSites(lastSites, lastSitesNow);
  window.scrollTo(0, 0);
});

// ---- the decision workbench ------------------------------------------------
// #counts, #grns and #corrections list the open decisions of
// /v1/site/decisions (li[data-decision][data-kind], counts also
// [data-count], GRNs [data-grn]); each row has its context, a note
// (input[data-note]) and its actions: button[data-action="correct"] first
// where there is one, then button[data-action="dismiss"], each asking once
// more before it acts. #decision-log lists the settlements
// (li[data-decision][data-action]).

const KIND_WORDS = {
  count_variance: msg('kind-count-variance'),
  grn_resolution: msg('kind-grn-resolution'),
  rejected_item: msg('kind-rejected-item'),
  late_undo: msg('kind-late-undo'),
  terminal_failed: msg('kind-terminal-failed'),
};
const ACTION_WORDS = { dismiss: msg('settled-dismiss'), correct: msg('settled-correct'), acknowledge: msg('settled-acknowledge'), rescan: msg('settled-rescan') };
const CORRECT_LABELS = { count_variance: msg('correct-count-variance'), grn_resolution: msg('correct-grn-resolution'), late_undo: msg('correct-late-undo'), rejected_item: msg('correct-rejected-item'), terminal_failed: msg('correct-terminal-failed') };
const DISMISS_LABELS = { grn_resolution: msg('dismiss-grn-resolution') };
/** A terminal's record kinds and sources (the listener's codes), in words; the code where the catalogue has none. */
const RECORD_WORDS = { attendance: msg('record-kind-attendance'), tag_read: msg('record-kind-tag-read'), code_read: msg('record-kind-code-read') };
const SOURCE_WORDS = { iclock: msg('terminal-source-iclock'), zebra: msg('terminal-source-zebra'), framed: msg('terminal-source-framed') };
const MODE_WORDS = { receive: msg('mode-receive'), put_away: msg('mode-put-away'), cycle_count: msg('mode-cycle-count'), dispatch_verify: msg('mode-dispatch-verify'), find_unit: msg('mode-find-unit') };

/** A mode's name in the view's language (its wire name when the catalogue has none). */
function modeWords(mode) {
  if (!mode) return '';
  return MODE_WORDS[mode] ? t(MODE_WORDS[mode]) : mode.replace('_', ' ');
}

/**
 * Why the ledger refused an item: in English the ledger's own words (they
 * may name the item's particulars), in another language its
 * `reason-<code>` message, else the ledger's words. A decision the
 * ledger gave no reason code (a count, a GRN, a terminal record) names
 * its why's message itself (`reason_words_id`).
 */
function reasonWords(d) {
  const id = `reason-${d.reason}`;
  if (!d.reason) return decisionWords(d, d.reason_words_id, d.reason_words);
  return locale() !== 'en' && has(id) ? t(id) : d.reason_words;
}

/**
 * One of a decision's sentences (its summary, why, or what an action
 * does): in English the server's own words, in another language the
 * message the server names (`summary_id`, …) formatted with the
 * decision's `args`, its codes (a mode, a record kind) put in words
 * first; the server's words when the catalogues have no such message.
 */
function decisionWords(d, id, english) {
  if (locale() === 'en' || !id || !has(id)) return english;
  const args = { ...d.args };
  if (args.mode) args.mode = modeWords(args.mode);
  if (args.kind) args.kind = word(RECORD_WORDS, args.kind);
  return t(id, args);
}

/** Notes typed into rows, kept across the re-renders of polling. */
const notes = new Map();

function kindLabel(d) {
  if (d.kind === 'late_undo') return d.reason === 'undo_window_expired' ? t('kind-late-undo-expired', { seconds: 120 }) : t('kind-late-undo-refused');
  return word(KIND_WORDS, d.kind);
}

function context(d) {
  const parts = [];
  if (d.device_id) parts.push(t('context-device', { device: d.device_id }));
  if (d.operator_id) parts.push(t('context-operator', { operator: d.operator_id }));
  if (d.mode) parts.push(modeWords(d.mode));
  if (d.epc) parts.push(t('context-epc', { epc: d.epc }));
  if (d.bin) parts.push(t('context-bin', { bin: d.bin }));
  if (d.grn) parts.push(t('context-grn', { grn: d.grn }));
  if (d.manifest) parts.push(t('context-manifest', { manifest: d.manifest }));
  if (d.count_id && d.kind !== 'count_variance') parts.push(t('context-count', { count: d.count_id }));
  if (d.captured_at) parts.push(t('context-captured', { time: stamp(d.captured_at) }));
  if (d.recorded_at) parts.push(t('context-recorded', { time: stamp(d.recorded_at) }));
  return parts.join(' · ');
}

function decisionRow(d) {
  const attrs = { dataset: { decision: d.id, kind: d.kind } };
  if (d.kind === 'count_variance') attrs.dataset.count = d.count_id;
  if (d.kind === 'grn_resolution') attrs.dataset.grn = d.grn;
  const details = [];
  if (d.kind === 'count_variance') {
    // One line each, so the two lists never run together.
    const tags = (list) => el('bdi', {}, list.join(', '));
    details.push(el('p', { class: 'variance' }, t('variance-missing'), ' ', d.missing.length ? tags(d.missing) : t('fact-none')));
    details.push(el('p', { class: 'variance' }, t('variance-unexpected'), ' ', d.unexpected.length ? tags(d.unexpected) : t('fact-none')));
  }
  if (d.lines.length) {
    details.push(el('ul', { class: 'lines' }, ...d.lines.map((l) =>
      el('li', { dataset: { sku: l.sku } },
        t('grn-line', { sku: l.sku, received: l.received, expected: l.expected }),
        l.short ? t('grn-line-short', { units: l.short }) : t('grn-line-over', { units: l.excess }),
        l.tags.length ? t('grn-line-tags', { tags: l.tags.join(', ') }) : t('grn-line-no-tags')))));
  }
  const note = el('input', { type: 'text', maxlength: '500', placeholder: attr('decision-note', 'placeholder'), 'aria-label': t('decision-note', { decision: d.id }), dataset: { note: d.id } });
  note.value = notes.get(d.id) ?? '';
  note.addEventListener('input', () => notes.set(d.id, note.value));
  const settle = (action) => async () => {
    await api(`/v1/site/decisions/${encodeURIComponent(d.id)}`, { method: 'POST', body: { action, note: note.value.trim() } });
    notes.delete(d.id);
  };
  // The server's words say only what an action does; each is shown once,
  // after its button's label.
  const correctLabel = t(CORRECT_LABELS[d.kind] ?? msg('correct'));
  const dismissLabel = t(DISMISS_LABELS[d.kind] ?? msg('dismiss'));
  const correctChoice = d.correct_words ? t('choice', { action: correctLabel, words: decisionWords(d, d.correct_id, d.correct_words) }) : '';
  const dismissChoice = t('choice', { action: dismissLabel, words: decisionWords(d, d.dismiss_id, d.dismiss_words) });
  const buttons = [];
  if (d.actions.includes('correct')) {
    const button = confirmButton(correctLabel, t('confirm-action', { action: correctLabel }), settle('correct'), `correct ${d.id}`);
    button.dataset.action = 'correct';
    button.title = correctChoice;
    buttons.push(button);
  }
  const dismiss = confirmButton(dismissLabel, t('confirm-action', { action: dismissLabel }), settle('dismiss'), `dismiss ${d.id}`);
  dismiss.dataset.action = 'dismiss';
  dismiss.title = dismissChoice;
  buttons.push(dismiss);
  return el('li', { ...attrs, class: 'decision' },
    el('p', { class: 'what' }, el('strong', {}, kindLabel(d)), ' ', el('span', { class: 'summary' }, decisionWords(d, d.summary_id, d.summary))),
    el('p', { class: 'muted' }, context(d)),
    d.reason_words ? el('p', { class: 'why', dataset: { reason: d.reason ?? '' } }, t('why', { words: reasonWords(d) })) : '',
    ...details,
    el('p', { class: 'muted choices' }, correctChoice ? `${correctChoice} ` : '', dismissChoice),
    el('div', { class: 'act' }, note, ...buttons));
}

function renderDecisions(decisions, log, pending) {
  // Typing a note or arming a button is not interrupted by the poll.
  const panel = document.querySelector('.decisions');
  if (panel.contains(document.activeElement) && document.activeElement.tagName === 'INPUT') return;
  const of = (...kinds) => decisions.filter((d) => kinds.includes(d.kind)).map(decisionRow);
  listOr($('counts'), of('count_variance'), t('counts-none'));
  listOr($('grns'), of('grn_resolution'), t('grns-none'));
  const corrections = of('rejected_item', 'late_undo', 'terminal_failed');
  // The workbench lists the newest refused items only; the status counts
  // them all, so a longer backlog says how much more waits.
  const items = decisions.filter((d) => d.kind === 'rejected_item' || d.kind === 'late_undo').length;
  const more = Math.max(0, (pending?.corrections_total ?? 0) - items);
  $('corrections-total').textContent = more
    ? t('corrections-more', { shown: corrections.length, more })
    : corrections.length ? t('corrections-count', { count: corrections.length }) : '';
  listOr($('corrections'), corrections, t('corrections-none'));
  listOr(
    $('decision-log'),
    log.slice(0, 50).map((e) =>
      row({ dataset: { decision: e.decision_id, action: e.action } },
        el('strong', {}, word(ACTION_WORDS, e.action)),
        e.summary,
        t('settled-by', { admin: e.settled_by, time: stamp(e.settled_at) }),
        e.note ? t('settled-note', { note: e.note }) : t('settled-no-note'),
        e.hop_ids.length ? t('settled-hops', { hops: e.hop_ids.join(', ') }) : t('settled-no-hops'))),
    t('settled-none'),
  );
}

function renderPrintJobs(jobs) {
  listOr(
    $('print-jobs'),
    jobs.map((j) =>
      row(
        { dataset: { job: j.job_id, reason: j.reason ?? '' } },
        el('strong', {}, PRINT_REASONS[j.reason] ? t(PRINT_REASONS[j.reason]) : j.reason ?? j.state),
        t('print-job', { label: j.label, subject: j.subject, printer: j.printer_id }),
        j.read_back ? t('print-read', { tag: j.read_back }) : '',
        confirmButton(t('reprint'), t('reprint-confirm'), () =>
          api(`/v1/site/print-jobs/${encodeURIComponent(j.job_id)}/reprint`, { method: 'POST' }), `reprint ${j.job_id}`),
        confirmButton(t('dismiss'), t('dismiss-confirm'), () =>
          api(`/v1/site/print-jobs/${encodeURIComponent(j.job_id)}/dismiss`, { method: 'POST' }), `dismiss job ${j.job_id}`),
      ),
    ),
    t('print-jobs-none'),
  );
}

async function refresh() {
  try {
    const [status, open, log] = await Promise.all([
      api('/v1/site/status'),
      api('/v1/site/decisions'),
      api('/v1/site/decision-log'),
    ]);
    renderStatus(status);
    renderDecisions(open.decisions, log.entries, status.decisions);
    renderPrintJobs(status.decisions.print_jobs);
    renderBuilds(await api('/v1/site/builds'));
    $('chart').src = `/v1/site/chart.svg?hours=12&lang=${locale()}&at=${Date.parse(status.server_time)}`;
    document.body.dataset.state = 'ready';
    document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes ?? 0) + 1);
    showView();
  } catch (err) {
    if (err.status === 401) signedOut();
    else {
      $('updated').textContent = t('not-updated', { error: err.message });
      showView();
    }
  }
}

/**
 * Shows the view once its first status is drawn (or could not be read), so
 * it appears whole rather than growing under the reader as the panels fill.
 */
function showView() {
  // A refresh that ends after a sign-out leaves the view hidden.
  if (timer !== null) $('view').hidden = false;
}

/** The fleet by build: the served build first; the handhelds behind it or stopped. */
function renderBuilds(fleet) {
  $('builds-served').textContent = fleet.served;
  $('builds-schema').textContent = number(fleet.schema);
  listOr(
    $('builds'),
    fleet.builds.map((b) => row({ dataset: { build: b.build, served: String(b.served) } },
      el('code', {}, b.build), t('build-devices', { count: b.devices }), b.served ? t('build-served') : t('build-old'))),
    t('builds-none'),
  );
  listOr(
    $('builds-devices'),
    fleet.devices.filter((d) => d.old || d.problem).map((d) =>
      row({ class: 'old-build', dataset: { device: d.device_id, build: d.build, old: String(d.old), problem: d.problem ?? '' } },
        el('strong', {}, el('bdi', {}, d.device_id)), d.old ? t('device-old-build', { build: d.build }) : t('device-build', { build: d.build }),
        d.problem ? t('device-not-capturing', { problem: d.problem }) : t('device-capturing'))),
    t('builds-all-served'),
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
    $('sign-in-error').textContent = err.status === 401 ? t('sign-in-refused') : err.message;
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

$('printer-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('printer-error').textContent = '';
  try {
    await api('/v1/site/printers', {
      method: 'POST',
      body: {
        printer_id: $('printer-id').value.trim(),
        address: $('printer-address').value.trim(),
        profile: $('printer-profile').value,
        stations: $('printer-stations').value.split(',').map((s) => s.trim()).filter(Boolean),
      },
    });
    $('printer-id').value = '';
    $('printer-address').value = '';
    $('printer-stations').value = '';
    await refresh();
  } catch (err) {
    $('printer-error').textContent = err.message;
  }
});

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && timer) refresh();
});

// The language first: the page's words are set before anything shows.
await start();
const languages = $('language');
languages.value = locale();
languages.addEventListener('change', async () => {
  await setLocale(LOCALES.includes(languages.value) ? languages.value : 'en', { remember: true });
  if (timer !== null) await refresh();
});

// 204 (no body) when no one is signed in in this browser.
api('/v1/site/session').then((session) => (session ? signedIn(session) : signedOut()), signedOut);

// Backfill: queues `DATA QUERY ATTLOG` for a terminal's next poll, then
// lists the terminal's commands and how it answered them.
async function showCommands(serial) {
  const { commands } = await api(`/v1/site/terminals/${encodeURIComponent(serial)}/commands`);
  $('backfill-commands').replaceChildren(...commands.map((c) => el('li', {},
    el('strong', {}, `#${c.id} ${c.state}`),
    c.return === undefined ? '' : ` · ${t('backfill-return', { code: c.return })}`,
    ` · ${c.command.replace('\t', ' ')}`)));
}

$('backfill').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const serial = form.get('serial').trim();
  const instant = (name) => new Date(form.get(name)).toISOString();
  try {
    const queued = await api(`/v1/site/terminals/${encodeURIComponent(serial)}/backfill`,
      { method: 'POST', body: { from: instant('from'), to: instant('to') } });
    $('backfill-result').textContent = t('backfill-queued', { command: queued.id, serial });
    await showCommands(serial);
  } catch (err) {
    $('backfill-result').textContent = err.message;
  }
});
