// The handheld's words for the ledger's answers (the `reason-<code>`
// messages of www/locales/en/shell.ftl, which www/reasons.js names)
// against the ledger: every rejection reason the core defines
// (src/reason.rs, the one list the ledger answers from) and every code a
// single item can get is worded exactly as docs/design.md §5.4 words it,
// and the catalogue words nothing the ledger never answers (a reason, or a
// code of `stockhop::wire::codes` or the ledger's `codes`). Every other
// locale has the same messages (tests/e2e/locales.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FluentBundle, FluentResource } from '@fluent/bundle';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Every `.rs` file under `dir`. */
function rustFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return rustFiles(path);
    return entry.name.endsWith('.rs') ? [path] : [];
  });
}

/** The string constants of each `pub mod NAME { … }` block in `files`. */
function constantsOf(files, name) {
  const found = new Set();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const head = new RegExp(`pub mod ${name} \\{`, 'g');
    for (let m = head.exec(text); m; m = head.exec(text)) {
      const end = text.indexOf('\n}', m.index);
      for (const c of text.slice(m.index, end).matchAll(/pub const [A-Z_]+: &str = "([^"]+)";/g)) found.add(c[1]);
    }
  }
  return found;
}

/** A table of docs/design.md §5.4 after `marker`: code → {words, next}. */
function documented(marker, skip) {
  const text = readFileSync(join(root, 'docs', 'design.md'), 'utf8');
  const rows = text.slice(text.indexOf(marker)).split('\n').slice(skip);
  const table = {};
  for (const line of rows) {
    const m = /^\| `([A-Za-z_]+)` \| (.*?) \| (.*?) \|$/.exec(line);
    if (!m) break;
    table[m[1]] = { words: m[2], next: m[3] };
  }
  return table;
}

/** The English catalogue's reason messages but the general ones (`general`): code → {words, next}; and `words(id)`. */
function catalogued(general) {
  const bundle = new FluentBundle('en', { useIsolating: false });
  const errors = bundle.addResource(new FluentResource(readFileSync(join(root, 'www', 'locales', 'en', 'shell.ftl'), 'utf8')));
  assert.deepEqual(errors, [], 'the English catalogue parses');
  const text = readFileSync(join(root, 'www', 'locales', 'en', 'shell.ftl'), 'utf8');
  const words = (id) => {
    const message = bundle.getMessage(id);
    return { words: bundle.formatPattern(message.value), next: bundle.formatPattern(message.attributes.next) };
  };
  const table = {};
  for (const m of text.matchAll(/^reason-([A-Za-z_]+) =/gm)) {
    if (!general.includes(`reason-${m[1]}`)) table[m[1]] = words(`reason-${m[1]}`);
  }
  return { table, words };
}

test('every reason the ledger answers has the documented words and next step on the handheld, and the table invents none', async () => {
  const { reasonMessage, REFUSED_AS_SENT, WAITING_BEHIND, REFUSED_OTHER } = await import(join(root, 'www', 'reasons.js'));
  const { table: REASONS, words } = catalogued([REFUSED_AS_SENT, WAITING_BEHIND, REFUSED_OTHER]);
  const explain = (reason) => {
    const message = reasonMessage(reason);
    return { code: message.code, ...(REASONS[message.id.slice('reason-'.length)] || words(message.fallback)) };
  };
  const core = readFileSync(join(root, 'src', 'reason.rs'), 'utf8');
  const reasons = new Set([...core.matchAll(/^pub const [A-Z_]+: &str = "([a-z_]+)";/gm)].map((m) => m[1]));
  const codes = new Set([...constantsOf(rustFiles(join(root, 'src')), 'codes'), ...constantsOf(rustFiles(join(root, 'site', 'src')), 'codes')]);
  assert.ok(reasons.size >= 20, `the ledger's reasons were found (${reasons.size})`);
  const table = documented('<!-- reasons table -->', 3);
  assert.deepEqual(Object.keys(table).sort(), [...reasons].sort(), 'docs/design.md §5.4 lists every reason');
  for (const reason of reasons) {
    assert.deepEqual(REASONS[reason], table[reason], `${reason} as docs/design.md words it`);
  }
  const blocking = documented('The codes a single item can get:', 4);
  assert.ok(Object.keys(blocking).length >= 5, 'the blocking codes\' table was found');
  for (const [code, worded] of Object.entries(blocking)) {
    assert.deepEqual(REASONS[code], worded, `${code} as docs/design.md words it`);
  }
  const invented = Object.keys(REASONS).filter((key) => !reasons.has(key) && !codes.has(key));
  assert.deepEqual(invented, [], 'words for answers the ledger never gives');
  for (const [key, { words, next }] of Object.entries(REASONS)) {
    assert.ok(words.length > 10 && next.length > 5, `${key} is worded`);
  }
  // A blocked item's reason as the worker keeps it reads through the table too.
  assert.equal(explain('SESSION_CONFLICT (HTTP 409)').words, REASONS.SESSION_CONFLICT.words);
  assert.equal(explain('SESSION_CONFLICT (HTTP 409)').code, 'SESSION_CONFLICT (HTTP 409)');
  // An answer with no words of its own reads the general ones.
  assert.equal(reasonMessage('HTTP 403').fallback, REFUSED_AS_SENT);
  assert.equal(reasonMessage('waiting behind blocked item 7').fallback, WAITING_BEHIND);
  assert.equal(reasonMessage('SOMETHING_NEW (HTTP 422)').fallback, REFUSED_OTHER);
  assert.equal(explain('HTTP 403').words, 'The site refused this scan as sent.');
  assert.equal(reasonMessage(''), null);
  const codesWorded = Object.keys(REASONS).filter((key) => codes.has(key));
  console.log(`reason table: ${Object.keys(REASONS).length} entries: all ${reasons.size} of the ledger's reasons + ${codesWorded.length} blocking codes`);
});
