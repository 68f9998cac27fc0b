-- While an import applies, the first change of a cached row keeps the row
-- as it was, with its old change number, and handhelds' pages read it
-- there: every reader sees the reference data as it stood at the flip
-- (SQLite's twin says why). Each trigger fires on the same columns as the
-- one that takes the row's new change number. Row triggers run after the
-- statement's reference lock, and each statement of a trigger function
-- reads what has committed by then, so a writer that locks after the
-- flip (which takes the lock too) sees the applying import.
CREATE TABLE import_before (
    import_id  BIGINT NOT NULL,
    ref_seq    BIGINT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('bin', 'unit', 'grn', 'count', 'operator')),
    key        TEXT NOT NULL,
    item       TEXT NOT NULL,
    PRIMARY KEY (import_id, ref_seq, kind, key)
);

-- The watermark of the import that applies; NULL when none does.
CREATE FUNCTION import_watermark() RETURNS BIGINT LANGUAGE sql STABLE AS $$
    SELECT watermark FROM imports WHERE state = 'applying';
$$;

-- Keeps item $4 for the row of kind $1 and key $2 whose change number
-- was $3, once, for the import that applies.
CREATE FUNCTION import_keep_before(TEXT, TEXT, BIGINT, TEXT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT import_id, $1, $2, $3, $4 FROM imports WHERE state = 'applying'
    ON CONFLICT DO NOTHING;
$$;

-- GRN $1 with its lines as they stand, in the page's JSON.
CREATE FUNCTION grn_as_page_item(TEXT) RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT json_build_object('grn', grns.grn, 'qc', grns.qc, 'state', grns.state, 'lines',
               (SELECT coalesce(json_agg(json_build_object('sku', grn_lines.sku,
                           'expected', grn_lines.expected, 'received', grn_lines.received)),
                           '[]'::json)
                FROM grn_lines WHERE grn_lines.grn = grns.grn))::text
    FROM grns WHERE grns.grn = $1;
$$;

CREATE FUNCTION bins_keep_before_import() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.ref_seq <= import_watermark() THEN
        PERFORM import_keep_before('bin', OLD.bin, OLD.ref_seq,
            json_build_object('bin', OLD.bin, 'zone', OLD.zone, 'location', OLD.location)::text);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER bins_keep_before_import BEFORE UPDATE OF zone, location ON bins
    FOR EACH ROW EXECUTE FUNCTION bins_keep_before_import();

CREATE FUNCTION units_keep_before_import() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.ref_seq <= import_watermark() THEN
        PERFORM import_keep_before('unit', CAST(OLD.unit_id AS TEXT), OLD.ref_seq,
            json_build_object('epc', OLD.epc, 'code', OLD.code, 'sku', OLD.sku,
                              'state', OLD.state, 'bin', OLD.bin, 'version', OLD.version)::text);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER units_keep_before_import
    BEFORE UPDATE OF epc, code, sku, state, bin, version ON units
    FOR EACH ROW EXECUTE FUNCTION units_keep_before_import();

CREATE FUNCTION grns_keep_before_import() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.ref_seq <= import_watermark() THEN
        PERFORM import_keep_before('grn', OLD.grn, OLD.ref_seq, grn_as_page_item(OLD.grn));
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER grns_keep_before_import BEFORE UPDATE OF qc, state ON grns
    FOR EACH ROW EXECUTE FUNCTION grns_keep_before_import();

CREATE FUNCTION grn_lines_keep_before_import() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    seq BIGINT;
BEGIN
    SELECT ref_seq INTO seq FROM grns WHERE grn = NEW.grn;
    IF seq <= import_watermark() THEN
        PERFORM import_keep_before('grn', NEW.grn, seq, grn_as_page_item(NEW.grn));
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER grn_lines_keep_before_import
    BEFORE INSERT OR UPDATE OF expected, received ON grn_lines
    FOR EACH ROW EXECUTE FUNCTION grn_lines_keep_before_import();

CREATE FUNCTION counts_keep_before_import() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.ref_seq <= import_watermark() THEN
        PERFORM import_keep_before('count', OLD.count_id, OLD.ref_seq,
            json_build_object('count_id', OLD.count_id, 'location', OLD.location,
                              'zone', OLD.zone, 'bin', OLD.bin, 'state',
                              CASE WHEN OLD.cancelled_at IS NULL THEN OLD.state
                                   ELSE 'cancelled' END)::text);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER counts_keep_before_import BEFORE UPDATE OF state, cancelled_at ON counts
    FOR EACH ROW EXECUTE FUNCTION counts_keep_before_import();

CREATE FUNCTION operators_keep_before_import() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.ref_seq <= import_watermark() THEN
        PERFORM import_keep_before('operator', OLD.badge, OLD.ref_seq,
            json_build_object('badge', OLD.badge, 'name', OLD.name)::text);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER operators_keep_before_import BEFORE UPDATE OF name ON operators
    FOR EACH ROW EXECUTE FUNCTION operators_keep_before_import();
