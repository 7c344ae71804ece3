"""Turns one evaluation request into results.json and per-question details. Knows nothing of Gradio or the store.

At its top: `__main__` (the command line, `python -m evaluator run | rescore | list-benchmarks`) and `api` (the
Space's one door to the evaluator). Everything else lives in a room by role, each importing only the rooms below it:

- runs/: running one evaluation and writing its files (runner, executor, journal, details, progress, rescore);
- benchmarks/: the registry, the contract (spec.py) and one package per benchmark;
- judge/: the LLM judge, local or behind an endpoint, and the one rule for what is a judgement;
- models/: the model adapters (transformers, served);
- metrics/: pure metric functions;
- endpoints/: remote OpenAI-compatible endpoints, their limits, and the one redactor;
- inputs/: benchmark data, images, prompt texts, model ids.
"""
