//! A throwaway PostgreSQL cluster on loopback for the ledger suites'
//! second run (`cargo xtask test`) or by hand (`cargo xtask postgres`):
//! initdb with trust auth in a temporary directory, a free loopback port,
//! fsync off and little WAL kept, stopped and deleted on drop and on
//! Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::process::{is_root, quiet, run};
use crate::project::Project;

impl Project {
    /// suite by hand, until Ctrl-C stops it and deletes its directory.
    pub fn postgres(&self) -> Result<()> {
        let cluster = Postgres::start(&self.ensure_postgres()?)?;
        let url = cluster.url();
        println!(
            "xtask: PostgreSQL on {url} (data in {})",
            cluster.dir.path().display()
        );
        println!("xtask: run a ledger suite on it from another shell:");
        println!(
            "  {BACKEND_VAR}=postgres {POSTGRES_URL_VAR}={url} cargo test -p stockhop-site --test site -- ledger_rules::"
        );
        println!("xtask: Ctrl-C stops it and deletes its directory");
        // The Ctrl-C handler `Postgres::start` installed stops the cluster
        // and ends the process.
        loop {
            std::thread::park();
        }
    }
}

/// The test cluster's WAL: a checkpoint at least every 96 MB written,
/// and no more than 32 MB of old segments kept for reuse.
const TEST_MAX_WAL_SIZE: &str = "96MB";
const TEST_MIN_WAL_SIZE: &str = "32MB";
/// What marks a line of the server's log worth showing when a suite
/// fails: a crash, a restart, a shutdown or a fatal error.
const SERVER_LOG_NOTABLE: &[&str] = &[
    "PANIC:",
    "FATAL:",
    "was terminated by signal",
    "terminating any other active server processes",
    "all server processes terminated",
    "database system was interrupted",
    "database system is shut down",
    "received fast shutdown request",
    "received immediate shutdown request",
    "No space left on device",
];
/// What marks a crash (and the restart it forces) in the server's log.
const SERVER_LOG_CRASH: &[&str] = &[
    "PANIC:",
    "was terminated by signal",
    "terminating any other active server processes",
    "No space left on device",
];
/// At most this many of those lines, the latest: enough to see a crash
/// and the restart after it without burying the test output.
const SERVER_LOG_LINES_SHOWN: usize = 40;

/// Which backend the ledger suites run on (`postgres`; SQLite unset).
pub const BACKEND_VAR: &str = "STOCKHOP_TEST_BACKEND";
/// The throwaway cluster's admin URL, for the suites to create their
/// databases on.
pub const POSTGRES_URL_VAR: &str = "STOCKHOP_TEST_POSTGRES";
/// Where Debian keeps each PostgreSQL major version's server programs.
const DEBIAN_POSTGRES_DIR: &str = "/usr/lib/postgresql";
/// The major version the site's ledger targets, taken first when a
/// machine has several.
const POSTGRES_MAJOR: &str = "15";
/// The cluster's superuser (initdb `-U`), the same whoever runs xtask.
const POSTGRES_ROLE: &str = "postgres";
/// The system account the server runs as when xtask is root (initdb
/// refuses root); Debian's package creates it.
const POSTGRES_OS_USER: &str = "postgres";
/// Tries at starting the server: the free port picked may be taken by
/// another process before the server binds it.
const POSTGRES_START_TRIES: u32 = 5;

/// The programs of the newest PostgreSQL installed: Debian's
/// `/usr/lib/postgresql/15/bin` first, else the highest version there,
/// else the directory of an `initdb` on PATH (other systems).
pub fn postgres_bin_dir() -> Option<PathBuf> {
    let debian = Path::new(DEBIAN_POSTGRES_DIR);
    let preferred = debian.join(POSTGRES_MAJOR).join("bin");
    if preferred.join("initdb").is_file() {
        return Some(preferred);
    }
    let newest = std::fs::read_dir(debian).ok().and_then(|versions| {
        versions
            .flatten()
            .filter_map(|entry| {
                let major: u32 = entry.file_name().to_str()?.parse().ok()?;
                let bin = entry.path().join("bin");
                bin.join("initdb").is_file().then_some((major, bin))
            })
            .max()
            .map(|(_, bin)| bin)
    });
    newest.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find(|dir| dir.join("initdb").is_file())
    })
}

/// A PostgreSQL server run by xtask: its programs, data directory and
/// the account it runs as. Cloned into the Ctrl-C handler.
#[derive(Clone)]
struct Server {
    bin: PathBuf,
    /// The temporary directory: the data directory `data/`, the log and
    /// the server's Unix socket.
    home: PathBuf,
    as_postgres: bool,
}

