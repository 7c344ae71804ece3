"""The board and the results dataset: every column and view (columns), what compares and how a run is noted
(views), a view as a table (frames), leaderboard.parquet a run's row at a time (file), a finished run into the
store (publish), the dataset's card (dataset_card), and the Space's shared copy of the board (space_copy).

Imports settings, store and submissions (the request's vocabulary and records); never the explorer, running or ui.
"""
