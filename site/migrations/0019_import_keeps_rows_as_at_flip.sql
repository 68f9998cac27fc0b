-- While an import applies, handhelds' reference pages stop at the change
-- number of its flip (`imports.watermark`), so a handheld takes the whole
-- import at once. A row that changes meanwhile (an import turn changes a
-- bin, a sync moves a unit) takes a number above the watermark and is
-- hidden until the import ends; but its old version, which the pages
-- would still show, is gone. A handheld that read the row before the
-- flip keeps it; one that reads from behind it (a new handheld, one
-- catching up) would miss it until the import ends: neither the site
-- before the import nor after it.
--
-- So the first change of a row during an import keeps the row as it was
-- (`import_before`, as the page shows it, in JSON), with its old change
-- number, and pages read it there in its old place: every reader sees
-- the reference data as it stood at the flip. The rows are the applying
-- import's own; the import sweeps them, a turn at a time, once it has
-- ended.
--
-- Each trigger fires on the same columns as the one that takes the row's
-- new change number, so a row is kept exactly when it moves past the
-- watermark.
--
-- One B-tree, in the order pages read it (an import that changes a million
-- rows keeps a million). A row is kept once: its first change takes it
-- past the watermark, and only the lines of a GRN written in one statement
-- can keep it again, with the same old change number, which the key
-- refuses.
CREATE TABLE import_before (
    import_id  INTEGER NOT NULL,
    ref_seq    INTEGER NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('bin', 'unit', 'grn', 'count', 'operator')),
    key        TEXT NOT NULL,
    item       TEXT NOT NULL,
    PRIMARY KEY (import_id, ref_seq, kind, key)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER bins_keep_before_import BEFORE UPDATE OF zone, location ON bins
WHEN OLD.ref_seq <= (SELECT watermark FROM imports WHERE state = 'applying') BEGIN
    INSERT OR IGNORE INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT import_id, 'bin', OLD.bin, OLD.ref_seq,
           json_object('bin', OLD.bin, 'zone', OLD.zone, 'location', OLD.location)
    FROM imports WHERE state = 'applying';
END;

CREATE TRIGGER units_keep_before_import
BEFORE UPDATE OF epc, code, sku, state, bin, version ON units
WHEN OLD.ref_seq <= (SELECT watermark FROM imports WHERE state = 'applying') BEGIN
    INSERT OR IGNORE INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT import_id, 'unit', CAST(OLD.unit_id AS TEXT), OLD.ref_seq,
           json_object('epc', OLD.epc, 'code', OLD.code, 'sku', OLD.sku,
                       'state', OLD.state, 'bin', OLD.bin, 'version', OLD.version)
    FROM imports WHERE state = 'applying';
END;

-- A GRN is kept with its lines as they stood, whether its head or one of
-- its lines changes first.
CREATE TRIGGER grns_keep_before_import BEFORE UPDATE OF qc, state ON grns
WHEN OLD.ref_seq <= (SELECT watermark FROM imports WHERE state = 'applying') BEGIN
    INSERT OR IGNORE INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT import_id, 'grn', OLD.grn, OLD.ref_seq,
           json_object('grn', OLD.grn, 'qc', OLD.qc, 'state', OLD.state, 'lines',
               json((SELECT json_group_array(json_object(
                         'sku', sku, 'expected', expected, 'received', received))
                     FROM grn_lines WHERE grn = OLD.grn)))
    FROM imports WHERE state = 'applying';
END;

CREATE TRIGGER grn_lines_keep_before_import_insert BEFORE INSERT ON grn_lines
WHEN (SELECT ref_seq FROM grns WHERE grn = NEW.grn)
     <= (SELECT watermark FROM imports WHERE state = 'applying') BEGIN
    INSERT OR IGNORE INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT imports.import_id, 'grn', grns.grn, grns.ref_seq,
           json_object('grn', grns.grn, 'qc', grns.qc, 'state', grns.state, 'lines',
               json((SELECT json_group_array(json_object(
                         'sku', sku, 'expected', expected, 'received', received))
                     FROM grn_lines WHERE grn = NEW.grn)))
    FROM imports, grns WHERE imports.state = 'applying' AND grns.grn = NEW.grn;
END;

CREATE TRIGGER grn_lines_keep_before_import_update
BEFORE UPDATE OF expected, received ON grn_lines
WHEN (SELECT ref_seq FROM grns WHERE grn = NEW.grn)
     <= (SELECT watermark FROM imports WHERE state = 'applying') BEGIN
    INSERT OR IGNORE INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT imports.import_id, 'grn', grns.grn, grns.ref_seq,
           json_object('grn', grns.grn, 'qc', grns.qc, 'state', grns.state, 'lines',
               json((SELECT json_group_array(json_object(
                         'sku', sku, 'expected', expected, 'received', received))
                     FROM grn_lines WHERE grn = NEW.grn)))
    FROM imports, grns WHERE imports.state = 'applying' AND grns.grn = NEW.grn;
END;

CREATE TRIGGER counts_keep_before_import BEFORE UPDATE OF state, cancelled_at ON counts
WHEN OLD.ref_seq <= (SELECT watermark FROM imports WHERE state = 'applying') BEGIN
    INSERT OR IGNORE INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT import_id, 'count', OLD.count_id, OLD.ref_seq,
           json_object('count_id', OLD.count_id, 'location', OLD.location, 'zone', OLD.zone,
                       'bin', OLD.bin, 'state',
                       CASE WHEN OLD.cancelled_at IS NULL THEN OLD.state ELSE 'cancelled' END)
    FROM imports WHERE state = 'applying';
END;

CREATE TRIGGER operators_keep_before_import BEFORE UPDATE OF name ON operators
WHEN OLD.ref_seq <= (SELECT watermark FROM imports WHERE state = 'applying') BEGIN
    INSERT OR IGNORE INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT import_id, 'operator', OLD.badge, OLD.ref_seq,
           json_object('badge', OLD.badge, 'name', OLD.name)
    FROM imports WHERE state = 'applying';
END;
