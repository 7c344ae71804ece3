"""`python -m leaderboard.worker`: the old spelling of `python -m leaderboard.running.worker`, which it runs."""
from leaderboard import forward_entry_point

forward_entry_point(__name__, "leaderboard.running.worker")
