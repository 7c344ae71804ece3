"""Turns one evaluation request into results.json and per-question details. Knows nothing of Gradio or the store."""
