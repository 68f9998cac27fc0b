-- Real labels (GS1). Units gain the GS1 keys their labels carry: the GTIN
-- and serial that name one unit together (an SGTIN EPC encodes the same
-- two), and the lot and expiry date (`YYYY-MM-DD`) its receive recorded
-- or its import gave. SKUs gain their GTINs, so a label that names a
-- GTIN and lot names a SKU; handhelds cache them with the other
-- reference data. A manifest's unit may name the pallet (SSCC) it ships
-- on, so one scan of the pallet's label verifies all of its units.

ALTER TABLE units ADD COLUMN gtin TEXT;
ALTER TABLE units ADD COLUMN serial TEXT;
ALTER TABLE units ADD COLUMN lot TEXT;
ALTER TABLE units ADD COLUMN expiry TEXT;
-- A GTIN and serial name one unit.
CREATE UNIQUE INDEX u__units__gtin__serial ON units (gtin, serial)
    WHERE gtin IS NOT NULL AND serial IS NOT NULL;

-- A row kept as it stood at an import's flip carries the GS1 keys too.
DROP TRIGGER units_keep_before_import;
CREATE TRIGGER units_keep_before_import
BEFORE UPDATE OF epc, code, sku, state, bin, version ON units
WHEN OLD.ref_seq <= (SELECT watermark FROM imports WHERE state = 'applying') BEGIN
    INSERT OR IGNORE INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT import_id, 'unit', CAST(OLD.unit_id AS TEXT), OLD.ref_seq,
           json_object('epc', OLD.epc, 'code', OLD.code, 'sku', OLD.sku,
                       'state', OLD.state, 'bin', OLD.bin, 'version', OLD.version,
                       'gtin', OLD.gtin, 'serial', OLD.serial, 'lot', OLD.lot,
                       'expiry', OLD.expiry)
    FROM imports WHERE state = 'applying';
END;

-- A SKU and its GTIN (14 digits), one GTIN a SKU. Only a skus import
-- writes these rows, and one import applies at a time, so none changes
-- under another import's flip: none is kept in import_before.
CREATE TABLE skus (
    sku      TEXT PRIMARY KEY NOT NULL,
    gtin     TEXT NOT NULL,
    ref_seq  INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE UNIQUE INDEX u__skus__gtin ON skus (gtin);
CREATE INDEX skus_by_ref_seq ON skus (ref_seq);
CREATE TRIGGER skus_ref_insert AFTER INSERT ON skus BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE skus SET ref_seq = (SELECT seq FROM reference_clock) WHERE sku = NEW.sku;
END;
CREATE TRIGGER skus_ref_update AFTER UPDATE OF gtin ON skus BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE skus SET ref_seq = (SELECT seq FROM reference_clock) WHERE sku = NEW.sku;
END;

-- The pallet (18-digit SSCC) a manifest's unit ships on, when known.
ALTER TABLE manifest_units ADD COLUMN sscc TEXT;
CREATE INDEX manifest_units_by_sscc ON manifest_units (manifest, sscc)
    WHERE sscc IS NOT NULL;
