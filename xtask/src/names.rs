//! Short import and export names for the shipped module.
//!
//! wasm-bindgen names every JS function the module imports after the
//! binding and a 16-digit hash (`__wbg_getRandomValues_5d8c030b527203a6`),
//! and the module carries each name in its import section: ~150 imports,
//! ~7 KB of the release module, the hashes incompressible. This step gives
//! each import a short name (`a`, `b`, …, `aa`, …) in the module and renames
//! the same keys in the JS glue wasm-bindgen wrote beside it, where the glue
//! builds the imports object. The module name every import repeats
//! (`./stockhop_bg.js`, 2 KB over 150 imports) becomes a short one too, as
//! does its quoted key in the glue.
//!
//! Exports get short names the same way (~700 B: closure entry points are
//! named after their hash too), and the glue's `wasm.<name>` accesses are
//! renamed with them. The glue's own JS exports (`mintKey`, the
//! `ServiceWorker` class) keep their names: only the module's raw exports
//! object, which `init()` also returns, changes its keys.
//!
//! The rewrite is exact or it fails: every import name must appear in the
//! glue as a whole identifier, and every export the glue names must be
//! named as `wasm.<name>`, or the build stops (a glue whose shape this step
//! does not know is not shipped half-renamed).

use std::collections::{HashMap, HashSet};

use anyhow::{bail, Context, Result};

/// Section id of the import section (WebAssembly core spec, 5.5.2).
const IMPORT_SECTION: u8 = 2;
/// Section id of the export section (WebAssembly core spec, 5.5.10).
const EXPORT_SECTION: u8 = 7;
/// `\0asm` and version 1.
const HEADER: [u8; 8] = [0, b'a', b's', b'm', 1, 0, 0, 0];
/// How the glue reaches the module's exports: `wasm.<export>`.
const EXPORTS_OBJECT: &str = "wasm";

/// The renamed module and glue.
#[derive(Debug)]
pub struct Shortened {
    pub module: Vec<u8>,
    pub glue: String,
    /// How many imports were renamed.
    pub imports: usize,
    /// How many exports were renamed.
    pub exports: usize,
}

/// Renames every import and export of `wasm` and the matching names in
/// `glue`.
pub fn shorten(wasm: &[u8], glue: &str) -> Result<Shortened> {
    if wasm.get(..8) != Some(&HEADER[..]) {
        bail!("not a version-1 WebAssembly module");
    }
    let mut out = HEADER.to_vec();
    let mut imports: Vec<(String, String)> = Vec::new();
    let mut exports: Vec<(String, String)> = Vec::new();
    let mut modules: Vec<(String, String)> = Vec::new();
    let mut at = 8;
    while at < wasm.len() {
        let id = wasm[at];
        let mut cursor = Cursor {
            bytes: wasm,
            at: at + 1,
        };
        let size = cursor.u32().context("section size")? as usize;
        let start = cursor.at;
        let end = start
            .checked_add(size)
            .filter(|&end| end <= wasm.len())
            .context("a section runs past the module's end")?;
        let section = &wasm[start..end];
        let renamed = match id {
            IMPORT_SECTION => Some(rename_imports(section, &mut imports, &mut modules)?),
            EXPORT_SECTION => Some(rename_exports(section, &mut exports)?),
            _ => None,
        };
        match renamed {
            Some(payload) => {
                out.push(id);
                write_u32(&mut out, payload.len() as u32);
                out.extend(payload);
            }
            None => out.extend(&wasm[at..end]),
        }
        at = end;
    }
    let mut glue = rename_in_glue(glue, &imports, &exports)?;
    for (long, short) in &modules {
        let quoted = format!("\"{long}\":");
        if !glue.contains(&quoted) {
            bail!("import module `{long}` is not a key in the JS glue: its shape is not the one this build knows");
        }
        glue = glue.replace(&quoted, &format!("\"{short}\":"));
    }
    Ok(Shortened {
        module: out,
        glue,
        imports: imports.len(),
        exports: exports.len(),
    })
}

/// The import section with short field names; each rename is recorded.
fn rename_imports(
    section: &[u8],
    renames: &mut Vec<(String, String)>,
    modules: &mut Vec<(String, String)>,
) -> Result<Vec<u8>> {
    let mut field_names = ShortNames::default();
    let mut module_names = ShortNames::default();
    rewrite_entries(section, "import", |cursor, out| {
        let module = cursor.name().context("import module name")?;
        let field = cursor.name().context("import field name")?;
        let desc_start = cursor.at;
        cursor.skip_import_desc()?;
        let short = field_names.next().expect("names never run out");
        let module = match modules.iter().find(|(long, _)| long == module) {
            Some((_, short)) => short.clone(),
            None => {
                let short = module_names.next().expect("names never run out");
                modules.push((module.to_owned(), short.clone()));
                short
            }
        };
        write_name(out, &module);
        write_name(out, &short);
        out.extend(&section[desc_start..cursor.at]);
        renames.push((field.to_owned(), short));
        Ok(())
    })
}

