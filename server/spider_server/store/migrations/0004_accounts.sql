-- Accounts and their sessions. Times are seconds of the Unix epoch (the deployment's
-- clock), as the races' are. A session is kept by the SHA-256 of its token only: the
-- token itself is never stored.

CREATE TABLE accounts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL,             -- the name as shown
    name_key text NOT NULL,         -- the name's identity key: no two accounts share one
    password text NOT NULL,         -- Argon2id, in the PHC string format
    player text NOT NULL,           -- the player id the account races as
    guest_player text,              -- the guest's player id it took over, if any
    created_at double precision NOT NULL,
    password_at double precision NOT NULL,
    CONSTRAINT accounts_name_key UNIQUE (name_key),
    CONSTRAINT accounts_player UNIQUE (player)
);

CREATE UNIQUE INDEX accounts_guest_player ON accounts (guest_player)
    WHERE guest_player IS NOT NULL;

CREATE TABLE sessions (
    hash bytea PRIMARY KEY,         -- SHA-256 of the session token
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at double precision NOT NULL,
    last_used_at double precision NOT NULL,
    address text NOT NULL,
    user_agent text NOT NULL
);

CREATE INDEX sessions_account ON sessions (account_id, last_used_at DESC);
