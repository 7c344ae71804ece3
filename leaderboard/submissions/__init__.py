"""Requests: the words a record is made of (vocabulary), records and the claim / lease / recover protocol (records),
the checks a submission passes (checks), what it answers and its duplicate (outcomes), with the facts about a model
(model_inspection) and the limits per person and organisation (limits), who the visitor is (identity) and the
sign-outs that end their sessions (sessions), admin actions on a request (actions), and the queue as tables (views).

Imports store, settings and formatting; never board, explorer, running or ui.
"""
