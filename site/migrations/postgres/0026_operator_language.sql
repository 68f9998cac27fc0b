-- PostgreSQL twin of ../0026_operator_language.sql: the operator's
-- language (a BCP 47 tag, or null), a change of which takes a new
-- reference sequence and is kept as it stood at an import's flip.
ALTER TABLE operators ADD COLUMN language TEXT COLLATE "C";

DROP TRIGGER operators_ref_lock ON operators;
CREATE TRIGGER operators_ref_lock BEFORE INSERT OR UPDATE OF name, language ON operators
    FOR EACH STATEMENT EXECUTE FUNCTION reference_clock_lock();
DROP TRIGGER operators_ref_update ON operators;
CREATE TRIGGER operators_ref_update BEFORE UPDATE OF name, language ON operators
    FOR EACH ROW EXECUTE FUNCTION reference_take_seq();

CREATE OR REPLACE FUNCTION operators_keep_before_import() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.ref_seq <= import_watermark() THEN
        PERFORM import_keep_before('operator', OLD.badge, OLD.ref_seq,
            json_build_object('badge', OLD.badge, 'name', OLD.name,
                              'language', OLD.language)::text);
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER operators_keep_before_import ON operators;
CREATE TRIGGER operators_keep_before_import BEFORE UPDATE OF name, language ON operators
    FOR EACH ROW EXECUTE FUNCTION operators_keep_before_import();
