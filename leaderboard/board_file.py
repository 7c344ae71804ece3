"""`python -m leaderboard.board_file`: the old spelling of `python -m leaderboard.board.file`, which it runs."""
from leaderboard import forward_entry_point

forward_entry_point(__name__, "leaderboard.board.file")
