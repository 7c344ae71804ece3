"""The Space: a Gradio leaderboard over a store of requests and results, in rooms by role.

    settings/       every setting, declared once; readers.py: how a value's text is read
                                                            (imports nothing of ours but job_flavors' table)
    formatting.py   the one Markdown escaper, numbers, times
    store/          where requests, results and details live (local folder or Hub dataset repos)
    submissions/    requests: records and the claim / lease protocol, submission checks, identity, limits, actions
    board/          the board and the results dataset: columns, views, leaderboard.parquet, publishing, the card
    explorer/       one run's questions: details cache, queries, views, an opened question's HTML
    running/        running evaluations: scheduler, one attempt, the evaluator subprocess, worker, Jobs, rescore
    ui/             the Gradio app, one module per tab

Imports point down this list's order of rooms (ui > running, explorer > board > submissions > store > settings);
the Space imports one module of the evaluator, evaluator.api. Its commands live in their rooms
(`python -m leaderboard.running.worker`, `leaderboard.running.rescore`, `leaderboard.board.file`,
`leaderboard.board.dataset_card`); console_logging is how the Space and the worker show their log lines.
"""
from __future__ import annotations

import logging

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def console_logging() -> None:
    """What the Space and the worker log reaches the console: their own INFO lines (an admin's action, a model
    deleted from the Hub cache, ...) and everyone's warnings, on stderr. Logging already configured is kept."""
    logging.basicConfig(level=logging.WARNING, format=LOG_FORMAT)
    logging.getLogger(__name__).setLevel(logging.INFO)

