-- The records that last: finished races (their whole record, to replay and check), each
-- player's place in them (the history, paged by race id), the rating changes of each race,
-- and each player's newest rating record (from which the ratings cache and the ladders are
-- rebuilt when Redis lacks them).

CREATE TABLE races (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code        text NOT NULL,
    created_at  double precision NOT NULL,        -- the race's creation time (epoch seconds)
    finished_at double precision NOT NULL,        -- when it ended (epoch seconds)
    variant     text NOT NULL,
    rated       boolean NOT NULL,
    daily       text NOT NULL DEFAULT '',         -- the UTC day of a daily race, else ''
    players     smallint NOT NULL,
    actions     integer NOT NULL,                 -- every player's actions, counted
    meta        bytea NOT NULL,                   -- msgpack: the race's fields, results,
                                                  -- replays, times, boards, par
    entries     bytea NOT NULL,                   -- msgpack: player id -> entry
    archived_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT races_once UNIQUE (code, created_at)   -- a race is archived once
);

CREATE INDEX races_daily ON races (variant, daily) WHERE daily <> '';

CREATE TABLE race_players (
    player   text NOT NULL,
    race_id  bigint NOT NULL REFERENCES races (id),
    name     text NOT NULL,
    rank     integer NOT NULL,
    status   text NOT NULL,
    time     double precision,                    -- seconds to the win, else null
    moves    integer NOT NULL,
    score    integer NOT NULL,
    bot      boolean NOT NULL,
    PRIMARY KEY (player, race_id)                 -- a player's history, newest first
);

CREATE INDEX race_players_race ON race_players (race_id);

CREATE TABLE rating_changes (
    player      text NOT NULL,
    race_id     bigint NOT NULL REFERENCES races (id),
    variant     text NOT NULL,
    pool        text NOT NULL,
    before      integer NOT NULL,
    after       integer NOT NULL,
    provisional boolean NOT NULL,
    PRIMARY KEY (player, race_id)
);

CREATE TABLE player_records (
    player  text PRIMARY KEY,
    version bigint NOT NULL,                      -- the record's version in Redis (+1 a race)
    name    text NOT NULL,
    data    bytea NOT NULL,                       -- msgpack: the record as Redis keeps it
    race_id bigint NOT NULL REFERENCES races (id) -- the race archived with this version
);
