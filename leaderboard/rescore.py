"""`python -m leaderboard.rescore`: the old spelling of `python -m leaderboard.running.rescore`, which it runs."""
from leaderboard import forward_entry_point

forward_entry_point(__name__, "leaderboard.running.rescore")
