"""Remote endpoints: the only code that calls an OpenAI-compatible server, for the judge and for served models.

- names.py: `endpoint:<base url>|<model>` checked, a URL's public form, the short name shown for an endpoint.
- chat_client.py: one chat-completions endpoint through the `openai` client, every call within the limits.
- limits.py: those limits, a deadline for the whole call and a cap on the answer's bytes, read from the settings.
- bounded_http.py: the HTTP client under chat_client.py that enforces them on every socket operation.
- decoding.py: a compressed answer's Content-Encoding undone under the cap, or refused with one line.
- redaction.py: the one redactor that keeps tokens and other secrets out of text that is stored, shown or logged.

Imports nothing of the evaluator outside this room. Two modules build a ChatClient and so reach an endpoint:
evaluator.judge.endpoint (the endpoint judge) and evaluator.models.served (a served model); the rest of the
evaluator calls an endpoint through them. Importing this package imports none of its modules.
"""
