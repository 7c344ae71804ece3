"""Reading a run's inputs: benchmark data, images, prompt texts and model ids.

- sources.py: where benchmark data comes from: hf://datasets/... references (through the Hub cache) and http(s)
  downloads, shared by the benchmarks' loaders.
- images.py: a benchmark image from a local file, or from an http(s) URL once into an on-disk cache.
- prompt_files.py: a benchmark package's prompt texts, read from its prompts/ folder and hashed into the results.
- model_ids.py: the one rule for a Hub model id (org/name).

Imports nothing of the evaluator outside this room; the benchmarks, the judge, the runs and the Space (through
evaluator.api) read their inputs through it. Importing this package imports none of its modules.
"""
