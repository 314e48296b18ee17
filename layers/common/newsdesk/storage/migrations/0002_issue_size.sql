-- The clustering job records each issue's size, and reads a window of recent articles.
ALTER TABLE issue ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
CREATE INDEX raw_article_collected ON raw_article (collected_at);
