//! Every input of the fuzz targets' committed corpus (`fuzz/corpus/TARGET/`),
//! replayed through the entry point its target calls: the inputs that found
//! a crash stay fixed, and the coverage the fuzzer reached stays checked by
//! `cargo test` on stable.

use std::path::{Path, PathBuf};

use stockhop_site::fuzz;

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no input", dir.display());
    files
}

/// Runs `entry` on every input of `target`'s corpus, naming the file of the
/// first that fails.
fn replay(target: &str, entry: fn(&[u8])) {
    for path in corpus(target) {
        let data = std::fs::read(&path).expect("a corpus file reads");
        if std::panic::catch_unwind(|| entry(&data)).is_err() {
            panic!("{target}: {} fails", path.display());
        }
    }
}

#[test]
fn terminal_request_corpus_replays_clean() {
    replay("terminal_request", fuzz::terminal_request);
}

#[test]
fn framed_stream_corpus_replays_clean() {
    replay("framed_stream", fuzz::framed_stream);
}

#[test]
fn zebra_report_corpus_replays_clean() {
    replay("zebra_report", fuzz::zebra_report);
}

#[test]
fn sync_body_corpus_replays_clean() {
    replay("sync_body", fuzz::sync_body);
}

#[test]
fn terminal_config_corpus_replays_clean() {
    replay("terminal_config", fuzz::terminal_config);
}

#[test]
fn csv_import_corpus_replays_clean() {
    replay("csv_import", fuzz::csv_import);
}
