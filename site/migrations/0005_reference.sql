-- Reference data and the five modes: bins, units' stock facts, GRNs with
-- their lines, manifests with their units, count sessions with the
-- snapshot of the units expected in their zone. Every row the handheld
-- caches carries `ref_seq`, the value of a site-wide change counter at its
-- last change (set by the triggers below), so `GET /v1/reference` pages
-- through "everything changed after cursor N" in one ordered scan.

CREATE TABLE reference_clock (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  INTEGER NOT NULL CHECK (seq >= 0)
) STRICT;
INSERT INTO reference_clock (id, seq) VALUES (1, 0);

-- A bin, named by the text of its label.
CREATE TABLE bins (
    bin       TEXT PRIMARY KEY NOT NULL,
    zone      TEXT NOT NULL,
    location  TEXT NOT NULL,
    ref_seq   INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX bins_by_ref_seq ON bins (ref_seq);
CREATE INDEX bins_by_place ON bins (location, zone);

-- Units gain what the modes read: the SKU, the stock state and the change
-- counter. A unit that already has a bin is in stock.
ALTER TABLE units ADD COLUMN sku TEXT;
ALTER TABLE units ADD COLUMN state TEXT NOT NULL DEFAULT 'new'
    CHECK (state IN ('new', 'in_stock', 'dispatched', 'missing'));
ALTER TABLE units ADD COLUMN ref_seq INTEGER NOT NULL DEFAULT 0;
UPDATE units SET state = 'in_stock' WHERE bin IS NOT NULL;
CREATE INDEX units_by_ref_seq ON units (ref_seq);
CREATE INDEX units_by_bin ON units (bin) WHERE bin IS NOT NULL;

-- A goods received note; one line per SKU.
CREATE TABLE grns (
    grn      TEXT PRIMARY KEY NOT NULL,
    qc       TEXT NOT NULL CHECK (qc IN ('accepted', 'held', 'rejected')),
    state    TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'needs_resolution', 'complete')),
    ref_seq  INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX grns_by_ref_seq ON grns (ref_seq);

CREATE TABLE grn_lines (
    grn       TEXT NOT NULL REFERENCES grns (grn),
    sku       TEXT NOT NULL,
    expected  INTEGER NOT NULL CHECK (expected >= 0),
    received  INTEGER NOT NULL DEFAULT 0 CHECK (received >= 0),
    PRIMARY KEY (grn, sku)
) STRICT;

-- Which unit each receive scan counted, so a unit is received once.
CREATE TABLE grn_receipts (
    unit_id  INTEGER PRIMARY KEY NOT NULL REFERENCES units (unit_id),
    grn      TEXT NOT NULL REFERENCES grns (grn),
    sku      TEXT NOT NULL,
    hop_id   INTEGER NOT NULL REFERENCES hops (hop_id)
) STRICT;

-- A dispatch manifest and the units on it. Not cached by handhelds: read
-- live when dispatch verify opens.
CREATE TABLE manifests (
    manifest  TEXT PRIMARY KEY NOT NULL,
    state     TEXT NOT NULL CHECK (state IN ('draft', 'packing', 'dispatched', 'verified'))
) STRICT;

CREATE TABLE manifest_units (
    manifest  TEXT NOT NULL REFERENCES manifests (manifest),
    epc       TEXT NOT NULL,
    verified  INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
    PRIMARY KEY (manifest, epc)
) STRICT;
-- The units still to verify: a verify asks whether any is left.
CREATE INDEX manifest_units_unverified ON manifest_units (manifest) WHERE verified = 0;

-- A count session, minted by `stockhop-site count open`.
CREATE TABLE counts (
    count_no     INTEGER PRIMARY KEY AUTOINCREMENT,
    count_id     TEXT NOT NULL UNIQUE,
    location     TEXT NOT NULL,
    zone         TEXT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed', 'approved')),
    opened_at    INTEGER NOT NULL,
    closed_at    INTEGER,
    approved_at  INTEGER,
    ref_seq      INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX counts_by_ref_seq ON counts (ref_seq);
-- One count at a time per zone: two would each call the other's finds unexpected.
CREATE UNIQUE INDEX counts_one_open_per_zone ON counts (location, zone) WHERE state = 'open';

-- The zone's units when the count opened, at the version they had then.
CREATE TABLE count_expected (
    count_id      TEXT NOT NULL REFERENCES counts (count_id),
    epc           TEXT NOT NULL,
    unit_id       INTEGER NOT NULL REFERENCES units (unit_id),
    unit_version  INTEGER NOT NULL,
    PRIMARY KEY (count_id, epc)
) STRICT;

-- Each tag a count saw while open, with the bin it was last counted in.
CREATE TABLE count_seen (
    count_id  TEXT NOT NULL REFERENCES counts (count_id),
    epc       TEXT NOT NULL,
    bin       TEXT,
    PRIMARY KEY (count_id, epc)
) STRICT;

-- The change counter: every insert or change of a cached row takes the next value.
CREATE TRIGGER bins_ref_insert AFTER INSERT ON bins BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE bins SET ref_seq = (SELECT seq FROM reference_clock) WHERE bin = NEW.bin;
END;
CREATE TRIGGER bins_ref_update AFTER UPDATE OF zone, location ON bins BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE bins SET ref_seq = (SELECT seq FROM reference_clock) WHERE bin = NEW.bin;
END;
CREATE TRIGGER units_ref_insert AFTER INSERT ON units BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE units SET ref_seq = (SELECT seq FROM reference_clock) WHERE unit_id = NEW.unit_id;
END;
CREATE TRIGGER units_ref_update AFTER UPDATE OF epc, code, sku, state, bin, version ON units BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE units SET ref_seq = (SELECT seq FROM reference_clock) WHERE unit_id = NEW.unit_id;
END;
CREATE TRIGGER grns_ref_insert AFTER INSERT ON grns BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE grns SET ref_seq = (SELECT seq FROM reference_clock) WHERE grn = NEW.grn;
END;
CREATE TRIGGER grns_ref_update AFTER UPDATE OF qc, state ON grns BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE grns SET ref_seq = (SELECT seq FROM reference_clock) WHERE grn = NEW.grn;
END;
CREATE TRIGGER grn_lines_ref_insert AFTER INSERT ON grn_lines BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE grns SET ref_seq = (SELECT seq FROM reference_clock) WHERE grn = NEW.grn;
END;
CREATE TRIGGER grn_lines_ref_update AFTER UPDATE OF expected, received ON grn_lines BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE grns SET ref_seq = (SELECT seq FROM reference_clock) WHERE grn = NEW.grn;
END;
CREATE TRIGGER counts_ref_insert AFTER INSERT ON counts BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE counts SET ref_seq = (SELECT seq FROM reference_clock) WHERE count_no = NEW.count_no;
END;
CREATE TRIGGER counts_ref_update AFTER UPDATE OF state ON counts BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE counts SET ref_seq = (SELECT seq FROM reference_clock) WHERE count_no = NEW.count_no;
END;

-- Units that existed before this migration take their first change number.
UPDATE units SET version = version;