impl Server {
    /// One of the server's programs, run as the server's account from
    /// its directory (the account may not enter the caller's).
    fn tool(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        let mut cmd = if self.as_postgres {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", POSTGRES_OS_USER, "--"]).arg(program);
            cmd
        } else {
            Command::new(program)
        };
        cmd.current_dir(&self.home);
        cmd
    }

    fn data(&self) -> PathBuf {
        self.home.join("data")
    }

    fn log(&self) -> PathBuf {
        self.home.join("server.log")
    }

    /// Stops the server if it runs (its pid file is there).
    fn stop(&self) -> Result<()> {
        if !self.data().join("postmaster.pid").exists() {
            return Ok(());
        }
        quiet(
            self.tool("pg_ctl")
                .arg("-D")
                .arg(self.data())
                .args(["stop", "-m", "fast", "-w"]),
        )
    }
}

/// A throwaway PostgreSQL cluster on a loopback port, trusting every
/// local connection. Dropping it stops the server and deletes its
/// directory; so does Ctrl-C (or SIGTERM) while it runs.
pub struct Postgres {
    server: Server,
    port: u16,
    /// Deleted after `drop` has stopped the server.
    dir: tempfile::TempDir,
}

impl Postgres {
    pub fn start(bin: &Path) -> Result<Postgres> {
        let dir = tempfile::Builder::new()
            .prefix("stockhop-postgres-")
            .tempdir()
            .context("creating the cluster's temporary directory")?;
        let as_postgres = is_root();
        if as_postgres {
            run(Command::new("chown")
                .arg(format!("{POSTGRES_OS_USER}:"))
                .arg(dir.path()))?;
        }
        let server = Server {
            bin: bin.to_owned(),
            home: dir.path().to_owned(),
            as_postgres,
        };
        // `--no-locale`: byte-order collation, as SQLite's BINARY.
        // `--no-sync`: the cluster lives for one run.
        quiet(
            server
                .tool("initdb")
                .args(["-A", "trust", "-U", POSTGRES_ROLE, "-E", "UTF8"])
                .args(["--no-locale", "--no-sync", "-D"])
                .arg(server.data()),
        )
        .context("initdb")?;
        let mut cluster = Postgres {
            server,
            port: 0,
            dir,
        };
        let handler = cluster.server.clone();
        ctrlc::set_handler(move || {
            if let Err(err) = handler.stop() {
                eprintln!("xtask: stopping PostgreSQL: {err:#}");
            }
            let _ = std::fs::remove_dir_all(&handler.home);
            eprintln!("xtask: PostgreSQL stopped and its directory deleted");
            std::process::exit(130);
        })
        .context("installing the Ctrl-C handler")?;
        let mut tries = 0;
        loop {
            tries += 1;
            cluster.port = free_loopback_port()?;
            // fsync off: nothing in a throwaway cluster outlives the run.
            // The least WAL, and little of it kept: a run creates a
            // database for each test, and the default keeps up to 1 GB
            // of WAL beside them on what may be a nearly full disk.
            let options = format!(
                "-p {} -k '{}' -c listen_addresses=127.0.0.1 -c fsync=off \
                 -c wal_level=minimal -c max_wal_senders=0 \
                 -c max_wal_size={TEST_MAX_WAL_SIZE} -c min_wal_size={TEST_MIN_WAL_SIZE}",
                cluster.port,
                cluster.server.home.display()
            );
            let started = quiet(
                cluster
                    .server
                    .tool("pg_ctl")
                    .arg("-D")
                    .arg(cluster.server.data())
                    .arg("-l")
                    .arg(cluster.server.log())
                    .args(["-o", &options, "-w", "start"]),
            );
            match started {
                Ok(()) => return Ok(cluster),
                Err(err) if tries >= POSTGRES_START_TRIES => {
                    let log = std::fs::read_to_string(cluster.server.log()).unwrap_or_default();
                    return Err(err.context(format!("starting PostgreSQL; its log:\n{log}")));
                }
                Err(_) => {}
            }
        }
    }

    /// Drops every database the suites created (named
    /// `stockhop_t_…` by the tests' backend helper), each about 7.5 MB
    /// of template: done before the ledger suites' run on PostgreSQL and
    /// after each suite of it, so the cluster holds one suite's at most.
    pub fn drop_test_databases(&self) -> Result<()> {
        self.psql(
            "SELECT format('DROP DATABASE %I WITH (FORCE)', datname) \
             FROM pg_database WHERE datname LIKE 'stockhop\\_t\\_%' \\gexec",
        )
        .context("dropping the suites' databases")?;
        Ok(())
    }

