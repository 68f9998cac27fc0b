-- The company's view: each site sends, with its hops, a summary of how it
-- is doing (trend, queue depth, devices offline, oldest item, outbox lag);
-- a central keeps the latest per site, as JSON, with the site's instant
-- it was taken at (an older one arriving late does not replace it).
ALTER TABLE central_sites ADD COLUMN summary TEXT;
ALTER TABLE central_sites ADD COLUMN summary_at INTEGER;