/// The export section with short names; each rename is recorded.
fn rename_exports(section: &[u8], renames: &mut Vec<(String, String)>) -> Result<Vec<u8>> {
    let mut names = ShortNames::default();
    rewrite_entries(section, "export", |cursor, out| {
        let name = cursor.name().context("export name")?;
        let desc_start = cursor.at;
        cursor.byte().context("export kind")?;
        cursor.u32().context("export index")?;
        let short = names.next().expect("names never run out");
        write_name(out, &short);
        out.extend(&section[desc_start..cursor.at]);
        renames.push((name.to_owned(), short));
        Ok(())
    })
}

/// Rewrites a section that is a vector of entries (`what`s): its count,
/// then each entry as `entry` reads it from the cursor and writes it out.
/// Bytes after the last entry are refused.
fn rewrite_entries<'a>(
    section: &'a [u8],
    what: &str,
    mut entry: impl FnMut(&mut Cursor<'a>, &mut Vec<u8>) -> Result<()>,
) -> Result<Vec<u8>> {
    let mut cursor = Cursor {
        bytes: section,
        at: 0,
    };
    let count = cursor.u32().with_context(|| format!("{what} count"))?;
    let mut out = Vec::with_capacity(section.len());
    write_u32(&mut out, count);
    for _ in 0..count {
        entry(&mut cursor, &mut out)?;
    }
    if cursor.at != section.len() {
        bail!("the {what} section has bytes after its last {what}");
    }
    Ok(out)
}

/// Short names in order: `a` … `Z`, then `aa`, `ab`, …: JS identifiers of
/// letters, never a reserved word (the two-letter `do`, `if` and `in` are
/// skipped).
#[derive(Default)]
struct ShortNames {
    /// The next name's number in bijective base 52.
    next: usize,
}

impl Iterator for ShortNames {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        const RESERVED: [&str; 3] = ["do", "if", "in"];
        loop {
            let mut name = Vec::new();
            let mut k = self.next;
            loop {
                name.push(LETTERS[k % LETTERS.len()]);
                k /= LETTERS.len();
                if k == 0 {
                    break;
                }
                k -= 1;
            }
            name.reverse();
            self.next += 1;
            let name = String::from_utf8(name).expect("ASCII letters");
            if !RESERVED.contains(&name.as_str()) {
                return Some(name);
            }
        }
    }
}

/// Renames, in one pass over the glue, each import's key (as a whole
/// identifier) and each `wasm.<export>` access.
///
/// Every import must be found. A name found where it is not a key is left
/// to wasm-bindgen's shape, which writes each import once, as a key. An
/// export named in the glue only bare is the glue's own JS export of the
/// same name (`export function mintKey`) unless the glue never reaches it
/// as `wasm.<export>`: then it reaches it some other way this step does not
/// know (`const { mintKey } = wasm`) and the build stops, as it does for
/// `wasm[…]`. An export the glue never names is left to whoever reads the
/// exports object.
fn rename_in_glue(
    glue: &str,
    imports: &[(String, String)],
    exports: &[(String, String)],
) -> Result<String> {
    let by_long = |renames: &[(String, String)]| -> HashMap<String, String> {
        renames.iter().cloned().collect()
    };
    let (imports_by_long, exports_by_long) = (by_long(imports), by_long(exports));
    let mut found: HashSet<&str> = HashSet::new();
    let mut accessed: HashSet<&str> = HashSet::new();
    let mut bare: HashSet<&str> = HashSet::new();
    let mut out = String::with_capacity(glue.len());
    let mut rest = glue;
    while let Some(start) = rest.find(is_ident) {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        if let Some(short) = exports_by_long.get(word) {
            if on_exports_object(&out) {
                out.push_str(short);
                accessed.insert(word);
                continue;
            }
            bare.insert(word);
        }
        match imports_by_long.get(word) {
            Some(short) => {
                out.push_str(short);
                found.insert(word);
            }
            None => out.push_str(word),
        }
    }
    out.push_str(rest);
    if let Some((long, _)) = imports
        .iter()
        .find(|(long, _)| !found.contains(long.as_str()))
    {
        bail!("import `{long}` is not in the JS glue: its shape is not the one this build knows");
    }
    if glue.contains(&format!("{EXPORTS_OBJECT}[")) {
        bail!("the JS glue indexes the module's exports (`{EXPORTS_OBJECT}[`): its shape is not the one this build knows");
    }
    if let Some(long) = bare.iter().find(|long| !accessed.contains(*long)) {
        bail!("export `{long}` is in the JS glue but never as `{EXPORTS_OBJECT}.{long}`: its shape is not the one this build knows");
    }
    Ok(out)
}

