// The page's shared state, in one place, read and changed through the
// functions below: the device's setup, what the page last read of the
// reference cache, the site's light, the screen shown, the operator, the
// open mode's session (kept across reloads in localStorage), and the queue
// as last walked. What only one mode needs (its GRN, count or manifest)
// stays in that mode's module.

import { loadJson } from './dom.js';

/** The open mode: {mode, operator_id, session_id?, context, bin?, sku?, encode, …}. */
const SESSION_KEY = 'stockhop.session';
const OPERATOR_KEY = 'stockhop.operator';

/** Everything below reads and writes this one record. */
const state = {
  siteUrl: null,
  deviceId: null,
  /** reference_status's last answer. */
  reference: null,
  /** The site's bins by label, from the reference cache: at most as many as one
   * `reference_list` answers (5,000), so a label not here is looked up with
   * lookup.js's `binOf`, which reads the cache itself. */
  bins: new Map(),
  /** Whether the site answers: null until first asked. */
  online: null,
  /** The last instant the page saw the site offline: a scan kept before it waited out an outage. */
  offlineSeenAt: null,
  screen: null,
  session: loadJson(SESSION_KEY, null),
  operator: localStorage.getItem(OPERATOR_KEY) || '',
  /** The picker's next scan is an operator badge. */
  awaitingOperator: false,
  /** The queue's items of the open session (for receive's and count's figures since). */
  sessionItems: [],
  /** Every item of the queue as last walked (the queue screen pages through it). */
  queueItems: [],
  /** The queue's counts as last read, with the refusals not yet acknowledged. */
  counts: null,
  /** What the site last said of this device through the worker (from `device`'s answer):
   * {refused, closed_sessions}. */
  word: null,
  /** The page's own last read under the device token was refused (401). */
  refusedHere: false,
};
state.awaitingOperator = !state.operator;

/** The site and device this handheld is set up for ({siteUrl, deviceId}; null before setup). */
export function device() {
  return { siteUrl: state.siteUrl, deviceId: state.deviceId };
}

export function setDevice(url, id) {
  state.siteUrl = url;
  state.deviceId = id;
}

export function reference() {
  return state.reference;
}

export function setReference(status) {
  state.reference = status;
}

export function bins() {
  return state.bins;
}

export function setBins(map) {
  state.bins = map;
}

/** What the site says of this device's profile: the modes it runs, or null before the site has said. */
export function deviceModes() {
  return state.reference && state.reference.device ? state.reference.device.modes : null;
}

export function canEncode() {
  return !!(state.reference && state.reference.device && state.reference.device.encode);
}

/** Whether the site says this device is not commissioned: its scans are practice. */
export function training() {
  return !!(state.reference && state.reference.device && state.reference.device.commissioned === false);
}

export function online() {
  return state.online;
}

/** Sets the site's light; true when it changed. */
export function setOnline(ok) {
  if (!ok) state.offlineSeenAt = Date.now();
  if (ok === state.online) return false;
  state.online = ok;
  return true;
}

export function offlineSeenAt() {
  return state.offlineSeenAt;
}

export function screen() {
  return state.screen;
}

export function setScreen(name) {
  state.screen = name;
}

/** The open mode's session, or null on the picker. Change its fields, then `saveSession()`. */
export function session() {
  return state.session;
}

export function setSession(value) {
  state.session = value;
  saveSession();
}

export function saveSession() {
  if (state.session) localStorage.setItem(SESSION_KEY, JSON.stringify(state.session));
  else localStorage.removeItem(SESSION_KEY);
}

export function operator() {
  return state.operator;
}

/** Signs `badge` in (or, with '', out): the next picker scan is a badge again only when out. */
export function setOperator(badge) {
  state.operator = badge;
  state.awaitingOperator = !badge;
  if (badge) localStorage.setItem(OPERATOR_KEY, badge);
  else localStorage.removeItem(OPERATOR_KEY);
}

export function awaitingOperator() {
  return state.awaitingOperator;
}

/** The picker takes the next scan as a badge (Change operator). */
export function awaitOperator() {
  state.awaitingOperator = true;
}

export function sessionItems() {
  return state.sessionItems;
}

export function queueItems() {
  return state.queueItems;
}

/** The queue as last walked: every item, and the open session's. */
export function setQueue(every, ofSession) {
  state.queueItems = every;
  state.sessionItems = ofSession;
}

export function counts() {
  return state.counts;
}

/** A `counts` answer, keeping the refusals to acknowledge from the last walk. */
export function takeCounts(reply) {
  state.counts = { ...reply, rejected_unacknowledged: state.counts ? state.counts.rejected_unacknowledged : 0 };
}

export function setUnacknowledged(n) {
  if (state.counts) state.counts.rejected_unacknowledged = n;
}

export function word() {
  return state.word;
}

export function setWord(reply) {
  state.word = reply;
}

/** The site no longer takes this device's token (revoked, or a new one issued). */
export function refused() {
  return state.refusedHere || !!(state.word && state.word.refused);
}

/** The page's own read under the device token: refused (401) or taken. */
export function setRefusedHere(refusedNow) {
  state.refusedHere = refusedNow;
}
