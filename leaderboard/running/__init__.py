"""Running evaluations: the periodic tick (scheduler), one attempt of a request (attempt), the evaluator as a
subprocess (evaluator_process), the standalone worker (worker), Hugging Face Jobs (job_dispatch: start, watch,
adopt; hf_jobs: what a Job runs; job_flavors: hardware per model size; job_run: the in-Job entry point),
grading stored runs again (rescore), and this machine's Hub cache and free disk after a run (model_cache).

Imports board (publishing), submissions (records, the claim / lease protocol), store and settings; never ui.
"""
