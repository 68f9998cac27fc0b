// The handheld speaks the operator's language: operators imported with a
// `language` column (`badge,name,language`) sign in on an English device,
// and the shell switches to German for one and to Arabic (right to left)
// for the other, and back to the device's English at sign-out. Each scans
// a unit the site refuses; the row words the ledger's refusal in the
// operator's language (the catalogue's `reason-<code>`), with the code
// left to right. Screenshots of every handheld screen in German and Arabic
// (480×800) go to artifacts/, each checked for words clipped or spilling
// past the screen's edge. The time the switch at sign-in takes is printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FluentBundle, FluentResource } from '@fluent/bundle';
import {
  addDevice,
  allItems,
  epcs,
  eventually,
  importReference,
  openCount,
  openHandheld,
  pickMode,
  siteRead,
  wedge,
} from './lib/handheld.mjs';
import { artifactsDir, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';

const www = fileURLToPath(new URL('../../www/', import.meta.url));

/** Message `id` (or its attribute) of `locale`'s handheld catalogue, as the shell formats it. */
function catalogue(locale) {
  const bundle = new FluentBundle(locale, { useIsolating: locale === 'ar' });
  bundle.addResource(new FluentResource(readFileSync(join(www, 'locales', locale, 'shell.ftl'), 'utf8')));
  return (id, args, attribute) => {
    const message = bundle.getMessage(id);
    return bundle.formatPattern(attribute ? message.attributes[attribute] : message.value, args);
  };
}

/** Elements of the shown screen whose words are cut off or spill past the viewport's sides. */
function overflowing(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const found = [];
    for (const node of document.querySelectorAll('body *')) {
      if (node.closest('[hidden]') || !node.getClientRects().length) continue;
      const style = getComputedStyle(node);
      if (style.visibility === 'hidden' || node.matches('.sr-only, .sr-only *, .last, .last *, option, select *')) continue;
      const box = node.getBoundingClientRect();
      const spills = box.width > 0 && (box.right > width + 1 || box.left < -1);
      // A box narrower than its own words (clipped, or spilling over its border), ellipsis and
      // scrolling boxes aside; the visually hidden ones (.sr-only, the status line read aloud,
      // .last) aside too. An inline box has no width of its own to measure.
      const clips = style.display !== 'inline' && !['INPUT', 'SELECT', 'TEXTAREA'].includes(node.tagName)
        && style.textOverflow !== 'ellipsis' && !['auto', 'scroll'].includes(style.overflowX)
        && node.scrollWidth > node.clientWidth + 1;
      if (spills || clips) found.push(`${node.tagName.toLowerCase()}#${node.id || ''}.${node.className || ''}: ${node.textContent.trim().slice(0, 40)}`);
    }
    return found;
  });
}

/**
 * Codes (bins, badges, GRNs) under `selector` whose text breaks across
 * lines (its Range's client rects on more than one line), with each box
 * narrowed step by step from 60 px to its own width, so a code meets the
 * end of a line somewhere: a short code never breaks, at its hyphen least
 * of all ("B-" / "07" in Arabic).
 */
function brokenCodes(page, selector) {
  return page.evaluate((sel) => {
    const broken = new Set();
    for (const box of document.querySelectorAll(sel)) {
      const full = box.getBoundingClientRect().width;
      for (let width = 60; width <= full; width += 6) {
        box.style.width = `${width}px`;
        for (const code of box.querySelectorAll('.code:not(.long)')) {
          const range = document.createRange();
          range.selectNodeContents(code);
          const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.add(`${code.textContent} (${box.id} at ${width} px)`);
        }
      }
      box.style.width = '';
    }
    return [...broken];
  }, selector);
}

/**
 * The status bar with every figure showing, in `locale`'s words at their
 * longest (a three-digit queue, an oldest age, items to decide), and either
 * the cache loading (online: it loads from the site) or offline with the
 * cache's age: the figures that do not fit inside the bar (cut off below
 * its second line or past its side), and how many lines it takes.
 */
