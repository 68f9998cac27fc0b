-- PostgreSQL twin of ../0023_gs1_labels.sql. Units gain their GS1 keys
-- (GTIN, serial, lot, expiry), SKUs their GTINs (cached by handhelds),
-- a manifest's unit the pallet (SSCC) it ships on.

ALTER TABLE units ADD COLUMN gtin TEXT COLLATE "C";
ALTER TABLE units ADD COLUMN serial TEXT COLLATE "C";
ALTER TABLE units ADD COLUMN lot TEXT COLLATE "C";
ALTER TABLE units ADD COLUMN expiry TEXT COLLATE "C";
-- A GTIN and serial name one unit.
CREATE UNIQUE INDEX u__units__gtin__serial ON units (gtin, serial)
    WHERE gtin IS NOT NULL AND serial IS NOT NULL;

-- A row kept as it stood at an import's flip carries the GS1 keys too.
CREATE OR REPLACE FUNCTION units_keep_before_import() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.ref_seq <= import_watermark() THEN
        PERFORM import_keep_before('unit', CAST(OLD.unit_id AS TEXT), OLD.ref_seq,
            json_build_object('epc', OLD.epc, 'code', OLD.code, 'sku', OLD.sku,
                              'state', OLD.state, 'bin', OLD.bin, 'version', OLD.version,
                              'gtin', OLD.gtin, 'serial', OLD.serial, 'lot', OLD.lot,
                              'expiry', OLD.expiry)::text);
    END IF;
    RETURN NEW;
END
$$;

-- A SKU and its GTIN (14 digits), one GTIN a SKU. Only a skus import
-- writes these rows, and one import applies at a time, so none changes
-- under another import's flip: none is kept in import_before.
CREATE TABLE skus (
    sku      TEXT COLLATE "C" NOT NULL,
    gtin     TEXT COLLATE "C" NOT NULL,
    ref_seq  BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT u__skus__sku PRIMARY KEY (sku)
);
CREATE UNIQUE INDEX u__skus__gtin ON skus (gtin);
CREATE INDEX skus_by_ref_seq ON skus (ref_seq);
CREATE TRIGGER skus_ref_lock BEFORE INSERT OR UPDATE OF gtin ON skus
    FOR EACH STATEMENT EXECUTE FUNCTION reference_clock_lock();
CREATE TRIGGER skus_ref_insert BEFORE INSERT ON skus
    FOR EACH ROW EXECUTE FUNCTION reference_take_seq();
CREATE TRIGGER skus_ref_update BEFORE UPDATE OF gtin ON skus
    FOR EACH ROW EXECUTE FUNCTION reference_take_seq();

-- The pallet (18-digit SSCC) a manifest's unit ships on, when known.
ALTER TABLE manifest_units ADD COLUMN sscc TEXT COLLATE "C";
CREATE INDEX manifest_units_by_sscc ON manifest_units (manifest, sscc)
    WHERE sscc IS NOT NULL;
