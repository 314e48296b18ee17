-- Least privilege (issue 22): a database role per function that uses the database, granted
-- what that function's stores run and nothing more. The tables stay the migrating user's (the
-- RDS master user): only it can ALTER, DROP or TRUNCATE them. The migrate function gives each
-- role its password from its secret after the migrations (newsdesk.storage.roles); until then
-- a role cannot log in with a password. A later migration that adds a table grants each role
-- what it needs there (tests/test_database_roles.py fails on a table it does not name).
DO $$
DECLARE
    role_name TEXT;
BEGIN
    -- roles belong to the server, not to one database: another database may have made them
    FOREACH role_name IN ARRAY ARRAY['newsdesk_worker', 'newsdesk_extractor', 'newsdesk_cluster']
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role_name) THEN
            EXECUTE format('CREATE ROLE %I LOGIN', role_name);
        END IF;
    END LOOP;
END
$$;

-- Before PostgreSQL 15 everyone could create tables in public; nobody but the owner may here.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

-- The worker (feeds, untrusted): stores and revises its articles, queues them for extraction
-- and relays the queue. It never touches issues, their events or the extractions; of a stored
-- article it changes only what a revision changes and when it was last seen.
GRANT SELECT, INSERT ON category TO newsdesk_worker;
GRANT USAGE ON SEQUENCE category_id_seq, raw_article_id_seq TO newsdesk_worker;
GRANT SELECT, INSERT ON raw_article TO newsdesk_worker;
GRANT UPDATE (title, published_at, revision, last_changed_at, last_seen_at)
    ON raw_article TO newsdesk_worker;
GRANT INSERT ON article_revision TO newsdesk_worker;
GRANT SELECT, INSERT, DELETE ON extraction_outbox TO newsdesk_worker;
GRANT UPDATE (sent_at, sends) ON extraction_outbox TO newsdesk_worker;

-- The extractor (article pages, untrusted): reads the articles, records each one's extraction,
-- copy key and sketch, closes or defers its outbox row. Of an article it may set only the
-- issue (an original that arrives after its copy joins the copy's issue: ExtractionStore).
GRANT SELECT ON raw_article TO newsdesk_extractor;
GRANT UPDATE (issue_id) ON raw_article TO newsdesk_extractor;
GRANT SELECT, DELETE ON extraction_outbox TO newsdesk_extractor;
GRANT UPDATE (sent_at, sends, not_before, attempts) ON extraction_outbox TO newsdesk_extractor;
GRANT SELECT, INSERT, UPDATE ON article_extraction TO newsdesk_extractor;
GRANT SELECT, INSERT, DELETE ON article_sketch TO newsdesk_extractor;

-- The cluster function: reads articles and their extractions, owns the issues and their event
-- outbox; of an article it sets only the issue.
GRANT SELECT ON category, raw_article, article_extraction, extraction_outbox TO newsdesk_cluster;
GRANT UPDATE (issue_id) ON raw_article TO newsdesk_cluster;
GRANT SELECT, INSERT, UPDATE ON issue TO newsdesk_cluster;
GRANT USAGE ON SEQUENCE issue_id_seq TO newsdesk_cluster;
GRANT SELECT, INSERT, UPDATE, DELETE ON issue_event TO newsdesk_cluster;
