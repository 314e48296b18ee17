-- Two gaps a review of issues 22 and 23 found: page keys under the earlier URL rule (first),
-- and issue events the bus refuses for ever (last).

-- Migration 0010 re-keyed raw_article.canonical_url to issue 23's canonical-URL rule (a default
-- port dropped only for its own scheme, a scheme on another port keeping its name, IPv6 as RFC
-- 5952 writes it); article_extraction.page_key, the copy key a page names (the canonical URL of
-- its sane <link rel="canonical">, else of its final URL), kept the earlier rule's keys, so a
-- copy of a page on an explicit port or an IPv6 host met its original's key only from the
-- rule's other side: missed once. Re-keyed here the same way, from the link each key was made
-- of, read from what the row keeps: the canonical, resolved against the final URL as
-- newsdesk.extract.page.sane_canonical resolves it, when it was kept (canonical_ignored NULL),
-- else the final URL. Only the scheme and the port are read from that link, and the IPv6
-- address is rewritten; the rest of the key stays. page_key is not unique: no row keeps its key
-- for another's sake. The functions are 0010's (a migration is what it was when it ran).

-- The port of a link as urlsplit(...).port reads it: after the last "@" of the authority, after
-- "]" for a bracketed host, else after the first ":"; NULL when there is none or it does not read.
CREATE FUNCTION pg_temp.link_port(link text) RETURNS integer
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    authority text := substring(link from '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)');
    port text;
BEGIN
    authority := regexp_replace(authority, '^.*@', '');
    IF authority LIKE '[%' THEN
        port := substring(authority from '^\[[^\]]*\]:(.*)$');
    ELSE
        port := substring(authority from '^[^:]*:(.*)$');
    END IF;
    IF port IS NULL OR port !~ '^[0-9]+$' OR port::numeric > 65535 THEN
        RETURN NULL;
    END IF;
    RETURN port::integer;
END $$;

-- An IPv6 address (what is between the brackets) as RFC 5952 writes it, embedded IPv4 in
-- hexadecimal as newsdesk.collect.urls writes it (PostgreSQL's inet writes ::ffff:192.0.2.1);
-- a zone (%25eth0) kept; NULL for what PostgreSQL does not read as an IPv6 address.
CREATE FUNCTION pg_temp.ipv6_written(bracketed text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    address text := split_part(bracketed, '%', 1);
    zone text := substring(bracketed from '%.*$');
    written text;
    dotted text[];
BEGIN
    written := host(address::inet);
    IF written NOT LIKE '%:%' THEN
        RETURN NULL;
    END IF;
    dotted := regexp_match(written, '^(.*:)([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)$');
    IF dotted IS NOT NULL THEN
        written := dotted[1] || to_hex(dotted[2]::integer * 256 + dotted[3]::integer) || ':'
            || to_hex(dotted[4]::integer * 256 + dotted[5]::integer);
    END IF;
    RETURN written || coalesce(zone, '');
EXCEPTION WHEN invalid_text_representation THEN
    RETURN NULL;
END $$;

-- The key the new rule gives a row whose key the earlier rule gave (both https://…).
CREATE FUNCTION pg_temp.rekeyed(origin text, stored text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    scheme text := lower(substring(origin from '^([A-Za-z][A-Za-z0-9+.-]*)://'));
    port integer := pg_temp.link_port(origin);
    key text := stored;
    bracketed text := substring(stored from '^https://\[([^\]/?#]*)\]');
    written text;
BEGIN
    IF stored NOT LIKE 'https://%' OR scheme NOT IN ('http', 'https') THEN
        RETURN stored;
    END IF;
    IF bracketed IS NOT NULL THEN
        written := pg_temp.ipv6_written(bracketed);
        IF written IS NOT NULL THEN
            key := 'https://[' || written || ']' || substring(stored from '^https://\[[^\]]*\](.*)$');
        END IF;
    END IF;
    IF key ~ '^https://(\[[^\]]*\]|[^:/?#]*)([/?#]|$)' THEN  -- the earlier rule dropped the port
        IF scheme = 'https' AND port = 80 THEN
            RETURN regexp_replace(key, '^https://(\[[^\]]*\]|[^:/?#]*)', 'https://\1:80');
        ELSIF scheme = 'http' AND port = 443 THEN
            RETURN regexp_replace(key, '^https://(\[[^\]]*\]|[^:/?#]*)', 'http://\1:443');
        END IF;
    ELSIF scheme = 'http' AND port NOT IN (80, 443)
            AND key ~ ('^https://(\[[^\]]*\]|[^:/?#]*):' || port || '([/?#]|$)') THEN
        RETURN 'http://' || substring(key from 9);  -- it kept the port, and said https
    END IF;
    RETURN key;
END $$;

-- The link a row's page_key was made of, as far as its scheme and authority go: an absolute
-- canonical as it is, a scheme-relative one under the final URL's scheme, any other (a path, a
-- query) under the final URL's own authority, which the final URL itself has.
WITH made_of AS (
    SELECT article_id, page_key,
        CASE
            WHEN canonical_ignored IS NULL AND page_canonical ~* '^\s*https?://'
                THEN regexp_replace(page_canonical, '^\s+|\s+$', '', 'g')
            WHEN canonical_ignored IS NULL AND page_canonical ~ '^\s*//'
                THEN substring(final_url from '^([A-Za-z][A-Za-z0-9+.-]*:)')
                    || regexp_replace(page_canonical, '^\s+|\s+$', '', 'g')
            ELSE final_url
        END AS origin
    FROM article_extraction
    WHERE page_key LIKE 'https://%'
),
changed AS (
    SELECT article_id, pg_temp.rekeyed(origin, page_key) AS key, page_key AS stored
    FROM made_of
    WHERE origin IS NOT NULL
      AND (origin ~* '^https?://[^/?#]*:[0-9]' OR page_key LIKE 'https://[%')
)
UPDATE article_extraction SET page_key = changed.key
FROM changed
WHERE article_extraction.article_id = changed.article_id AND changed.key <> changed.stored;

DROP FUNCTION pg_temp.rekeyed(text, text);
DROP FUNCTION pg_temp.ipv6_written(text);
DROP FUNCTION pg_temp.link_port(text);

-- Issue events the bus refuses for what they carry, counted apart from the attempts (which a
-- bus that fails a whole call counts too): at MAX_REFUSALS (newsdesk.storage.issue_events) an
-- event is given up, no longer offered, kept with its error. The cluster role's UPDATE on
-- issue_event is the table's (0007), so it may set the column.
ALTER TABLE issue_event ADD COLUMN IF NOT EXISTS refusals INTEGER NOT NULL DEFAULT 0;
