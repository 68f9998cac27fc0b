//! Bugs the simulation plants in this runtime, one at a time, to show it
//! catches each. Planting needs the `planted-bugs` feature, which only
//! the simulation enables: in every other build [`planted`] is `false`
//! and the bug's code is compiled out.

/// A bug the simulation can plant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bug {
    /// After a restart the drain sends a session's items latest
    /// `client_seq` first.
    LaterSeqFirstAfterRestart,
    /// A 4xx answer deletes its item instead of keeping it rejected.
    DeleteOn4xx,
    /// A capture group is acknowledged before its transaction commits.
    AckBeforeCommit,
}

impl Bug {
    pub const ALL: [Bug; 3] = [
        Bug::LaterSeqFirstAfterRestart,
        Bug::DeleteOn4xx,
        Bug::AckBeforeCommit,
    ];

    /// Its name on the simulation's command line.
    pub fn name(self) -> &'static str {
        match self {
            Bug::LaterSeqFirstAfterRestart => "later-seq-first",
            Bug::DeleteOn4xx => "delete-on-4xx",
            Bug::AckBeforeCommit => "ack-before-commit",
        }
    }
}

#[cfg(feature = "planted-bugs")]
thread_local! {
    static PLANTED: std::cell::Cell<Option<Bug>> = const { std::cell::Cell::new(None) };
}

/// Plants `bug` (or none) in every runtime on this thread.
#[cfg(feature = "planted-bugs")]
pub fn plant(bug: Option<Bug>) {
    PLANTED.with(|planted| planted.set(bug));
}

/// Whether `bug` is planted on this thread.
#[inline(always)]
pub fn planted(bug: Bug) -> bool {
    #[cfg(feature = "planted-bugs")]
    {
        PLANTED.with(|planted| planted.get()) == Some(bug)
    }
    #[cfg(not(feature = "planted-bugs"))]
    {
        let _ = bug;
        false
    }
}