function barOverflow(page, locale, { loading }) {
  const words = catalogue(locale);
  const texts = {
    'net-status': words(loading ? 'net-online' : 'net-offline'),
    'bar-queue': '120',
    'bar-waiting': words('bar-waiting', { count: 120 }),
    'bar-oldest': words('bar-oldest', { age: words('ago-minutes', { n: 59 }) }),
    'bar-attention': words('bar-attention', { count: 12 }),
    'bar-cache': loading ? words('bar-cache-loading', { units: 60 }) : words('bar-cache', { age: words('ago-hours', { n: 23 }) }),
  };
  return page.evaluate((shown) => {
    for (const [id, text] of Object.entries(shown)) {
      const node = document.getElementById(id);
      node.textContent = text;
      node.hidden = false;
    }
    const bar = document.getElementById('status-bar');
    const outer = bar.getBoundingClientRect();
    const inner = { top: outer.top + bar.clientTop, bottom: outer.top + bar.clientTop + bar.clientHeight, left: outer.left + bar.clientLeft, right: outer.left + bar.clientLeft + bar.clientWidth };
    const tops = [];
    const cut = [];
    for (const figure of bar.children) {
      const box = figure.getBoundingClientRect();
      tops.push(box.top);
      if (box.bottom > inner.bottom + 0.5 || box.top < inner.top - 0.5 || box.right > inner.right + 0.5 || box.left < inner.left - 0.5) cut.push(`${figure.textContent} (${Math.round(box.width)} px at ${Math.round(box.left)},${Math.round(box.top)}; bar ${Math.round(inner.right - inner.left)}×${Math.round(inner.bottom - inner.top)} px)`);
    }
    // Figures of one line differ in height (the pill, the queue's bold count): a new line starts a line's height lower.
    const lines = tops.sort((a, b) => a - b).filter((top, i, all) => i === 0 || top - all[i - 1] > 10).length;
    return { cut, lines };
  }, texts);
}

