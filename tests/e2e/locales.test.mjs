// The handheld's catalogues (www/locales/<locale>/shell.ftl) are whole:
// every locale parses, holds every message the shell's code names and no
// message it does not, with the same attributes as English, and formats
// each one with the arguments the code passes (tests/e2e/lib/catalogues.mjs
// says how the code names a message). The reasons' messages are built at
// run time (`reason-<code>`): every reason the ledger answers and every
// code that blocks an item must have one, in every locale; so are the
// words of the ledger's closed lists the screens show (`unit-state-<code>`,
// `grn-state-`, `grn-qc-`, `manifest-state-`, `count-state-`), one for
// every code the site's lists hold, and a queue command's (`command-`),
// one for every command of the core's wire format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkSurface, LOCALES } from './lib/catalogues.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const www = join(root, 'www');

/** The queue's commands by their wire names (src/wire.rs), each worded as `command-<name>` on the queue screen. */
export function commandNames() {
  const wire = readFileSync(join(root, 'src', 'wire.rs'), 'utf8');
  return [...wire.matchAll(/Command::\w+ => "([a-z_]+)"/g)].map((m) => m[1]);
}

/** Every reason the ledger answers (src/reason.rs) and the codes docs/design.md §5.4 says block an item. */
export function ledgerAnswers() {
  const core = readFileSync(join(root, 'src', 'reason.rs'), 'utf8');
  const reasons = [...core.matchAll(/^pub const [A-Z_]+: &str = "([a-z_]+)";/gm)].map((m) => m[1]);
  const design = readFileSync(join(root, 'docs', 'design.md'), 'utf8');
  const rows = design.slice(design.indexOf('The codes a single item can get:')).split('\n').slice(4);
  const codes = [];
  for (const line of rows) {
    const m = /^\| `([A-Z_]+)` \|/.exec(line);
    if (!m) break;
    codes.push(m[1]);
  }
  return { reasons, codes };
}

/**
 * The codes of the ledger's closed lists the handheld shows as words
 * (`valueWords(list, code)` in www/app/l10n.js), read from the site's own
 * lists in site/src/ledger/: list → codes.
 */
export function ledgerValues() {
  const ledger = (name) => readFileSync(join(root, 'site', 'src', 'ledger', `${name}.rs`), 'utf8');
  const inModule = (text, name) => {
    const start = text.indexOf(`pub mod ${name} {`);
    assert.ok(start >= 0, `the ledger declares mod ${name}`);
    const body = text.slice(start, text.indexOf('\n}', start));
    return [...new Set([...body.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]))];
  };
  return {
    'unit-state': [...ledger('units').matchAll(/UnitState::\w+ => "([a-z_]+)"/g)].map((m) => m[1]),
    'grn-state': inModule(ledger('grns'), 'states'),
    'grn-qc': inModule(ledger('grns'), 'qc'),
    'manifest-state': inModule(ledger('manifests'), 'states'),
    'count-state': inModule(ledger('counts'), 'states'),
  };
}

test('the handheld\'s catalogues hold every message its code names, in every locale, and nothing else', () => {
  const { reasons, codes } = ledgerAnswers();
  assert.ok(reasons.length >= 20 && codes.length >= 5, `the ledger's answers were found (${reasons.length} reasons, ${codes.length} codes)`);
  const values = ledgerValues();
  const commands = commandNames();
  assert.ok(commands.includes('open_session') && commands.includes('scan'), `the commands were found (${commands.join(', ')})`);
  assert.deepEqual(values['unit-state'].sort(), ['dispatched', 'in_stock', 'missing', 'new'], 'the units\' states were found');
  for (const [list, found] of Object.entries(values)) assert.ok(found.length >= 3, `${list}: the ledger's codes were found (${found.join(', ')})`);
  const report = checkSurface({
    name: 'handheld',
    catalogues: join(www, 'locales'),
    sources: [join(www, 'index.html'), join(www, 'app.js'), join(www, 'app'), join(www, 'reasons.js'), join(www, 'release.js'), join(www, 'labels.js')],
    dynamic: [
      ...[...reasons, ...codes].map((code) => `reason-${code}`),
      ...Object.entries(values).flatMap(([list, found]) => found.map((code) => `${list}-${code}`)),
      ...commands.map((name) => `command-${name}`),
    ],
  });
  assert.deepEqual(report.problems, [], report.problems.join('\n'));
  const sizes = LOCALES.map((locale) => {
    const bytes = readFileSync(join(www, 'locales', locale, 'shell.ftl'));
    return `| ${locale} | ${report.perLocale[locale]} | ${bytes.length} | ${gzipSync(bytes, { level: 9 }).length} |`;
  });
  console.log(['| locale | messages | bytes | gzipped |', '|---|---|---|---|', ...sizes].join('\n'));
});

test('the shell lists every catalogue, so the service worker caches them for an offline start', () => {
  const listed = JSON.parse(readFileSync(join(www, 'shell.json'), 'utf8'));
  for (const locale of LOCALES) {
    const path = `locales/${locale}/shell.ftl`;
    assert.ok(listed.includes(path), `${path} is in www/shell.json`);
    assert.ok(statSync(join(www, path)).isFile(), `${path} exists`);
  }
  assert.ok(listed.some((path) => path.startsWith('vendor/fluent-bundle/')), 'the Fluent library is in www/shell.json');
  assert.ok(!listed.some((path) => path.endsWith('.md')), 'a glossary is not served in the shell');
});
