// Keeps a surface's message catalogues whole: every Fluent file
// (`<catalogues>/<locale>/*.ftl`) parses, every locale has the same
// messages with the same attributes, every id the code uses is in every
// locale, no locale has an id nothing uses, and every message formats in
// every locale with the arguments the code passes.
//
// How the code names a message (the convention the scan below reads):
//   * a lookup with a literal id: `t('id')`, `t('id', { count, bin: code })`,
//     `attr('id', 'next')` (JavaScript), `tr("id")` / `tr("id", &args)` /
//     `fluent_args!`-free Rust calls named `tr`, `tr_args` (Rust);
//   * markup: `data-l10n-id="id"` (its arguments, if any, in
//     `data-l10n-args='{"name": …}'`);
//   * an id kept in a table and looked up later is written `msg('id')` (it
//     returns the id unchanged, as gettext's `N_()` does), so the literal is
//     seen here; its arguments are the message's own variables;
//   * ids built at run time from a closed list (`reason-${code}` for every
//     reason the ledger answers) are not written anywhere: the surface
//     passes them as `dynamic`, read from the list itself (for the reasons,
//     `stockhop::reason::ALL` and the ledger's codes).
// The arguments of a call are the keys of its literal object (`{ count }`,
// `{ count: n }`); a call whose arguments are not a literal object (or
// spread one, `{ ...figures, age }`) is formatted with the message's own
// variables. Comments are scanned too: write an example id as `<id>`.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { FluentBundle, FluentResource } from '@fluent/bundle';
import { FluentParser, Visitor } from '@fluent/syntax';

/** The locales every surface ships (DESIGN §16), English first: the reference. */
export const LOCALES = ['en', 'de', 'es', 'pl', 'ar'];

/** Every file under `path` (or `path` itself) whose name ends in one of `exts`. */
function filesUnder(path, exts) {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) => {
    const inner = join(path, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(inner, exts);
    return exts.some((ext) => entry.name.endsWith(ext)) ? [inner] : [];
  });
}

const SOURCE_EXTS = ['.js', '.mjs', '.html', '.rs'];

