-- What players read from the archive: a player found by name (the one of that name who
-- finished an archived race last), and the rating ladders (each player's newest change in
-- a variant's pool, read from the index alone).

CREATE INDEX race_players_name ON race_players (lower(name), race_id DESC);

CREATE INDEX rating_changes_ladder ON rating_changes (variant, pool, player, race_id DESC)
    INCLUDE (after, provisional);

CREATE INDEX player_records_name ON player_records (lower(name));