/// Whether the glue written so far ends with `wasm.`, the exports object
/// (and not `xwasm.` or `a.wasm.`).
fn on_exports_object(before: &str) -> bool {
    before
        .strip_suffix('.')
        .and_then(|before| before.strip_suffix(EXPORTS_OBJECT))
        .is_some_and(|before| !before.ends_with(|c: char| is_ident(c) || c == '.'))
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn byte(&mut self) -> Result<u8> {
        let byte = *self.bytes.get(self.at).context("unexpected end")?;
        self.at += 1;
        Ok(byte)
    }

    /// An unsigned LEB128 number of at most 32 bits.
    fn u32(&mut self) -> Result<u32> {
        let mut value: u64 = 0;
        for shift in (0..35).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return u32::try_from(value).context("a number wider than 32 bits");
            }
        }
        bail!("a number longer than 5 bytes")
    }

    fn name(&mut self) -> Result<&'a str> {
        let len = self.u32()? as usize;
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .context("a name runs past its section")?;
        let name = std::str::from_utf8(&self.bytes[self.at..end]).context("a name is not UTF-8")?;
        self.at = end;
        Ok(name)
    }

    fn limits(&mut self) -> Result<()> {
        let flags = self.byte()?;
        self.u32()?;
        if flags & 1 != 0 {
            self.u32()?;
        }
        Ok(())
    }

    /// Skips an import's description: function, table, memory, global or tag.
    fn skip_import_desc(&mut self) -> Result<()> {
        match self.byte()? {
            0 => {
                self.u32()?;
            }
            1 => {
                self.byte()?;
                self.limits()?;
            }
            2 => self.limits()?,
            3 => {
                self.byte()?;
                self.byte()?;
            }
            4 => {
                self.byte()?;
                self.u32()?;
            }
            kind => bail!("an import of unknown kind {kind:#x}"),
        }
        Ok(())
    }
}