/** The keys of an object literal's text (`{ count, bin: code }` → count, bin); null when it is not one. */
function literalKeys(text) {
  if (!text) return [];
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return null;
  const inner = trimmed.slice(1, -1);
  const keys = [];
  let depth = 0;
  let part = '';
  for (const ch of inner) {
    if ('([{'.includes(ch)) depth += 1;
    if (')]}'.includes(ch)) depth -= 1;
    if (ch === ',' && depth === 0) {
      keys.push(part);
      part = '';
    } else {
      part += ch;
    }
  }
  keys.push(part);
  if (keys.some((key) => key.trim().startsWith('...'))) return null;
  return keys
    .map((key) => /^\s*['"]?([A-Za-z_$][\w$]*)['"]?\s*(?::|$)/.exec(key))
    .filter(Boolean)
    .map((m) => m[1]);
}

/** The argument text of a call whose id literal ended at `from` in `text`: `, {…})` → `{…}`. */
function callArgs(text, from) {
  let i = from;
  while (/\s/.test(text[i])) i += 1;
  if (text[i] !== ',') return '';
  i += 1;
  const start = i;
  let depth = 0;
  for (; i < text.length; i += 1) {
    const ch = text[i];
    if ('([{'.includes(ch)) depth += 1;
    else if (')]}'.includes(ch)) {
      if (depth === 0) break;
      depth -= 1;
    } else if (ch === ',' && depth === 0) break;
  }
  return text.slice(start, i);
}

/**
 * Every message id `sources` use: id → [{ where, args }], where `args` is the
 * list of argument names the call passes (null: not a literal object).
 */
export function usedIds(sources) {
  const used = new Map();
  const note = (id, where, args) => {
    if (!used.has(id)) used.set(id, []);
    used.get(id).push({ where, args });
  };
  const lookup = /\b(?:t|attr|msg|tr|tr_args)\(\s*(['"])([A-Za-z][\w-]*)\1/g;
  const markup = /data-l10n-id=(['"])([A-Za-z][\w-]*)\1(?:\s+data-l10n-args='([^']*)')?/g;
  for (const file of sources.flatMap((source) => filesUnder(source, SOURCE_EXTS))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(lookup)) {
      const line = text.slice(0, m.index).split('\n').length;
      // `msg('id')` names an id whose arguments are passed where it is looked up.
      const args = m[0].startsWith('msg') ? null : literalKeys(callArgs(text, m.index + m[0].length));
      note(m[2], `${file}:${line}`, args);
    }
    for (const m of text.matchAll(markup)) {
      const line = text.slice(0, m.index).split('\n').length;
      note(m[2], `${file}:${line}`, m[3] ? Object.keys(JSON.parse(m[3])) : []);
    }
  }
  return used;
}

/** CLDR's plural categories: a selector keyed by these (or numbers) takes a number. */
const PLURAL_CATEGORIES = new Set(['zero', 'one', 'two', 'few', 'many', 'other']);

/**
 * How a message uses each of its variables: 'number' (a plural selector or
 * NUMBER()), 'date' (DATETIME()), 'string', or the keys of a selector that
 * chooses among words (`{ $kind -> [tag] … [bin] … }`), each key a sample.
 */
function variableKinds(entry) {
  const kinds = new Map();
  class Kinds extends Visitor {
    visitSelectExpression(node) {
      if (node.selector.type === 'VariableReference') {
        const keys = node.variants.map((variant) => variant.key);
        const plural = keys.every((key) => key.type === 'NumberLiteral' || PLURAL_CATEGORIES.has(key.name));
        kinds.set(node.selector.id.name, plural ? 'number' : keys.map((key) => key.name ?? key.value));
      }
      this.genericVisit(node);
    }
    visitFunctionReference(node) {
      const kind = node.id.name === 'DATETIME' ? 'date' : node.id.name === 'NUMBER' ? 'number' : null;
      for (const arg of node.arguments.positional) {
        if (kind && arg.type === 'VariableReference') kinds.set(arg.id.name, kind);
      }
      this.genericVisit(node);
    }
    visitVariableReference(node) {
      const kind = kinds.get(node.id.name);
      if (!kind) kinds.set(node.id.name, 'string');
    }
  }
  new Kinds().visit(entry);
  return kinds;
}

/** A representative value of each kind: plural-sensitive numbers, a real date, a code-like string. */
const SAMPLES = {
  number: [0, 1, 2, 5, 22, 1234.5],
  date: [new Date(Date.UTC(2026, 11, 6, 5, 30))],
  string: ['HH-0042'],
};

/** The messages of one locale: the parsed files, their entries and a bundle. */
function readLocale(dir, locale) {
  const problems = [];
  const messages = new Map();
  const bundle = new FluentBundle(locale, { useIsolating: false });
  const files = readdirSync(join(dir, locale)).filter((name) => name.endsWith('.ftl')).sort();
  if (files.length === 0) problems.push(`${locale}: no .ftl file in ${join(dir, locale)}`);
  for (const name of files) {
    const path = join(dir, locale, name);
    const text = readFileSync(path, 'utf8');
    const ast = new FluentParser({ withSpans: true }).parse(text);
    for (const entry of ast.body) {
      if (entry.type === 'Junk') {
        const line = text.slice(0, entry.span.start).split('\n').length;
        const why = entry.annotations.map((a) => `${a.code} ${a.message}`).join('; ');
        problems.push(`${path}:${line}: does not parse: ${why}`);
      } else if (entry.type === 'Message') {
        const id = entry.id.name;
        if (messages.has(id)) problems.push(`${path}: ${id} twice`);
        messages.set(id, { entry, file: path, attributes: entry.attributes.map((a) => a.id.name).sort() });
      }
    }
    for (const err of bundle.addResource(new FluentResource(text))) problems.push(`${path}: ${err.message}`);
  }
  return { problems, messages, bundle };
}

/** Formats `id` (value and every attribute) with every combination of sample values; the Fluent errors. */
function formatErrors(bundle, id, names, kinds) {
  const message = bundle.getMessage(id);
  const patterns = [['value', message.value], ...Object.entries(message.attributes)].filter(([, p]) => p);
  const errors = [];
  const samplesOf = (name) => {
    const kind = kinds.get(name) ?? 'string';
    return Array.isArray(kind) ? kind : SAMPLES[kind];
  };
  const variants = Math.max(1, ...names.map((name) => samplesOf(name).length));
  for (let v = 0; v < variants; v += 1) {
    const args = {};
    for (const name of names) {
      const samples = samplesOf(name);
      args[name] = samples[v % samples.length];
    }
    for (const [part, pattern] of patterns) {
      const found = [];
      const out = bundle.formatPattern(pattern, args, found);
      for (const err of found) errors.push(`${part} with ${JSON.stringify(args)}: ${err.message ?? err}`);
      if (typeof out !== 'string' || out.trim() === '') errors.push(`${part} with ${JSON.stringify(args)}: formats to nothing`);
    }
  }
  return errors;
}

/**
 * Checks one surface: `{ name, catalogues, sources, dynamic }` where
 * `catalogues` is the folder holding `<locale>/*.ftl`, `sources` the files or
 * folders whose code names the messages, and `dynamic` the ids built at run
 * time (see the top of this file). Returns a report `{ messages, problems,
 * perLocale }`; `problems` is empty when the surface is whole.
 */
export function checkSurface({ name, catalogues, sources, dynamic = [], locales = LOCALES }) {
  const problems = [];
  const used = usedIds(sources);
  for (const id of dynamic) if (!used.has(id)) used.set(id, [{ where: 'built at run time', args: null }]);
  const read = Object.fromEntries(locales.map((locale) => [locale, readLocale(catalogues, locale)]));
  for (const locale of locales) problems.push(...read[locale].problems);
  const reference = read[locales[0]].messages;
  for (const locale of locales) {
    const { messages, bundle } = read[locale];
    for (const [id, uses] of used) {
      if (!messages.has(id)) {
        problems.push(`${name}/${locale}: ${id} is used (${uses[0].where}) but missing`);
        continue;
      }
      const want = reference.get(id)?.attributes ?? [];
      const have = messages.get(id).attributes;
      if (want.join() !== have.join()) problems.push(`${name}/${locale}: ${id} has attributes [${have}], ${locales[0]} has [${want}]`);
      const kinds = variableKinds(messages.get(id).entry);
      const calls = uses.filter((use) => use.args !== null);
      const argSets = calls.length > 0 ? calls.map((use) => use.args) : [[...kinds.keys()]];
      const seen = new Set();
      for (const names of argSets) {
        const key = [...names].sort().join();
        if (seen.has(key)) continue;
        seen.add(key);
        for (const err of formatErrors(bundle, id, names, kinds)) problems.push(`${name}/${locale}: ${id} (${uses[0].where}): ${err}`);
      }
    }
    for (const [id, { file }] of messages) {
      if (!used.has(id)) problems.push(`${name}/${locale}: ${id} (${relative(process.cwd(), file)}) is used by nothing`);
    }
  }
  const perLocale = Object.fromEntries(locales.map((locale) => [locale, read[locale].messages.size]));
  return { name, messages: reference.size, used: used.size, perLocale, problems };
}
