-- Bot accounts and personal API tokens. An account's kind is fixed by the account: a bot
-- account (``bot``, since ``bot_at``) plays as a bot whatever its hello says, and never
-- becomes a human's again. An API token is kept by the SHA-256 of its token only (as a
-- session is), with its scopes; it ends with its account.

ALTER TABLE accounts ADD COLUMN bot boolean NOT NULL DEFAULT false;
ALTER TABLE accounts ADD COLUMN bot_at double precision;

CREATE TABLE api_tokens (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    hash bytea NOT NULL,            -- SHA-256 of the token
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name text NOT NULL,             -- what its owner called it
    scopes text[] NOT NULL,         -- race:read, race:play, race:create, bot:play
    created_at double precision NOT NULL,
    last_used_at double precision,  -- null until a hello says it
    CONSTRAINT api_tokens_hash UNIQUE (hash)
);

CREATE INDEX api_tokens_account ON api_tokens (account_id, created_at DESC);

-- The players of deleted accounts (their ids only, which the races they finished still
-- name): a guest's token of one (a guest the account had taken over) speaks for nobody.
CREATE TABLE deleted_players (
    player text PRIMARY KEY,
    deleted_at double precision NOT NULL
);