fn write_u32(out: &mut Vec<u8>, mut value: u32) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn write_name(out: &mut Vec<u8>, name: &str) {
    write_u32(out, name.len() as u32);
    out.extend(name.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    type Entry<'a> = (&'a str, &'a str, &'a [u8]);

    /// A module with a type section, the given imports (module, field,
    /// description), the given exports (name, kind and index) and a custom
    /// section after them.
    fn module(imports: &[Entry], exports: &[(&str, &[u8])]) -> Vec<u8> {
        let mut wasm = HEADER.to_vec();
        // Type section: one type, () -> ().
        wasm.extend([1, 4, 1, 0x60, 0, 0]);
        let mut section = Vec::new();
        write_u32(&mut section, imports.len() as u32);
        for (module, field, desc) in imports {
            write_name(&mut section, module);
            write_name(&mut section, field);
            section.extend(*desc);
        }
        wasm.push(IMPORT_SECTION);
        write_u32(&mut wasm, section.len() as u32);
        wasm.extend(section);
        if !exports.is_empty() {
            let mut section = Vec::new();
            write_u32(&mut section, exports.len() as u32);
            for (name, desc) in exports {
                write_name(&mut section, name);
                section.extend(*desc);
            }
            wasm.push(EXPORT_SECTION);
            write_u32(&mut wasm, section.len() as u32);
            wasm.extend(section);
        }
        // A custom section named "x" holding one byte.
        wasm.extend([0, 3, 1, b'x', 7]);
        wasm
    }

    const FUNC: &[u8] = &[0, 0];
    const MEMORY: &[u8] = &[2, 1, 1, 200, 1];
    /// Export descriptions: function 0, function 130 (a two-byte index),
    /// memory 0, global 1.
    const FUNC_0: &[u8] = &[0, 0];
    const FUNC_130: &[u8] = &[0, 0x82, 0x01];
    const MEMORY_0: &[u8] = &[2, 0];
    const GLOBAL_1: &[u8] = &[3, 1];

    #[test]
    fn renames_module_imports_and_glue_keys_together() {
        let wasm = module(
            &[
                ("./m.js", "__wbg_now_0123456789abcdef", FUNC),
                ("./m.js", "__wbg_now_0123456789abcdef0", FUNC),
                ("./m.js", "memory", MEMORY),
            ],
            &[],
        );
        let glue = "const i = {\n  __wbg_now_0123456789abcdef: function() {},\n  \
                    __wbg_now_0123456789abcdef0: function() {},\n  memory: m,\n};\n\
                    return { \"./m.js\": i };\nwasm.memory_size();";
        let out = shorten(&wasm, glue).unwrap();
        assert_eq!((out.imports, out.exports), (3, 0));
        assert_eq!(
            out.module,
            module(
                &[("a", "a", FUNC), ("a", "b", FUNC), ("a", "c", MEMORY)],
                &[]
            )
        );
        assert_eq!(
            out.glue,
            "const i = {\n  a: function() {},\n  b: function() {},\n  c: m,\n};\n\
             return { \"a\": i };\nwasm.memory_size();"
        );
    }

    #[test]
    fn renames_exports_where_the_glue_reaches_them_through_wasm() {
        let wasm = module(
            &[("./m.js", "__wbg_now_0123456789abcdef", FUNC)],
            &[
                ("memory", MEMORY_0),
                ("mintKey", FUNC_0),
                (
                    "wasm_bindgen__convert__closures_____invoke__h0123456789abcdef",
                    FUNC_130,
                ),
                ("__abort_handler", GLOBAL_1),
            ],
        );
        let glue = "imports = { \"./m.js\": { __wbg_now_0123456789abcdef: f } };\n\
                    export function mintKey() { return wasm.mintKey(); }\n\
                    const call = (a) => wasm.wasm_bindgen__convert__closures_____invoke__h0123456789abcdef(a);\n\
                    view = wasm.memory.buffer; other.wasm.memory = 1; xwasm.memory = 2;";
        let out = shorten(&wasm, glue).unwrap();
        assert_eq!((out.imports, out.exports), (1, 4));
        assert_eq!(
            out.module,
            module(
                &[("a", "a", FUNC)],
                &[
                    ("a", MEMORY_0),
                    ("b", FUNC_0),
                    ("c", FUNC_130),
                    ("d", GLOBAL_1)
                ],
            )
        );
        assert_eq!(
            out.glue,
            "imports = { \"a\": { a: f } };\n\
             export function mintKey() { return wasm.b(); }\n\
             const call = (a) => wasm.c(a);\n\
             view = wasm.a.buffer; other.wasm.memory = 1; xwasm.memory = 2;"
        );
    }

    #[test]
    fn an_export_the_glue_reaches_another_way_stops_the_build() {
        let wasm = module(&[], &[("mintKey", FUNC_0)]);
        let err = shorten(&wasm, "const { mintKey } = wasm; mintKey();").unwrap_err();
        assert!(err.to_string().contains("mintKey"), "{err}");
        let err = shorten(&wasm, "wasm[\"mintKey\"]();").unwrap_err();
        assert!(err.to_string().contains("wasm["), "{err}");
    }

    #[test]
    fn a_name_missing_from_the_glue_stops_the_build() {
        let wasm = module(&[("./m.js", "__wbg_gone_0123456789abcdef", FUNC)], &[]);
        let err =
            shorten(&wasm, "{ \"./m.js\": { __wbg_gone_0123456789abcdef0: f } }").unwrap_err();
        assert!(
            err.to_string().contains("__wbg_gone_0123456789abcdef"),
            "{err}"
        );
        let err = shorten(&wasm, "{ m: { __wbg_gone_0123456789abcdef: f } }").unwrap_err();
        assert!(err.to_string().contains("./m.js"), "{err}");
    }

    #[test]
    fn malformed_modules_are_refused() {
        assert!(shorten(b"not wasm", "").is_err());
        let mut truncated = module(&[("./m.js", "f", FUNC)], &[]);
        truncated.truncate(truncated.len() - 8);
        assert!(shorten(&truncated, "f").is_err());
        let unknown_kind = module(&[("./m.js", "f", &[9, 0])], &[]);
        assert!(shorten(&unknown_kind, "f").is_err());
        let short_export = module(&[], &[("f", &[0])]);
        assert!(shorten(&short_export, "wasm.f").is_err());
    }

    #[test]
    fn short_names_are_distinct_identifiers_and_never_reserved_words() {
        let names: Vec<String> = ShortNames::default().take(3000).collect();
        assert_eq!(&names[..3], ["a", "b", "c"]);
        assert_eq!(names[52], "aa");
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        for name in &names {
            assert!(name.chars().all(|c| c.is_ascii_alphabetic()), "{name}");
            assert!(!["do", "if", "in"].contains(&name.as_str()));
        }
    }
}
