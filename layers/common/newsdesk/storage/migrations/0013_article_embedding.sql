-- Issue 38: each article's title embedded once, for the meaning method. The vector is float32,
-- little-endian, of the model's dimension; `model` names the model, the engine's version and
-- the prefix (newsdesk.cluster.embedding.model_name), and `title` the title it was made of: a
-- vector of another model, or of a title since revised, is not read, and is embedded again.
-- A plain bytea rather than pgvector's type: nothing here searches by vector in the database,
-- and the embedded local PostgreSQL and RDS read it alike.
CREATE TABLE article_embedding (
    article_id  BIGINT PRIMARY KEY REFERENCES raw_article (id) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    title       TEXT NOT NULL,
    vector      BYTEA NOT NULL,
    embedded_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT, UPDATE ON article_embedding TO newsdesk_cluster;
