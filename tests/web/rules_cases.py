"""Cases for checking the page's rules port (``static/rules.js``) against the engine.

Each case is a position met in a seeded game of some variant, with what the engine says
of it: its text, legal moves, view and the view's legal moves, a move played from it and
the position after, the reason the engine gives for a few illegal moves, and both scores.
Games are played by a seeded random player that prefers building in suit, so runs
complete and leave (or stay, with ``keep``), columns empty and the stock runs out.
"""

from __future__ import annotations

import random
from typing import Any

from spider_engine import Board, Move, variant_ids

__all__ = ["rules_cases"]


def _pick(board: Board, rng: random.Random) -> Move:
    moves = sorted(board.legal_moves, key=lambda m: m.text())
    v = board.variant
    suited = []
    for move in moves:
        if (
            move.kind == "move"
            and 0 <= move.src < len(board.cols)
            and 0 <= move.dst < len(board.cols)
        ):
            target = board.cols[move.dst]
            card = board.cols[move.src][-move.count]
            if target and v.follows(target[-1], card):
                suited.append(move)
        elif move.kind in ("set", "joker"):
            suited.append(move)
    if suited and rng.random() < 0.8:
        return rng.choice(suited)
    return rng.choice(moves)


def _illegal(board: Board, rng: random.Random) -> list[str]:
    n = len(board.cols)
    texts = ["+"]
    for _ in range(4):
        src, dst = rng.randrange(n), rng.randrange(n)
        texts.append(f"{chr(97 + src)}{rng.randint(1, 3)}{chr(97 + dst)}")
    return [t for t in texts if not board.is_legal(Move.from_text(t))]


def rules_cases(*, seeds: int = 2, steps: int = 60, extra: int = 0) -> list[dict[str, Any]]:
    """Cases from ``seeds`` games of ``steps`` moves for every variant id (``extra`` more
    games for the Spider family's bases)."""
    out: list[dict[str, Any]] = []
    for variant in variant_ids(with_options=True):
        games = seeds + (extra if variant.startswith("spider") and "+" not in variant else 0)
        for seed in range(games):
            rng = random.Random(f"{variant}/{seed}")
            board = Board.deal(variant, f"web-{seed}")
            actions = 0
            for _ in range(steps):
                moves = board.legal_moves.texts()
                case: dict[str, Any] = {
                    "position": board.text(),
                    "moves": moves,
                    "view": board.view_text(),
                    "view_moves": Board.from_text(board.view_text()).legal_moves.texts(),
                    "illegal": {
                        t: board.explain_illegal(Move.from_text(t)) for t in _illegal(board, rng)
                    },
                    "actions": actions,
                    "classic": board.classic_score(actions),
                    "suited": board.suited_score() if board.variant.suited_score else None,
                    "won": board.is_won(),
                }
                if moves:
                    move = _pick(board, rng)
                    board.push(move)
                    actions += 1
                    case["move"] = move.text()
                    case["after"] = board.text()
                out.append(case)
                if not moves:
                    break
    return out
