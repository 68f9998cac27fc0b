//! The site crate's architecture, checked: the layering of its rooms
//! (`site/layers.toml`, bottom up: a file imports its own layer or one
//! below, never one above) and the tidiness rules that keep `site/src/`
//! walkable (a handful of loose files, a `mod.rs` in every folder, no
//! source file of the core or the site past 1,000 lines).
//!
//! Imports are read as Rust tokens, so a path in a comment or a string is
//! not one; `crate::x`, `crate::{x, y}`, `super::x` and `super::{…}` are
//! resolved to the top-level module they name. Paths inside macro calls
//! are tokens too, and are read the same way.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use serde::Deserialize;

/// At most this many `.rs` files directly in `site/src/`: the rest live in
/// rooms whose folder names say what they are for.
const LOOSE_FILES_MAX: usize = 12;

/// No source file of the core (`src/`) or the site (`site/src/`) is
/// longer, in lines: past it a file does two jobs.
const SOURCE_FILE_LINES_MAX: usize = 1_000;

#[derive(Deserialize)]
struct Layers {
    layer: Vec<Layer>,
}

#[derive(Deserialize)]
struct Layer {
    name: String,
    #[allow(dead_code)]
    why: String,
    rooms: Vec<String>,
}

fn site_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Room name → (layer index, layer name), from `site/layers.toml`.
fn rooms() -> BTreeMap<String, (usize, String)> {
    let text = std::fs::read_to_string(site_dir().join("layers.toml")).unwrap();
    let layers: Layers = toml::from_str(&text).expect("site/layers.toml parses");
    let mut rooms = BTreeMap::new();
    for (index, layer) in layers.layer.iter().enumerate() {
        for room in &layer.rooms {
            let before = rooms.insert(room.clone(), (index, layer.name.clone()));
            assert!(before.is_none(), "site/layers.toml places {room} twice");
        }
    }
    rooms
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under `site/src/` (`store/db.rs` →
/// `[store, db]`, `store/mod.rs` → `[store]`, `lib.rs` → `[]`); the
/// binary's files (`main.rs`, `cli/`) are the `cli` room.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    if parts == ["main"] {
        return vec!["cli".to_owned()];
    }
    parts
}

/// The room of a module path: its first segment, `lib` for the root.
fn room_of(path: &[String]) -> String {
    path.first().cloned().unwrap_or_else(|| "lib".to_owned())
}

fn is_ident(tree: Option<&TokenTree>, name: &str) -> bool {
    matches!(tree, Some(TokenTree::Ident(ident)) if ident == name)
}

fn is_colon(tree: Option<&TokenTree>) -> bool {
    matches!(tree, Some(TokenTree::Punct(p)) if p.as_char() == ':')
}

