"""What a run will cost, counted before it runs: `python -m evaluator plan` and the Space's plan of every request.

- facts.py: what a model's folder tells about its cost (parameters in all and active per token, image tokens per
  picture, whether it thinks), from its weights' headers or its config.json alone.
- costs.py: the measured per-call costs (measured.json: a GPU's and the CPU's, each saying what it rests on), the
  Jobs flavors' relative speed and list prices.
- engines.py: the engine a run is priced on (transformers' static batches from measured.json, or vLLM's continuous
  batching from published.json: its published throughput until a GPU measures it) and each figure's mark (measured,
  published or assumed, with its GPU and date or its source).
- estimate.py: a run's plan: per benchmark its items, model calls, token budgets (thinking included) and judge
  calls (each benchmark's `workload`), and its hours and dollars on each flavor.
- text.py: the plan as the CLI prints it and the Space shows it.

May import the benchmarks, models, metrics, inputs and runs rooms (runs: the preflight's config.json fetch); no room
imports it, only the package's top (`__main__`, `api`). Importing this package imports none of its modules.
"""
