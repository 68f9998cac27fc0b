// Labels at the station's printer: a receive scan with encode, from a
// handheld whose station has a printer, has the site print the unit's
// label there and write its tag; the ENCODE hop posts only when the tag
// reads back as written. This module reads, with the device token, the
// printer set for this handheld's station (GET /v1/devices/{id}/printer)
// and, by each such scan's key, its print job
// (GET /v1/devices/{id}/print-jobs/{key}), and puts what the ledger
// decided into words for the receive screen: the tag written and read
// back, the label waiting for a printer that is offline or faulted, or a
// read-back that did not match or a void tag, which a person decides on
// the site's view.
//
// Element ids (stable; the end-to-end suite reads them):
//   #station-printer[data-printer][data-state="ready"|"offline"|"fault"|"none"|"unknown"]
//   #results li[data-key] .label[data-job-state="waiting"|"pending"|"sending"|"printed"|
//     "refused"|"in_doubt"|"dismissed"][data-reason] (the scan's label, in words)

import { locale, msg, t } from './app/l10n.js';
import { signal } from './signal.js';

/** How often an unsettled label is read again while the receive screen waits on it. */
const LABEL_POLL_MS = 1000;
/** How often a label waiting on a printer that is offline or faulted is read again. */
const WAITING_POLL_MS = 10 * 1000;
/** How often the station's printer is read again while a receive screen shows it. */
const STATION_POLL_MS = 10 * 1000;
/** Labels followed at once: the receive screen's last scans, with room to spare. */
const LABELS_FOLLOWED_MAX = 20;
/** Job states the ledger will not change without a person. */
const SETTLED = ['printed', 'refused', 'in_doubt', 'dismissed'];
/** Queue states after which a scan will never queue a label. */
const NEVER_APPLIED = ['rejected', 'blocked', 'voided'];

const FAULT_WORDS = {
  paper_out: msg('printer-paper-out'),
  head_open: msg('printer-head-open'),
  ribbon_out: msg('printer-ribbon-out'),
  paused: msg('printer-paused'),
};

let hooks = null;
/** The station's printer: undefined until read, null when none is set. */
let station;
let stationReadAt = 0;
/** Followed labels by scan key: {epc, view, done, nextAt}. */
const followed = new Map();
let timer = null;

/**
 * Wires the module to the page: `get(path)` reads the site with the
 * device token ({body} | {status} | {offline}), `device()` is this
 * device's id, `stateOf(key)` the queue state of the scan under `key`,
 * and `changed()` re-renders the receive screen.
 */
export function setup(page) {
  hooks = page;
}

/** Reads the station's printer again (on opening receive, and while it shows). */
export async function loadStation() {
  if (!hooks || !hooks.device()) return;
  stationReadAt = Date.now();
  const reply = await hooks.get(`/v1/devices/${encodeURIComponent(hooks.device())}/printer`);
  const before = JSON.stringify(station);
  if (reply.body) station = reply.body;
  else if (reply.status === 404) station = null;
  if (JSON.stringify(station) !== before) hooks.changed();
}

/** Follows the label of the scan `key` (of tag `epc`) until the ledger settles it. */
export function follow(key, epc) {
  if (station === null) return;
  followed.set(key, { epc, view: null, done: false, nextAt: 0 });
  while (followed.size > LABELS_FOLLOWED_MAX) followed.delete(followed.keys().next().value);
  poll();
}

function poll() {
  if (timer) return;
  timer = setTimeout(async () => {
    timer = null;
    let waiting = false;
    for (const [key, label] of followed) {
      if (label.done) continue;
      const state = hooks.stateOf(key);
      if (NEVER_APPLIED.includes(state)) {
        label.done = true;
        continue;
      }
      waiting = true;
      if (Date.now() < label.nextAt) continue;
      label.nextAt = Date.now() + LABEL_POLL_MS;
      const reply = await hooks.get(`/v1/devices/${encodeURIComponent(hooks.device())}/print-jobs/${encodeURIComponent(key)}`);
      if (reply.status === 404 && (state === 'done' || state === undefined)) {
        // Applied without a label at the printer: the site took the
        // handheld's own encode (the station's printer was unset since);
        // or its row is gone from the screen.
        label.done = true;
        continue;
      }
      if (!reply.body) continue;
      const before = label.view && `${label.view.job.state}/${label.view.printer && label.view.printer.offline}/${(label.view.printer && label.view.printer.faults || []).join()}`;
      label.view = reply.body;
      const job = reply.body.job;
      const now = `${job.state}/${reply.body.printer && reply.body.printer.offline}/${(reply.body.printer && reply.body.printer.faults || []).join()}`;
      if (job.state === 'pending' && printerTrouble(reply.body.printer)) label.nextAt = Date.now() + WAITING_POLL_MS;
      if (SETTLED.includes(job.state)) {
        label.done = true;
        if (job.state === 'refused' || job.state === 'in_doubt') signal('refused');
      }
      if (now !== before) hooks.changed();
    }
    if (Date.now() - stationReadAt > STATION_POLL_MS) loadStation();
    if (waiting) poll();
  }, LABEL_POLL_MS);
}

