-- Passkeys and e-mail. An account signs in with a password, a passkey, or both: one made
-- with a passkey alone has no password (NULL). Its e-mail address, once verified, is kept
-- as given (email) and by its key (the address case folded, for lookups): no two accounts
-- verify the same address.

ALTER TABLE accounts ALTER COLUMN password DROP NOT NULL;
ALTER TABLE accounts ADD COLUMN email text;
ALTER TABLE accounts ADD COLUMN email_key text;
ALTER TABLE accounts ADD COLUMN email_at double precision;

CREATE UNIQUE INDEX accounts_email_key ON accounts (email_key) WHERE email_key IS NOT NULL;

CREATE TABLE passkeys (
    id bytea PRIMARY KEY,           -- the credential id: registered once only, by anyone
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    public_key bytea NOT NULL,      -- COSE key
    sign_count bigint NOT NULL,     -- the authenticator's signature counter last seen
    name text NOT NULL,             -- what its owner calls it
    created_at double precision NOT NULL,
    last_used_at double precision
);

CREATE INDEX passkeys_account ON passkeys (account_id, created_at);
