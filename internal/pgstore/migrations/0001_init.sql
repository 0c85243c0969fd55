-- ctxkit shared state, schema version 1.
-- Every table is append-only: rows are inserted, never updated or deleted,
-- and ordered by the database's sequence.

-- One consent change per row (the local journal's lines), applied in seq
-- order by every replica.
CREATE TABLE ctxkit_consent_log (
    seq          bigserial PRIMARY KEY,
    entry        jsonb NOT NULL,
    committed_at timestamptz NOT NULL DEFAULT now()
);

-- One served frame per row (UR1).
CREATE TABLE ctxkit_usage (
    seq         bigserial PRIMARY KEY,
    provider_id text NOT NULL,
    frame_id    text NOT NULL,
    content_digest text NOT NULL DEFAULT '',
    token_cost  bigint NOT NULL CHECK (token_cost >= 0),
    request_id  text NOT NULL,
    served_at   timestamptz NOT NULL
);
CREATE INDEX ctxkit_usage_served_at ON ctxkit_usage (served_at);

-- One trust-store change per row: a key added or revoked.
CREATE TABLE ctxkit_trust_log (
    seq         bigserial PRIMARY KEY,
    op          text NOT NULL CHECK (op IN ('add', 'revoke')),
    provider_id text NOT NULL,
    key_id      text NOT NULL,
    public_key  text NOT NULL DEFAULT '',
    committed_at timestamptz NOT NULL DEFAULT now()
);
