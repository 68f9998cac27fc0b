//! `stockhop-sim`: a deterministic simulation of handhelds, operators, a
//! faulty network and the site ledger, one world per seed.
//!
//! The handhelds run the shipped queue runtime (`stockhop::runtime`) on a
//! single-threaded pool (`device.rs`) over a model of IndexedDB's
//! durability (`store.rs`); the ledger is the
//! real ledger code on a real SQLite file (`ledger.rs`); fixed terminals
//! push through the real listener queue and forwarder (`terminal.rs`); the world
//! (`world.rs`) draws every fault from the seed and keeps its own clock, so
//! `--seeds 1 --from SEED` replays a run exactly. A violation prints the
//! seed, the invariant (`check.rs`) and the shortest trace that still
//! breaks it, and the run exits non-zero. The last line reads
//! `sim: N seeds from S, V violations`. `--plant BUG` plants a known bug
//! in the handheld's runtime (`stockhop::runtime::plant`) to show a seed
//! that catches it.

mod check;
mod clock;
mod device;
mod ledger;
mod store;
mod terminal;
mod world;

use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use stockhop::runtime::plant::{plant, Bug};

use world::{Run, World};

#[derive(Parser)]
#[command(
    name = "stockhop-sim",
    about = "Seeded simulation of handhelds, network and ledger"
)]
struct Args {
    /// How many seeds to run.
    #[arg(long, default_value_t = 100)]
    seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    from: u64,
    /// Print every seed's trace, not only a failing one's.
    #[arg(long)]
    verbose: bool,
    /// Plant a known bug in the handheld's runtime, to see the simulation
    /// catch it: later-seq-first, delete-on-4xx or ack-before-commit.
    #[arg(long, value_parser = planted_bug)]
    plant: Option<Bug>,
}

fn planted_bug(name: &str) -> Result<Bug, String> {
    Bug::ALL
        .into_iter()
        .find(|bug| bug.name() == name)
        .ok_or_else(|| {
            let names: Vec<_> = Bug::ALL.iter().map(|bug| bug.name()).collect();
            format!("no such bug; one of {}", names.join(", "))
        })
}

/// A directory for SQLite files: in memory-backed storage where the
/// machine has it, since a campaign commits millions of times.
fn scratch() -> anyhow::Result<tempfile::TempDir> {
    let shm = std::path::Path::new("/dev/shm");
    Ok(if shm.is_dir() {
        tempfile::tempdir_in(shm)?
    } else {
        tempfile::tempdir()?
    })
}

/// The site database as `serve` creates it (migrated, empty), made once
/// a process: every seed's ledger and listener files start as copies.
fn template() -> anyhow::Result<&'static std::path::Path> {
    static TEMPLATE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    if TEMPLATE.get().is_none() {
        let dir = scratch()?;
        let db = stockhop_site::store::db::Db::open(dir.path())?;
        drop(db);
        let _ = TEMPLATE.set(dir);
    }
    let dir = TEMPLATE.get().expect("set above");
    Ok(Box::leak(
        dir.path()
            .join(stockhop_site::store::db::DB_FILE)
            .into_boxed_path(),
    ))
}

fn run_seed(seed: u64, max_operations: Option<usize>) -> anyhow::Result<Run> {
    // A fresh directory a seed, its files copies of the template.
    let dir = scratch()?;
    let template = template()?;
    for file in [world::LEDGER_FILE, world::LISTENER_FILE] {
        std::fs::copy(template, dir.path().join(file))?;
    }
    World::new(seed, dir.path(), max_operations)?.run()
}

