"""The node's background work, each a runner of its own: it reads what it needs from the
store, asks the rules (:mod:`..race`) what is due, and commits it through
:class:`~..fanout.changes.Changes`.

- :mod:`.transitions`: a race's start and finish when due (:class:`Advancer`);
- :mod:`.presence`: away, back, abandoned, stuck on undo, from every node's claims;
- :mod:`.ghosts`: the ghosts' recorded actions, emitted on the race's clock;
- :mod:`.seeds`: proven-winnable seeds and the daily deals, proved in the solver's workers;
- :mod:`.par`: a finished deal's par, searched in a solver worker;
- :mod:`.hints`: hints searched before they are asked for, and kept;
- :mod:`.lobby`: quick match and the open races' watchers.
"""
