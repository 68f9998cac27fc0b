// The site view's catalogues (site/src/view/page/locales/<locale>/view.ftl)
// are whole: every locale parses, holds every message the page, its script,
// its language module, the server's chart and the decisions' workbench name and no message they do not, with the same
// attributes as English, and formats each one with the arguments the code
// passes (tests/e2e/lib/catalogues.mjs says how the code names a
// message). The reasons' messages are built at run time (`reason-<code>`):
// every reason the ledger answers and every code that blocks an item has
// one, in every locale. The Fluent library the binary embeds is the npm
// package's own build, at the version the handheld's is pinned to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkSurface, LOCALES } from './lib/catalogues.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const page = join(root, 'site', 'src', 'view', 'page');

/** Every reason the ledger answers (`stockhop::reason::ALL`, src/reason.rs). */
function ledgerReasons() {
  const core = readFileSync(join(root, 'src', 'reason.rs'), 'utf8');
  return [...core.matchAll(/^pub const [A-Z_]+: &str = "([a-z_]+)";/gm)].map((m) => m[1]);
}

test('the site view\'s catalogues hold every message its code names, in every locale, and nothing else', () => {
  const reasons = ledgerReasons();
  assert.ok(reasons.length >= 20, `the ledger's reasons were found (${reasons.length})`);
  const report = checkSurface({
    name: 'site view',
    catalogues: join(page, 'locales'),
    // The chart's words are drawn by the server (chart.rs) from the same
    // catalogues; a decision's sentences are named by the workbench
    // (workbench.rs, its `msg("…")`) and formatted by the page.
    sources: [
      join(page, 'index.html'),
      join(page, 'dashboard.js'),
      join(page, 'l10n.js'),
      join(root, 'site', 'src', 'view', 'chart.rs'),
      join(root, 'site', 'src', 'view', 'workbench.rs'),
    ],
    dynamic: reasons.map((code) => `reason-${code}`),
  });
  assert.deepEqual(report.problems, [], report.problems.join('\n'));
  const english = readFileSync(join(page, 'locales', 'en', 'view.ftl'));
  const sizes = LOCALES.map((locale) => {
    const bytes = readFileSync(join(page, 'locales', locale, 'view.ftl'));
    return `| ${locale} | ${report.perLocale[locale]} | ${bytes.length} | ${gzipSync(bytes, { level: 9 }).length} |`;
  });
  console.log(['| locale | messages | bytes | gzipped |', '|---|---|---|---|', ...sizes].join('\n'));
  assert.ok(english.length > 0);
});

test('every ledger reason has its words and its next step in every locale of the site view', () => {
  const reasons = ledgerReasons();
  for (const locale of LOCALES) {
    const text = readFileSync(join(page, 'locales', locale, 'view.ftl'), 'utf8');
    for (const reason of reasons) {
      const at = text.indexOf(`\nreason-${reason} = `);
      assert.ok(at >= 0, `${locale}: reason-${reason}`);
      assert.match(text.slice(at + 1).split('\n')[1], /^ {4}\.next = \S/, `${locale}: reason-${reason} has .next`);
    }
  }
});

test('the embedded Fluent library is @fluent/bundle from npm, at the handheld\'s pinned version', () => {
  const pinned = JSON.parse(readFileSync(join(root, 'xtask', 'npm', 'package.json'), 'utf8')).dependencies['@fluent/bundle'];
  const embedded = readFileSync(join(root, 'site', 'vendor', 'fluent-bundle.js'));
  assert.ok(embedded.toString('utf8').startsWith(`/** @fluent/bundle@${pinned} */`), `the embedded build says ${pinned}`);
  const installed = readFileSync(join(root, 'xtask', 'npm', 'node_modules', '@fluent', 'bundle', 'index.js'));
  assert.ok(embedded.equals(installed), 'site/vendor/fluent-bundle.js is the package\'s index.js, byte for byte');
});
