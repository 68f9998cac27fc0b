-- The operator's language: a BCP 47 tag (`de`, `pl-PL`, `ar`) the import
-- checked, or null when the operators file gave none. Handhelds cache it
-- with the operator and show their screens in it while the operator is
-- signed in.
ALTER TABLE operators ADD COLUMN language TEXT;

-- A change of language is a change of the operator: it takes a new
-- reference sequence (handhelds fetch it) and is kept as it stood at an
-- import's flip, like a change of name.
DROP TRIGGER operators_ref_update;
CREATE TRIGGER operators_ref_update AFTER UPDATE OF name, language ON operators BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE operators SET ref_seq = (SELECT seq FROM reference_clock) WHERE badge = NEW.badge;
END;

DROP TRIGGER operators_keep_before_import;
CREATE TRIGGER operators_keep_before_import BEFORE UPDATE OF name, language ON operators
WHEN OLD.ref_seq <= (SELECT watermark FROM imports WHERE state = 'applying') BEGIN
    INSERT OR IGNORE INTO import_before (import_id, kind, key, ref_seq, item)
    SELECT import_id, 'operator', OLD.badge, OLD.ref_seq,
           json_object('badge', OLD.badge, 'name', OLD.name, 'language', OLD.language)
    FROM imports WHERE state = 'applying';
END;
