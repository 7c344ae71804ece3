"""The Explorer: one run's details of one benchmark read once into a bounded cache (details_cache), its questions
filtered, sorted, paged, grouped and compared (queries), what the tab and its API show (views), and an opened
question as escaped HTML (item_html).

Imports board (the Space's copy of the board, frames), submissions (run keys), store and settings; never running or ui.
"""
