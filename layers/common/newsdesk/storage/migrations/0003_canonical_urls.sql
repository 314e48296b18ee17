-- De-duplication by canonical URL (newsdesk.urls) and by (source, guid), with when an article
-- was first and last seen. origin_url keeps the link as the feed published it. Rows stored
-- before this migration take their published link as canonical.
ALTER TABLE raw_article ADD COLUMN canonical_url TEXT;
UPDATE raw_article SET canonical_url = origin_url;
ALTER TABLE raw_article ALTER COLUMN canonical_url SET NOT NULL;
CREATE UNIQUE INDEX raw_article_canonical_url ON raw_article (canonical_url);

ALTER TABLE raw_article ADD COLUMN first_seen_at TIMESTAMPTZ;
ALTER TABLE raw_article ADD COLUMN last_seen_at TIMESTAMPTZ;
UPDATE raw_article SET first_seen_at = collected_at, last_seen_at = collected_at;
ALTER TABLE raw_article ALTER COLUMN first_seen_at SET NOT NULL;
ALTER TABLE raw_article ALTER COLUMN last_seen_at SET NOT NULL;
ALTER TABLE raw_article ALTER COLUMN first_seen_at SET DEFAULT now();
ALTER TABLE raw_article ALTER COLUMN last_seen_at SET DEFAULT now();

-- Not unique: a feed that reuses a guid must not block a new article; the store reads it.
CREATE INDEX raw_article_source_guid ON raw_article (source, guid) WHERE guid IS NOT NULL;