/// The fewest operator actions with which `seed` still breaks
/// `invariant`: the shortest trace to read.
fn shrink(seed: u64, invariant: &str, operations: usize) -> anyhow::Result<(usize, Run)> {
    let breaks = |n: usize| -> anyhow::Result<Option<Run>> {
        let run = run_seed(seed, Some(n))?;
        Ok(run
            .violations
            .iter()
            .any(|v| v.invariant == invariant)
            .then_some(run))
    };
    let (mut low, mut high) = (0usize, operations);
    let mut best = breaks(high)?.expect("the full run breaks the invariant");
    while low + 1 < high {
        let mid = (low + high) / 2;
        match breaks(mid)? {
            Some(run) => {
                high = mid;
                best = run;
            }
            None => low = mid,
        }
    }
    Ok((high, best))
}

/// Most worlds run at once: one a core, each single-threaded.
const WORKERS_MAX: usize = 8;

/// Runs seeds `from..end`, one world a thread on as many cores as there
/// are (each world alone is single-threaded and deterministic), and yields
/// their runs in seed order as they finish.
fn parallel_runs(
    from: u64,
    end: u64,
    bug: Option<Bug>,
) -> impl Iterator<Item = anyhow::Result<Run>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(WORKERS_MAX);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(from));
    let (sender, receiver) = std::sync::mpsc::channel();
    for _ in 0..workers {
        let next = std::sync::Arc::clone(&next);
        let sender = sender.clone();
        std::thread::spawn(move || loop {
            plant(bug);
            let seed = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if seed >= end || sender.send((seed, run_seed(seed, None))).is_err() {
                return;
            }
        });
    }
    drop(sender);
    let mut finished = std::collections::BTreeMap::new();
    let mut due = from;
    std::iter::from_fn(move || {
        while due < end {
            if let Some(run) = finished.remove(&due) {
                due += 1;
                return Some(run);
            }
            let (seed, run) = receiver.recv().ok()?;
            finished.insert(seed, run);
        }
        None
    })
}

fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let started = Instant::now();
    let mut violations = 0u64;
    let mut captures = 0u64;
    let mut requests = 0u64;
    let mut reads = 0u64;
    let mut forwards = 0u64;
    let end = args.from.saturating_add(args.seeds);
    plant(args.plant);
    let runs = parallel_runs(args.from, end, args.plant);
    for (seed, run) in (args.from..end).zip(runs) {
        let run = run?;
        captures += run.stats.captures;
        requests += run.stats.requests;
        reads += run.stats.reads;
        forwards += run.stats.forwards;
        if args.verbose {
            for line in &run.trace {
                println!("seed {seed}: {line}");
            }
        }
        if run.violations.is_empty() {
            continue;
        }
        violations += run.violations.len() as u64;
        let first = &run.violations[0];
        println!(
            "sim: seed {seed} breaks {}: {}",
            first.invariant, first.detail
        );
        for other in &run.violations[1..] {
            println!(
                "sim: seed {seed} also breaks {}: {}",
                other.invariant, other.detail
            );
        }
        let (operations, shortest) = shrink(seed, first.invariant, run.stats.operations)?;
        println!(
            "sim: seed {seed}: the shortest trace that breaks {} ({operations} operator actions):",
            first.invariant
        );
        for line in &shortest.trace {
            println!("  {line}");
        }
        if let Some(v) = shortest
            .violations
            .iter()
            .find(|v| v.invariant == first.invariant)
        {
            println!("  => {}: {}", v.invariant, v.detail);
        }
        let planted = args
            .plant
            .map(|bug| format!(" --plant {}", bug.name()))
            .unwrap_or_default();
        println!("sim: replay with `cargo xtask sim --seeds 1 --from {seed}{planted}`");
    }
    let elapsed = started.elapsed().as_secs_f64();
    eprintln!(
        "sim: {captures} captures, {requests} requests, {reads} terminal reads, {forwards} forwarded batches in {elapsed:.1} s ({:.0} seeds/s)",
        args.seeds as f64 / elapsed.max(1e-9)
    );
    println!(
        "sim: {} seeds from {}, {violations} violations",
        args.seeds, args.from
    );
    Ok(if violations == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