function printerTrouble(printer) {
  if (!printer) return null;
  if (printer.offline) return t('printer-offline', { printer: printer.printer_id });
  if (printer.last_error) return t('printer-unreached', { printer: printer.printer_id });
  if (printer.faults && printer.faults.length) {
    const faults = new Intl.ListFormat(locale(), { style: 'short', type: 'unit' }).format(printer.faults.map((f) => (FAULT_WORDS[f] ? t(FAULT_WORDS[f]) : f)));
    return t('printer-faults', { printer: printer.printer_id, faults });
  }
  return null;
}

/** What a label's job came to, in words: {state, text, kind}. */
export function words(view, epc) {
  if (!view) return { state: 'waiting', text: t('label-waiting'), kind: '' };
  const { job, printer } = view;
  const at = job.printer_id;
  switch (job.state) {
    case 'pending': {
      const trouble = printerTrouble(printer);
      return trouble
        ? { state: 'pending', text: t('label-waits', { trouble }), kind: 'warn' }
        : { state: 'pending', text: t('label-queued', { printer: at }), kind: '' };
    }
    case 'sending':
      return { state: 'sending', text: t('label-printing', { printer: at }), kind: '' };
    case 'printed':
      return { state: 'printed', text: t('label-printed', { printer: at }), kind: 'ok' };
    case 'refused':
      return job.reason === 'void_tag'
        ? { state: 'refused', text: t('label-void', { printer: at }), kind: 'error' }
        : { state: 'refused', text: job.read_back ? t('label-read-wrong', { printer: at, wrote: job.subject || epc, read: job.read_back }) : t('label-read-other', { printer: at, wrote: job.subject || epc }), kind: 'error' };
    case 'in_doubt':
      return { state: 'in_doubt', text: t('label-in-doubt', { printer: at }), kind: 'error' };
    case 'dismissed':
      return { state: 'dismissed', text: t('label-dismissed'), kind: 'warn' };
    default:
      return { state: job.state, text: t('label-state', { printer: at, state: job.state }), kind: '' };
  }
}

/** The label line of a scan row, or null when its scan asked for none at a printer. */
export function note(el, key) {
  const label = key && followed.get(key);
  if (!label || (label.done && !label.view)) return null;
  const said = words(label.view, label.epc);
  return el('span', {
    class: `label ${said.kind}`.trim(),
    dataset: { jobState: said.state, ...(label.view && label.view.job.reason ? { reason: label.view.job.reason } : {}) },
    text: said.text,
  });
}

/** The receive screen's line about the station's printer (with encode on). */
export function stationLine(el) {
  if (Date.now() - stationReadAt > STATION_POLL_MS) loadStation();
  if (station === undefined) {
    return el('p', { id: 'station-printer', class: 'status muted', dataset: { state: 'unknown' }, text: t('station-unread') });
  }
  if (station === null) {
    return el('p', { id: 'station-printer', class: 'status muted', dataset: { state: 'none' }, text: t('station-none') });
  }
  const trouble = printerTrouble(station);
  const state = station.offline ? 'offline' : trouble ? 'fault' : 'ready';
  return el('p', {
    id: 'station-printer',
    class: `status ${trouble ? 'warn' : ''}`.trim(),
    dataset: { state, printer: station.printer_id },
    text: trouble
      ? t('station-trouble', { printer: station.printer_id, trouble })
      : t('station-ready', { printer: station.printer_id }),
  });
}
