-- Today's data, archived once when a node first starts with an archive against a Redis that
-- held races, histories and ratings from before: a player's record taken from Redis may
-- have no archived race (its races were gone from Redis already), and the history lines
-- whose race was gone from Redis are kept as the history showed them (no replay is left).

ALTER TABLE player_records ALTER COLUMN race_id DROP NOT NULL;

CREATE TABLE history_lines (
    player text NOT NULL,
    code   text NOT NULL,
    at     double precision NOT NULL,             -- when the race finished (epoch seconds)
    line   bytea NOT NULL,                        -- msgpack: the line as Redis kept it
    PRIMARY KEY (player, at, code)
);
