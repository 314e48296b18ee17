-- Issue 40: the read-only function's role (`newsdesk issues|articles|events|dossier --stack`):
-- it shows issues, articles with their pages' outcome, issue events and their dossiers, and
-- may change nothing. Of an extraction it reads the outcome, never the text (the dossiers hold
-- what a reader needs of the texts).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'newsdesk_reader') THEN
        CREATE ROLE newsdesk_reader LOGIN;
    END IF;
END
$$;

GRANT SELECT ON category, raw_article, issue, issue_event, extraction_outbox TO newsdesk_reader;
GRANT SELECT (article_id, revision, status, reason, chars, copy_of, copy_reason, extracted_at)
    ON article_extraction TO newsdesk_reader;
