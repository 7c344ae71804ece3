"""`python -m leaderboard.dataset_card`: the old spelling of `python -m leaderboard.board.dataset_card`, which it runs."""
from leaderboard import forward_entry_point

forward_entry_point(__name__, "leaderboard.board.dataset_card")
