-- Commands the site hands an iclock terminal on its heartbeat poll
-- (`GET /iclock/getrequest`), first of them the backfill: "send me your
-- attendance records of this time range again" (`DATA QUERY ATTLOG`),
-- after a listener outage or a lost batch. They live beside the
-- listener's queue, in the site's own SQLite file, whichever engine holds
-- the ledger: the listener reads them on every poll and must answer while
-- the ledger cannot be reached; the command line and the site's view
-- reach the same file.
--
-- A command is `pending` until handed out, `sent` once a poll's answer
-- carried it (handed out again when no answer came within 10 minutes),
-- then `done` or `failed` by the terminal's `devicecmd` return.
CREATE TABLE listener_commands (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    device_serial TEXT    NOT NULL,
    -- The range asked for, as instants; the line renders them in the
    -- terminal's local time.
    from_at       INTEGER NOT NULL,
    to_at         INTEGER NOT NULL CHECK (to_at > from_at),
    -- The line after `C:<id>:`, as last handed out (or as it will be).
    command       TEXT    NOT NULL,
    state         TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'done', 'failed')),
    return_code   INTEGER,
    created_at    INTEGER NOT NULL,
    sent_at       INTEGER,
    done_at       INTEGER,
    sends         INTEGER NOT NULL DEFAULT 0
) STRICT;

-- A poll finds its terminal's open commands without walking the answered.
CREATE INDEX listener_commands_open ON listener_commands (device_serial, id)
    WHERE state IN ('pending', 'sent');
CREATE INDEX listener_commands_serial ON listener_commands (device_serial, id);

-- The zone the listener reads a terminal's local times in, as it last
-- polled: what a backfill's range is written in before it is handed out.
ALTER TABLE listener_heartbeat ADD COLUMN zone TEXT;

-- Attendance out: a terminal's records by capture time, and every
-- terminal's for payroll. Partial, so a portal's tag reads cost nothing.
CREATE INDEX terminal_events_attendance_device ON terminal_events (device_serial, occurred_at)
    WHERE kind = 'attendance';
CREATE INDEX terminal_events_attendance ON terminal_events (occurred_at)
    WHERE kind = 'attendance';