test('an operator\'s language switches the handheld at sign-in (German, Arabic right to left) and back at sign-out', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-LANG');
  const [known, unknownDe, unknownAr, stocked] = epcs('7E', 4);
  await importReference(dataDir, {
    bins: ['L-01'],
    units: [known],
    unitRows: [{ epc: stocked, sku: 'SKU-1', state: 'in_stock', bin: 'L-01' }],
    grns: [{ grn: 'GRN-7', qc: 'accepted', sku: 'SKU-1', expected: 2 }],
  });
  await openCount(dataDir, { location: 'L-1', zone: 'Z-1' });
  const operators = join(tempDataDir(), 'operators.csv');
  writeFileSync(operators, 'badge,name,language\nop-de,Dora Weber,de\nop-ar,أمل حداد,ar\nop-en,Eve Stone,\n');
  await siteCommand(['import', 'operators', operators, '--data', dataDir]);
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  const shots = artifactsDir();
  try {
    // The operators' reference data carries each one's language.
    const reference = await siteRead(site.base, token, '/v1/reference?limit=1000');
    assert.equal(reference.status, 200);
    const rows = Object.fromEntries((reference.body.operators || []).map((o) => [o.badge, o]));
    assert.equal(rows['op-de']?.language, 'de', 'the reference data names op-de\'s language');
    assert.equal(rows['op-ar']?.language, 'ar');

    const { context, page, errors } = await openHandheld(browser, { pageUrl: site.base, siteUrl: site.base, token, deviceId: 'HH-LANG' });
    const root = () => page.evaluate(() => ({ lang: document.documentElement.lang, dir: document.documentElement.dir }));
    assert.deepEqual(await root(), { lang: 'en', dir: 'ltr' }, 'an English browser shows the shell in English');
    assert.equal(await page.textContent('#picker-title'), 'Sign in');
    // The status bar holds every figure in every language, on two lines at most, none cut short.
    const bars = [];
    for (const locale of ['en', 'de', 'es', 'pl', 'ar']) {
      for (const loading of [true, false]) {
        const { cut, lines } = await barOverflow(page, locale, { loading });
        bars.push([`${locale}${loading ? ' loading' : ' offline'}`, cut, lines]);
        await page.screenshot({ path: join(shots, `languages-${locale}-status-bar-${loading ? 'loading' : 'offline'}.png`), clip: { x: 0, y: 0, width: 480, height: 120 } });
      }
    }
    for (const [what, cut, lines] of bars) {
      assert.deepEqual(cut, [], `${what}: the status bar's figures fit (${JSON.stringify(bars)})`);
      assert.ok(lines <= 2, `${what}: the status bar takes ${lines} lines`);
    }
    // The operators reach the worker's cache before the badges are scanned.
    await eventually(async () => {
      const status = await page.evaluate(() => window.stockhop.ask({ type: 'reference_status' }));
      return { ready: !!(status.operators && status.operators['op-ar']), value: status };
    }, { timeoutMs: 20_000, what: 'the operators in the reference cache' });

    const switches = [];
    for (const [badge, locale, dir, unknown] of [['op-de', 'de', 'ltr', unknownDe], ['op-ar', 'ar', 'rtl', unknownAr]]) {
      const words = catalogue(locale);
      const started = Date.now();
      await wedge(page, badge);
      await page.waitForFunction((l) => document.documentElement.lang === l
        && document.getElementById('picker-status').textContent.length > 0, locale);
      switches.push([locale, Date.now() - started]);
      assert.deepEqual(await root(), { lang: locale, dir }, `${badge} signs in: the shell speaks ${locale}`);
      assert.equal(await page.textContent('#picker-title'), words('picker-choose'));
      assert.equal(await page.textContent('#menu-button'), words('menu-button'));
      await page.screenshot({ path: join(shots, `languages-${locale}-picker.png`) });
      assert.deepEqual(await overflowing(page), [], `${locale}: the picker's words fit`);

      // A unit the site does not know, put away: the site refuses it, and says why in the operator's words.
      await pickMode(page, badge, 'put_away');
      await page.waitForSelector('#screen-mode[data-open="true"]');
      await page.waitForFunction(() => !!JSON.parse(localStorage.getItem('stockhop.session'))?.session_id);
      assert.equal(await page.textContent('#mode-title'), words('mode-put_away'));
      await page.focus('#scan-input');
      await wedge(page, 'L-01');
      await page.waitForFunction(() => JSON.parse(localStorage.getItem('stockhop.session'))?.bin === 'L-01');
      assert.equal(await page.textContent('#scan-bin'), words('scan-bin-units', { bin: 'L-01' }));
      assert.equal(await page.textContent('#scan-bin bdi.code'), 'L-01', `${locale}: the bin reads as a code`);
      assert.deepEqual(await brokenCodes(page, '#prompt .big, #scan-bin'), [], `${locale}: no bin breaks across lines`);
      await wedge(page, unknown);
      const row = page.locator(`#results li[data-kind="refused"]`).first();
      await row.waitFor({ timeout: 60_000 });
      const item = await eventually(async () => {
        const found = (await allItems(page)).find((i) => i.command === 'scan' && i.body.epc === unknown);
        return { ready: found && found.state === 'rejected', value: found };
      }, { timeoutMs: 60_000, what: `the site's answer for ${unknown}` });
      assert.equal(item.reason, 'unknown_unit', 'the ledger refused it as a unit it does not know');
      // The ledger holds no such unit: the refusal the screen words is the ledger's.
      assert.equal((await siteRead(site.base, token, `/v1/units/${unknown}`)).status, 404);
      assert.equal(await row.locator('.why').textContent(), words('reason-unknown_unit'));
      assert.equal(await row.locator('.next').textContent(), words('reason-unknown_unit', undefined, 'next'));
      assert.equal(await row.locator('small.code').textContent(), 'unknown_unit');
      const codeDir = await row.locator('small.code').evaluate((node) => getComputedStyle(node).direction);
      assert.equal(codeDir, 'ltr', `${locale}: the code reads left to right`);
      await page.screenshot({ path: join(shots, `languages-${locale}-mode-refused.png`) });
      assert.deepEqual(await overflowing(page), [], `${locale}: the mode screen's words fit`);

      // Every other mode's screen before it has what it needs (its prompt and its choices).
      await page.click('#mode-switch');
      await page.waitForSelector('#screen-picker:not([hidden])');
      for (const [mode, choice] of [['receive', '[data-grn]'], ['cycle_count', '[data-count]'], ['dispatch_verify', null], ['find_unit', null]]) {
        await page.click(`#pick-${mode}`);
        await page.waitForSelector(`#screen-mode:not([hidden])[data-mode="${mode}"]`);
        if (choice) await page.waitForSelector(`#mode-choices ${choice}`);
        assert.equal(await page.textContent('#mode-title'), words(`mode-${mode}`));
        await page.screenshot({ path: join(shots, `languages-${locale}-${mode.replace('_', '-')}.png`) });
        assert.deepEqual(await overflowing(page), [], `${locale}: ${mode}'s words fit`);
        if (mode === 'receive') {
          // The GRN's state in the operator's words, not the ledger's code.
          const grn = await siteRead(site.base, token, '/v1/grns/GRN-7');
          assert.equal(grn.status, 200);
          assert.equal(await page.textContent('#mode-choices [data-grn="GRN-7"] span'),
            words('receive-choice', { lines: grn.body.lines.length, state: words(`grn-state-${grn.body.state}`) }));
        }
        if (mode === 'find_unit') {
          // A unit found: its state as the ledger holds it, in the operator's words.
          await page.focus('#scan-input');
          await wedge(page, stocked);
          await page.waitForSelector('#find-result[data-found="true"]');
          const unit = await siteRead(site.base, token, `/v1/units/${stocked}`);
          assert.equal(unit.body.state, 'in_stock');
          const shown = await page.textContent('#find-state');
          assert.equal(shown, words(`unit-state-${unit.body.state}`));
          assert.notEqual(shown, unit.body.state, `${locale}: the state is worded, not the ledger's code`);
          assert.equal(await page.getAttribute('#find-state', 'data-state'), unit.body.state);
          await page.screenshot({ path: join(shots, `languages-${locale}-find-unit-state.png`) });
          assert.deepEqual(await overflowing(page), [], `${locale}: a found unit's words fit`);
        }
        await page.click('#mode-switch');
        await page.waitForSelector('#screen-picker:not([hidden])');
      }
      await pickMode(page, badge, 'put_away');
      await page.waitForSelector('#screen-mode[data-open="true"]');

      // Every other screen, in the operator's language.
      await page.click('#status-bar');
      await page.waitForSelector('#screen-queue:not([hidden])');
      await page.waitForFunction(() => document.querySelectorAll('#queue-list li[data-id]').length > 0);
      assert.equal(await page.textContent('#queue-title'), words('queue-title'));
      assert.deepEqual(await brokenCodes(page, '#queue-list .q-what, #queue-list .q-label'), [], `${locale}: no code of the queue breaks across lines`);
      // A rescue file's name (src/rescue.rs: file_name) in the export's sentence, as the
      // export draws it (the queue here holds nothing unsent to export): left to right,
      // isolated, and where it wraps it breaks inside the name, its hyphens where they are.
      const fileName = 'stockhop-rescue-HH-LANG-20261206T065200.000Z.jsonl';
      await page.evaluate(async (name) => {
        const [{ show }, { t }] = await Promise.all([import('/app/dom.js'), import('/app/l10n.js')]);
        document.getElementById('queue-export-box').hidden = false;
        show('queue-export-status', t('queue-export-done', { items: 3, name, size: '1 KB' }), '', [name]);
      }, fileName);
      const nameCode = page.locator('#queue-export-status bdi.code.long');
      assert.equal(await nameCode.textContent(), fileName);
      assert.deepEqual(await nameCode.evaluate((node) => [node.dir, getComputedStyle(node).direction, getComputedStyle(node).unicodeBidi, getComputedStyle(node).overflowWrap]),
        ['ltr', 'ltr', 'isolate', 'anywhere']);
      // Each line of the name reads on in the name's own order: a line after the first starts where the one before stopped.
      const nameLines = await nameCode.evaluate((node) => {
        const text = node.firstChild;
        const lines = [];
        for (let i = 0; i < text.length; i += 1) {
          const range = document.createRange();
          range.setStart(text, i);
          range.setEnd(text, i + 1);
          const box = range.getBoundingClientRect();
          const top = Math.round(box.top);
          if (!lines.length || Math.abs(lines[lines.length - 1].top - top) > 4) lines.push({ top, text: '', left: box.left });
          lines[lines.length - 1].text += text.data[i];
        }
        return lines;
      });
      assert.equal(nameLines.map((line) => line.text).join(''), fileName, `${locale}: the name's lines in order`);
      assert.ok(nameLines.every((line) => !line.text.startsWith('-')), `${locale}: no line of the name starts at a hyphen (${JSON.stringify(nameLines)})`);
      await page.screenshot({ path: join(shots, `languages-${locale}-queue-export.png`) });
      assert.deepEqual(await overflowing(page), [], `${locale}: the export's words fit`);
      await page.screenshot({ path: join(shots, `languages-${locale}-queue.png`) });
      assert.deepEqual(await overflowing(page), [], `${locale}: the queue's words fit`);
      await page.click('#menu-button');
      await page.waitForSelector('#screen-menu:not([hidden])');
      assert.equal(await page.textContent('#menu-refresh'), words('menu-refresh'));
      await page.screenshot({ path: join(shots, `languages-${locale}-menu.png`) });
      assert.deepEqual(await overflowing(page), [], `${locale}: the menu's words fit`);
      await page.click('#menu-setup');
      await page.waitForSelector('#screen-setup:not([hidden])');
      assert.equal(await page.textContent('#setup-title'), words('setup-title'));
      // The device's language stays English in the list; a note says the operator's holds until sign-out.
      assert.equal(await page.inputValue('#setup-language'), 'en');
      assert.equal(await page.isVisible('#setup-language-operator'), true, `${locale}: the setup says the operator's language holds`);
      assert.equal(await page.textContent('#setup-language-operator'), words('setup-language-operator'));
      await page.screenshot({ path: join(shots, `languages-${locale}-setup.png`) });
      assert.deepEqual(await overflowing(page), [], `${locale}: the setup's words fit`);
      await page.click('#setup-back');
      await page.waitForSelector('#screen-mode:not([hidden])');

      // CLOSE ends the shift: the device's language again.
      await wedge(page, 'STOCKHOP:CLOSE');
      await page.waitForFunction(() => document.documentElement.lang === 'en');
      assert.deepEqual(await root(), { lang: 'en', dir: 'ltr' }, `${badge} signs out: the device's English again`);
      await page.waitForSelector('#screen-picker:not([hidden])');
      assert.equal(await page.textContent('#picker-title'), 'Sign in');
    }
    // An operator without a language keeps the device's: the same sign-in
    // without a switch, the baseline the switches are read against.
    const started = Date.now();
    await wedge(page, 'op-en');
    await page.waitForFunction(() => document.getElementById('operator').textContent === 'op-en'
      && document.getElementById('picker-status').textContent.startsWith('Signed in'));
    const baseline = Date.now() - started;
    assert.deepEqual(await root(), { lang: 'en', dir: 'ltr' });
    assert.deepEqual(errors, [], 'no page errors');
    console.log(['| sign-in (badge scanned → picker redrawn in the operator\'s language) | ms | baseline: no switch (en), ms |', '|---|---|---|',
      ...switches.map(([locale, ms]) => `| en → ${locale} | ${ms} | ${baseline} |`)].join('\n'));
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('the device speaks the browser\'s language (best match, else English) unless its setup link or its setup screen chose one', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-DEV');
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const open = async (locale, fragment) => {
      const context = await browser.newContext({ viewport: { width: 480, height: 800 }, locale });
      const page = await context.newPage();
      await page.goto(`${site.base}/#${new URLSearchParams({ site: site.base, token, device: 'HH-DEV', ...fragment })}`);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#screen-picker:not([hidden])');
      return { context, page };
    };
    const shown = (page) => page.evaluate(() => ({ lang: document.documentElement.lang, dir: document.documentElement.dir, title: document.getElementById('picker-title').textContent }));

    // A Spanish browser: the shell in Spanish.
    const es = await open('es-MX');
    assert.deepEqual(await shown(es.page), { lang: 'es', dir: 'ltr', title: catalogue('es')('picker-sign-in') });
    await es.context.close();
    // A language the shell does not ship: English.
    const fr = await open('fr-FR');
    assert.deepEqual(await shown(fr.page), { lang: 'en', dir: 'ltr', title: 'Sign in' });
    await fr.context.close();
    // The setup link chose Polish: Polish on a Spanish browser, and again after a reload.
    const pl = await open('es-ES', { lang: 'pl' });
    await pl.page.waitForFunction(() => document.documentElement.lang === 'pl');
    assert.deepEqual(await shown(pl.page), { lang: 'pl', dir: 'ltr', title: catalogue('pl')('picker-sign-in') });
    await pl.page.screenshot({ path: join(artifactsDir(), 'languages-pl-picker.png') });
    await pl.page.reload();
    await pl.page.waitForSelector('body[data-ready="true"]');
    assert.equal((await shown(pl.page)).lang, 'pl', 'the setup\'s choice is kept');
    await pl.context.close();

    // The setup screen's language list: the browser's language until one is
    // chosen, each language by its own name, a full touch target; the choice
    // is the device's from then on, across a reload.
    const chosen = await open('en-US');
    const toSetup = async () => {
      await chosen.page.click('#menu-button');
      await chosen.page.waitForSelector('#screen-menu:not([hidden])');
      await chosen.page.click('#menu-setup');
      await chosen.page.waitForSelector('#screen-setup:not([hidden])');
    };
    await toSetup();
    assert.equal(await chosen.page.inputValue('#setup-language'), 'en', 'the list starts on the browser\'s language');
    assert.deepEqual(await chosen.page.$$eval('#setup-language option', (options) => options.map((o) => [o.value, o.textContent])),
      [['en', 'English'], ['de', 'Deutsch'], ['es', 'Español'], ['pl', 'Polski'], ['ar', 'العربية']]);
    const box = await chosen.page.locator('#setup-language').boundingBox();
    assert.ok(box.height >= 44 && box.width >= 44, `the list is a touch target (${box.width}×${box.height} px)`);
    await chosen.page.selectOption('#setup-language', 'ar');
    await chosen.page.waitForFunction(() => document.documentElement.lang === 'ar');
    const ar = catalogue('ar');
    assert.equal(await chosen.page.textContent('#setup-title'), ar('setup-title'));
    assert.equal(await chosen.page.evaluate(() => document.documentElement.dir), 'rtl');
    assert.equal(await chosen.page.isHidden('#setup-language-operator'), true, 'no operator\'s language overrides the device\'s');
    await chosen.page.screenshot({ path: join(artifactsDir(), 'languages-ar-setup-chosen.png') });
    // A ledger code the catalogue words, and one it does not yet (a later site's): the code itself, left to right.
    const worded = await chosen.page.evaluate(async () => {
      const { valueWords } = await import('/app/l10n.js');
      return [valueWords('unit-state', 'missing'), valueWords('manifest-state', 'dispatched'), valueWords('unit-state', 'quarantined')];
    });
    assert.deepEqual(worded, [ar('unit-state-missing'), ar('manifest-state-dispatched'), '\u2066quarantined\u2069']);
    assert.deepEqual(await overflowing(chosen.page), [], 'ar: the setup\'s words fit');
    await chosen.page.reload();
    await chosen.page.waitForSelector('body[data-ready="true"]');
    assert.deepEqual(await shown(chosen.page), { lang: 'ar', dir: 'rtl', title: ar('picker-sign-in') }, 'the choice is kept across a reload');
    await toSetup();
    assert.equal(await chosen.page.inputValue('#setup-language'), 'ar');
    await chosen.page.selectOption('#setup-language', 'de');
    await chosen.page.waitForFunction(() => document.documentElement.lang === 'de');
    assert.equal(await chosen.page.textContent('#setup-language-label'), catalogue('de')('setup-language'));
    await chosen.page.screenshot({ path: join(artifactsDir(), 'languages-de-setup-chosen.png') });
    await chosen.context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});
