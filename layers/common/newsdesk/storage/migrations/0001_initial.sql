-- The collect path's tables. Articles are visited for clustering in ascending id order.
CREATE TABLE category (
    id   SERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE issue (
    id          BIGSERIAL PRIMARY KEY,
    category_id INTEGER NOT NULL REFERENCES category (id),
    title       TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE raw_article (
    id           BIGSERIAL PRIMARY KEY,
    origin_url   TEXT NOT NULL UNIQUE,
    source       TEXT NOT NULL,
    category_id  INTEGER NOT NULL REFERENCES category (id),
    title        TEXT NOT NULL,
    summary      TEXT NOT NULL DEFAULT '',
    guid         TEXT,
    published_at TIMESTAMPTZ,
    collected_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    issue_id     BIGINT REFERENCES issue (id)
);

-- The clustering job reads a category's unissued articles of the last hours.
CREATE INDEX raw_article_unissued ON raw_article (category_id, collected_at)
    WHERE issue_id IS NULL;
CREATE INDEX raw_article_issue ON raw_article (issue_id) WHERE issue_id IS NOT NULL;
