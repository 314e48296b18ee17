-- Issue 40: each issue version's dossier, built in the transaction that makes the version
-- (newsdesk.core.dossier) and kept with its event as the JSON it is published as, so that a
-- redelivery, a re-extraction or the texts' retention never changes it. An IssueClosed event
-- has none (NULL).
ALTER TABLE issue_event ADD COLUMN dossier TEXT;

-- The texts an issue has read, each article's sentences' fingerprints (a list of
-- [shingles, numbers] pairs of hashes): what a later version's "what is new" is compared with.
-- Kept as long as the issue, after the events are forgotten and the texts emptied.
CREATE TABLE issue_text_read (
    issue_id     BIGINT NOT NULL REFERENCES issue (id),
    article_id   BIGINT NOT NULL REFERENCES raw_article (id),
    version      INTEGER NOT NULL,
    fingerprints JSONB NOT NULL,
    PRIMARY KEY (issue_id, article_id)
);

GRANT SELECT, INSERT ON issue_text_read TO newsdesk_cluster;
