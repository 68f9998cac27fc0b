-- When the site closed a session (Close session in the site's view,
-- `device close-session`), on the site's clock; NULL for a session its
-- device closed or one still open. A scan the device captured after this
-- instant is refused `session_closed`; one captured before still applies.
ALTER TABLE sessions ADD COLUMN site_closed_at BIGINT;