/// The first segment of each path a `use` tree names at its top: `x` of
/// `x::y`, `x` and `y` of `{x::a, y}` (recursively into nested braces'
/// first segments only).
fn heads(tokens: &[TokenTree], at: usize) -> Vec<String> {
    match tokens.get(at) {
        Some(TokenTree::Ident(ident)) => vec![ident.to_string()],
        Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
            let inner: Vec<TokenTree> = group.stream().into_iter().collect();
            let mut out = Vec::new();
            let mut start = true;
            for (i, tree) in inner.iter().enumerate() {
                if start {
                    out.extend(heads(&inner, i));
                }
                start = matches!(tree, TokenTree::Punct(p) if p.as_char() == ',');
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Every top-level module a file's tokens import or name, with the module
/// path of the file for `super::`.
fn imported_rooms(stream: TokenStream, module: &[String], out: &mut BTreeSet<String>) {
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        if let TokenTree::Group(group) = &tokens[i] {
            imported_rooms(group.stream(), module, out);
        }
        let starts_path = i == 0 || !is_colon(tokens.get(i - 1));
        if starts_path && is_ident(tokens.get(i), "crate") {
            if is_colon(tokens.get(i + 1)) && is_colon(tokens.get(i + 2)) {
                out.extend(heads(&tokens, i + 3));
            }
        } else if starts_path && is_ident(tokens.get(i), "super") {
            // Count `super::` hops, then resolve against the file's module.
            let mut up = 0;
            let mut at = i;
            while is_ident(tokens.get(at), "super")
                && is_colon(tokens.get(at + 1))
                && is_colon(tokens.get(at + 2))
            {
                up += 1;
                at += 3;
            }
            if up > 0 {
                let kept = module.len().saturating_sub(up);
                if kept == 0 {
                    out.extend(heads(&tokens, at));
                } else {
                    out.insert(module[0].clone());
                }
            }
        }
        i += 1;
    }
}

/// Every (file, imported room) of `site/src/` that breaks the layering.
fn upward_imports() -> Vec<String> {
    let rooms = rooms();
    let src = site_dir().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap().to_owned();
        let module = module_path(&relative);
        let room = room_of(&module);
        let Some((layer, layer_name)) = rooms.get(&room) else {
            found.push(format!(
                "site/src/{}: its room `{room}` is in no layer of site/layers.toml",
                relative.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let stream = TokenStream::from_str(&text)
            .unwrap_or_else(|err| panic!("site/src/{} does not lex: {err}", relative.display()));
        // A file's own module path for `super::`: `x.rs` is module `x`, and
        // its inline modules are one deeper, which the resolution above
        // treats as still inside `x`'s room.
        let mut imported = BTreeSet::new();
        imported_rooms(stream, &module, &mut imported);
        for target in imported {
            // Names that are not rooms (a macro at the root, a re-export
            // of the root) are the root's, which every room may name.
            let Some((target_layer, target_layer_name)) = rooms.get(&target) else {
                continue;
            };
            if target_layer > layer {
                found.push(format!(
                    "site/src/{} (room `{room}`, layer {layer_name}) imports `{target}` \
                     (layer {target_layer_name}, above it)",
                    relative.display()
                ));
            }
        }
    }
    found
}

#[test]
fn no_room_imports_a_room_of_a_layer_above_it() {
    let found = upward_imports();
    assert!(
        found.is_empty(),
        "a lower room imports a higher one (site/layers.toml says which is which):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_top_level_module_stands_in_exactly_one_layer() {
    let rooms = rooms();
    let src = site_dir().join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let room = if name == "main" {
            "cli".to_owned()
        } else {
            name
        };
        if path.is_dir() || path.extension().is_some_and(|ext| ext == "rs") {
            assert!(
                rooms.contains_key(&room),
                "site/src/{} is in no layer of site/layers.toml",
                path.file_name().unwrap().to_string_lossy()
            );
        }
    }
    for room in rooms.keys() {
        let exists = src.join(room).is_dir() || src.join(format!("{room}.rs")).is_file();
        let binary = room == "cli" && src.join("main.rs").is_file();
        assert!(
            exists || binary,
            "site/layers.toml names {room}, which site/src/ lacks"
        );
    }
}

#[test]
fn the_layering_check_sees_an_upward_import_however_it_is_written() {
    let module = vec!["store".to_owned(), "db".to_owned()];
    for (source, expected) in [
        ("use crate::site::Site;", "site"),
        ("use crate::{limits, view::page};", "view"),
        ("fn f() { crate::ledger::wall_clock(); }", "ledger"),
        ("mod tests { use super::super::api::caller; }", "api"),
        (
            "fn f() { tracing::info!(x = ?crate::listener::X); }",
            "listener",
        ),
    ] {
        let mut imported = BTreeSet::new();
        imported_rooms(
            TokenStream::from_str(source).unwrap(),
            &module,
            &mut imported,
        );
        assert!(imported.contains(expected), "{source}: {imported:?}");
    }
    let mut imported = BTreeSet::new();
    let quiet = "// use crate::site::Site;\nconst S: &str = \"crate::view\";";
    imported_rooms(
        TokenStream::from_str(quiet).unwrap(),
        &module,
        &mut imported,
    );
    assert!(
        imported.is_empty(),
        "comments and strings are not imports: {imported:?}"
    );
}

#[test]
fn site_src_keeps_few_loose_files_and_every_folder_its_mod_rs() {
    let src = site_dir().join("src");
    let mut loose = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() && path.extension().is_some_and(|ext| ext == "rs") {
            loose.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    loose.sort();
    assert!(
        loose.len() <= LOOSE_FILES_MAX,
        "{} loose files in site/src/ (at most {LOOSE_FILES_MAX}): {loose:?}",
        loose.len()
    );
    fn folders(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.push(path.clone());
                folders(&path, out);
            }
        }
    }
    let mut all = Vec::new();
    folders(&src, &mut all);
    for folder in all {
        assert!(
            folder.join("mod.rs").is_file(),
            "{} has no mod.rs saying what it holds",
            folder.display()
        );
    }
}

#[test]
fn no_source_file_of_the_core_or_the_site_is_over_a_thousand_lines() {
    let mut files = Vec::new();
    rust_files(&site_dir().join("src"), &mut files);
    rust_files(&site_dir().join("../src"), &mut files);
    let mut long = Vec::new();
    for file in files {
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        if lines > SOURCE_FILE_LINES_MAX {
            long.push(format!("{} ({lines} lines)", file.display()));
        }
    }
    assert!(
        long.is_empty(),
        "over {SOURCE_FILE_LINES_MAX} lines: {}",
        long.join(", ")
    );
}
