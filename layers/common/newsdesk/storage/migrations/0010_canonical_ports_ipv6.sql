-- Issue 23 changed two things in canonical URLs (newsdesk.collect.urls): a default port is
-- dropped only for its own scheme, and a scheme on another port keeps its name (the key of
-- https://h:80/a is https://h:80/a, of http://h:443/a http://h:443/a, of http://h:8080/a
-- http://h:8080/a; before, https://h/a, https://h/a and https://h:8080/a); and an IPv6 address
-- is written one way (RFC 5952: [2001:db8:0:0::1] is [2001:db8::1]). The rows stored before
-- are re-keyed here, so that an article that comes back finds its row by its new key. Only
-- keys the earlier rule made from the row's own link change: the port is read from origin_url
-- as Python's urlsplit reads it, the rest of the key is kept. A row whose new key another row
-- already has (two spellings of one IPv6 address, stored as two articles) keeps its key: the
-- pair was already there, and merging stored articles is not a migration's to do.

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

WITH changed AS (
    SELECT id, canonical_url AS stored, pg_temp.rekeyed(origin_url, canonical_url) AS key
    FROM raw_article
    WHERE canonical_url LIKE 'https://%'
      AND (origin_url ~* '^https?://[^/?#]*:[0-9]' OR canonical_url LIKE 'https://[%')
),
first AS (  -- of the rows one new key would gather, the one stored first
    SELECT DISTINCT ON (key) id, key FROM changed WHERE key <> stored ORDER BY key, id
)
UPDATE raw_article SET canonical_url = first.key
FROM first
WHERE raw_article.id = first.id
  AND NOT EXISTS (SELECT 1 FROM raw_article other WHERE other.canonical_url = first.key);

DROP FUNCTION pg_temp.rekeyed(text, text);
DROP FUNCTION pg_temp.ipv6_written(text);
DROP FUNCTION pg_temp.link_port(text);
