-- The operators' report and hand. Each rated race keeps the address (an IPv4 address, or
-- an IPv6 address's /64) each player joined it from, for address_keep_days only. Each rating
-- change keeps the rating's mu and sigma before and after (so that a void can undo it),
-- and whether an operator voided it. An account may be closed (its results kept). Every
-- action of an operator is kept: who, when, why, on what; ``done_at`` is set once every
-- node's Redis part of it (the live records, the ladders) is done.

CREATE TABLE rated_addresses (
    race_id bigint NOT NULL REFERENCES races (id),
    player  text NOT NULL,
    address text NOT NULL,
    at      double precision NOT NULL,        -- when the race finished (epoch seconds)
    PRIMARY KEY (race_id, player)
);

CREATE INDEX rated_addresses_at ON rated_addresses (at);

ALTER TABLE rating_changes ADD COLUMN mu_before double precision;
ALTER TABLE rating_changes ADD COLUMN sigma_before double precision;
ALTER TABLE rating_changes ADD COLUMN mu_after double precision;
ALTER TABLE rating_changes ADD COLUMN sigma_after double precision;
ALTER TABLE rating_changes ADD COLUMN voided boolean NOT NULL DEFAULT false;

CREATE INDEX rating_changes_race ON rating_changes (race_id);
CREATE INDEX races_finished ON races (finished_at) WHERE rated;

ALTER TABLE accounts ADD COLUMN closed_at double precision;

CREATE TABLE admin_actions (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at      double precision NOT NULL,
    by      text NOT NULL,                    -- the operator
    action  text NOT NULL,                    -- void, close, reopen
    target  text NOT NULL,                    -- the race's code, or the account's name
    race_id bigint REFERENCES races (id),     -- a void's race
    account_id bigint REFERENCES accounts (id), -- a close's account
    player  text,                             -- a close's account's player
    reason  text NOT NULL,
    done_at double precision                  -- when the live records followed (NULL: pending)
);

CREATE INDEX admin_actions_pending ON admin_actions (id) WHERE done_at IS NULL;
CREATE UNIQUE INDEX admin_actions_void_once ON admin_actions (race_id) WHERE action = 'void';
