//! The free space where a test run writes: reported before the run, and
//! named in the error of a step that failed on a nearly full disk.

use std::path::{Path, PathBuf};

/// checkout (about 3.4 GiB of build, up to 0.3 GiB of test cluster): with
/// less free the run says so before it starts.
const TEST_DISK_WANTED_BYTES: u64 = 5 << 30;
/// Free space under which a failed step is put down to a full disk, as a
/// build or a PostgreSQL WAL write fails on one.
const DISK_NEARLY_FULL_BYTES: u64 = 512 << 20;

/// The places a test run writes to, and how much room each has.
pub struct Disk {
    pub places: Vec<(&'static str, PathBuf)>,
}

impl Disk {
    /// Bytes free to this user on the filesystem of each place (of its
    /// nearest existing ancestor, as the build directory may not exist yet).
    fn free(&self) -> Vec<(&'static str, &Path, Option<u64>)> {
        self.places
            .iter()
            .map(|(what, path)| {
                let existing = path.ancestors().find(|p| p.exists()).unwrap_or(path);
                (*what, path.as_path(), fs4::available_space(existing).ok())
            })
            .collect()
    }

    pub fn report(&self) {
        for (what, path, free) in self.free() {
            let Some(free) = free else {
                println!(
                    "xtask: cannot tell the free space of {what} ({})",
                    path.display()
                );
                continue;
            };
            println!("xtask: {} free for {what} ({})", gib(free), path.display());
            if free < TEST_DISK_WANTED_BYTES {
                println!(
                    "xtask: warning: a whole test run from a clean checkout writes about {}; \
                     a step may fail for want of disk",
                    gib(TEST_DISK_WANTED_BYTES)
                );
            }
        }
    }

    /// `err`, with the free space of any place that is nearly full.
    pub fn explain(&self, err: anyhow::Error) -> anyhow::Error {
        let full: Vec<String> = self
            .free()
            .into_iter()
            .filter_map(|(what, path, free)| {
                let free = free.filter(|&f| f < DISK_NEARLY_FULL_BYTES)?;
                Some(format!(
                    "{what} ({}) has {} free",
                    path.display(),
                    gib(free)
                ))
            })
            .collect();
        if full.is_empty() {
            return err;
        }
        err.context(format!(
            "the disk is nearly full: {}; a build or a database write that fails there fails the step",
            full.join(", ")
        ))
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / f64::from(1u32 << 30))
}
