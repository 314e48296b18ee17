-- Issues that live across clustering runs (issue 15): an issue stays open while its story is
-- active and takes later runs' articles; one idle for ISSUE_IDLE_HOURS closes. Every change
-- raises its version and writes an event to the outbox in the same transaction.
ALTER TABLE issue ADD COLUMN state TEXT NOT NULL DEFAULT 'open'
    CHECK (state IN ('open', 'closed'));
ALTER TABLE issue ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE issue ADD COLUMN first_article_at TIMESTAMPTZ;
ALTER TABLE issue ADD COLUMN last_article_at TIMESTAMPTZ;
ALTER TABLE issue ADD COLUMN updated_at TIMESTAMPTZ;
ALTER TABLE issue ADD COLUMN closed_at TIMESTAMPTZ;
-- The seed method's issues grow around the article that gathered them (NULL: an issue stored
-- before this migration, which only the centroid method can extend).
ALTER TABLE issue ADD COLUMN leader_id BIGINT REFERENCES raw_article (id);

UPDATE issue i
SET first_article_at = m.first_at, last_article_at = m.last_at
FROM (
    SELECT issue_id, min(collected_at) AS first_at, max(collected_at) AS last_at
    FROM raw_article WHERE issue_id IS NOT NULL GROUP BY issue_id
) m
WHERE m.issue_id = i.id;
UPDATE issue SET first_article_at = created_at WHERE first_article_at IS NULL;
UPDATE issue SET last_article_at = created_at WHERE last_article_at IS NULL;
UPDATE issue SET updated_at = created_at;
ALTER TABLE issue ALTER COLUMN first_article_at SET NOT NULL,
    ALTER COLUMN first_article_at SET DEFAULT now();
ALTER TABLE issue ALTER COLUMN last_article_at SET NOT NULL,
    ALTER COLUMN last_article_at SET DEFAULT now();
ALTER TABLE issue ALTER COLUMN updated_at SET NOT NULL, ALTER COLUMN updated_at SET DEFAULT now();

CREATE INDEX issue_open ON issue (last_article_at) WHERE state = 'open';

-- The event outbox: one row per issue version, written with the change; a relay publishes the
-- rows not yet published to the stack's EventBridge bus. Rows are kept a while after
-- publishing so that `newsdesk events` can show them.
CREATE TABLE issue_event (
    issue_id     BIGINT NOT NULL REFERENCES issue (id),
    version      INTEGER NOT NULL,
    type         TEXT NOT NULL CHECK (type IN ('IssueCreated', 'IssueUpdated', 'IssueClosed')),
    detail       JSONB NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    published_at TIMESTAMPTZ,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    PRIMARY KEY (issue_id, version)
);
CREATE INDEX issue_event_unpublished ON issue_event (created_at) WHERE published_at IS NULL;