    /// Runs `script` with psql as the admin role on the `postgres`
    /// database, stopping at the first error; its unaligned output.
    fn psql(&self, script: &str) -> Result<String> {
        use std::io::Write;
        let mut cmd = self.server.tool("psql");
        cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-U", POSTGRES_ROLE, "-h"])
            .arg(&self.server.home)
            .args(["-p", &self.port.to_string(), "-d", "postgres"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().with_context(|| format!("starting {cmd:?}"))?;
        let mut stdin = child.stdin.take().context("psql's stdin")?;
        stdin.write_all(script.as_bytes())?;
        stdin.write_all(b"\n")?;
        drop(stdin);
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!(
                "psql exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Says so when a process of the server crashed during the run, even
    /// though every suite passed (the suites wait out a restart).
    pub fn warn_of_crashes(&self) {
        let crashes = self.log_lines(SERVER_LOG_CRASH);
        if !crashes.is_empty() {
            println!(
                "xtask: warning: a PostgreSQL server process crashed during the run; from {}:\n{}",
                self.server.log().display(),
                crashes.join("\n")
            );
        }
    }

    /// `err` with what the server's log says of crashes, restarts and
    /// fatal errors, so a suite that failed because the server did can
    /// be told from one that failed on its own.
    pub fn explain(&self, err: anyhow::Error) -> anyhow::Error {
        let notable = self.log_lines(SERVER_LOG_NOTABLE);
        let shown = &notable[notable.len().saturating_sub(SERVER_LOG_LINES_SHOWN)..];
        if shown.is_empty() {
            return err.context("the PostgreSQL server logged no crash, restart or fatal error");
        }
        err.context(format!(
            "the PostgreSQL server's log ({}), its last {} crash, restart and fatal lines:\n{}",
            self.server.log().display(),
            shown.len(),
            shown.join("\n")
        ))
    }

    /// The lines of the server's log that hold any of `markers`.
    fn log_lines(&self, markers: &[&str]) -> Vec<String> {
        let log = std::fs::read_to_string(self.server.log()).unwrap_or_default();
        log.lines()
            .filter(|line| markers.iter().any(|marker| line.contains(marker)))
            .map(str::to_owned)
            .collect()
    }

    /// The admin URL the suites create their databases with.
    pub fn url(&self) -> String {
        format!(
            "postgres://{POSTGRES_ROLE}@127.0.0.1:{}/postgres",
            self.port
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Err(err) = self.server.stop() {
            eprintln!("xtask: stopping PostgreSQL: {err:#}");
        }
    }
}

/// A loopback port nothing listens on now (the system's pick, released).
fn free_loopback_port() -> Result<u16> {
    let listener =
        std::net::TcpListener::bind(("127.0.0.1", 0)).context("finding a free loopback port")?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throwaway_cluster_listens_on_loopback_drops_only_the_suites_databases_and_is_gone_after_drop(
    ) {
        let bin = postgres_bin_dir()
            .expect("PostgreSQL's initdb (`cargo xtask setup` installs Debian's postgresql)");
        let cluster = Postgres::start(&bin).unwrap();
        let home = cluster.dir.path().to_owned();
        let url = cluster.url();
        assert!(
            url.starts_with(&format!("postgres://{POSTGRES_ROLE}@127.0.0.1:")),
            "{url}"
        );
        let address = ("127.0.0.1", cluster.port);
        std::net::TcpStream::connect(address).unwrap();

        cluster
            .psql("CREATE DATABASE stockhop_t_0a1b;\nCREATE DATABASE stockhop_tx;")
            .unwrap();
        cluster.drop_test_databases().unwrap();
        let left = cluster
            .psql("SELECT datname FROM pg_database WHERE datname LIKE 'stockhop%'")
            .unwrap();
        assert_eq!(left.trim(), "stockhop_tx", "only the suites' databases go");
        let said = format!("{:#}", cluster.explain(anyhow::anyhow!("a suite failed")));
        assert!(
            said.contains("logged no crash") && said.ends_with("a suite failed"),
            "{said}"
        );

        drop(cluster);
        assert!(!home.exists(), "the directory is deleted");
        assert!(
            std::net::TcpStream::connect(address).is_err(),
            "the server is stopped"
        );
    }
}
