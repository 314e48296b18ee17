-- The extraction stage (issue 14): each article's page fetched, its text kept, its copies found.

-- Revisions: a known article whose feed entry changed title (or moved its time later) is
-- re-extracted; its earlier titles are kept, and last_changed_at tells the clustering job.
ALTER TABLE raw_article ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE raw_article ADD COLUMN last_changed_at TIMESTAMPTZ;

CREATE TABLE article_revision (
    article_id   BIGINT NOT NULL REFERENCES raw_article (id),
    revision     INTEGER NOT NULL,  -- the revision this title and time were superseded by
    title        TEXT NOT NULL,
    published_at TIMESTAMPTZ,
    changed_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (article_id, revision)
);

-- The outbox: written in the transaction that stores (or revises) an article, read by a relay
-- that sends one message per row to the article queue. A row stays until its extraction is
-- recorded, so a crash between the commit and the send loses nothing; sent_at NULL means to
-- be sent (again) once not_before has passed; a row sent long ago and still here is sent again
-- (its message was lost or dead-lettered), each send under a new deduplication id (sends).
CREATE TABLE extraction_outbox (
    article_id  BIGINT NOT NULL REFERENCES raw_article (id),
    revision    INTEGER NOT NULL,
    url         TEXT NOT NULL,
    min_chars   INTEGER,  -- the outlet's extract_min_chars, when it sets one
    attempts    INTEGER NOT NULL DEFAULT 0,  -- fetches that failed for a passing reason
    sends       INTEGER NOT NULL DEFAULT 0,  -- messages sent for the row
    not_before  TIMESTAMPTZ NOT NULL DEFAULT now(),
    enqueued_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    sent_at     TIMESTAMPTZ,
    PRIMARY KEY (article_id, revision)
);
CREATE INDEX extraction_outbox_unsent ON extraction_outbox (not_before) WHERE sent_at IS NULL;
CREATE INDEX extraction_outbox_sent ON extraction_outbox (sent_at) WHERE sent_at IS NOT NULL;

-- An article's extraction, its latest revision's: the outcome with its reason, the text and
-- what the page said of itself; copy_of names the article it copies and why.
CREATE TABLE article_extraction (
    article_id        BIGINT PRIMARY KEY REFERENCES raw_article (id),
    revision          INTEGER NOT NULL,
    status            TEXT NOT NULL,
    reason            TEXT,
    chars             INTEGER NOT NULL DEFAULT 0,
    text              TEXT,
    content_hash      TEXT,
    http_status       INTEGER,
    final_url         TEXT,
    page_canonical    TEXT,  -- <link rel="canonical"> as the page gave it
    canonical_ignored TEXT,  -- why it was not trusted (site_root, section_page, …)
    page_key          TEXT,  -- the canonical key the page named: its sane canonical or final URL
    page_title        TEXT,
    og_title          TEXT,
    page_published    TEXT,
    author            TEXT,
    language          TEXT,
    raw_key           TEXT,  -- the page's body in the raw layer
    min_chars         INTEGER,  -- the outlet's extract_min_chars it was judged with, if any
    copy_of           BIGINT REFERENCES raw_article (id),
    copy_reason       TEXT,
    extracted_at      TIMESTAMPTZ NOT NULL,
    text_removed_at   TIMESTAMPTZ  -- ARTICLE_TEXT_RETENTION_DAYS passed
);
CREATE INDEX article_extraction_hash ON article_extraction (content_hash)
    WHERE content_hash IS NOT NULL;
CREATE INDEX article_extraction_page_key ON article_extraction (page_key)
    WHERE page_key IS NOT NULL;
CREATE INDEX article_extraction_copy_of ON article_extraction (copy_of)
    WHERE copy_of IS NOT NULL;

-- The near-duplicate index: each extracted text's sketch values (newsdesk.extract.similar).
CREATE TABLE article_sketch (
    value      BIGINT NOT NULL,
    article_id BIGINT NOT NULL REFERENCES raw_article (id),
    PRIMARY KEY (value, article_id)
);
CREATE INDEX article_sketch_article ON article_sketch (article_id);
-- ARTICLE_TEXT_RETENTION_DAYS: texts older than that are removed, oldest first.
CREATE INDEX article_extraction_text_age ON article_extraction (extracted_at)
    WHERE text IS NOT NULL;
