"""Running one evaluation and writing its files: what `python -m evaluator run` and `rescore` do.

- runner.py: a request's benchmarks for one model, each planned, executed, stored raw, then scored; results.json.
- executor.py: the one executor, which asks the model every request of a plan, a chunk of items at a time.
- journal.py: every model response recorded as it comes, so a run of the same request started again reuses it.
- details.py: the details files (one parquet per benchmark, with the card's columns and types), read and written.
- progress.py: progress.json (the scheduler copies it into the request) and the log's progress bar.
- files.py: what a run folder records about itself: atomic writes, JSON without NaN, library versions, the commit.
- rescore.py: a stored run graded again with another judge, without the model.
- preflight.py: what a run's configuration already tells, said before any model loads.
- parent_watch.py: an evaluator started by a worker never outlives it.

May import every other room of the evaluator (benchmarks, models, judge, metrics, endpoints, inputs); no room
imports it, only the package's top (`__main__`, `api`). Importing this package imports none of its modules.
"""
