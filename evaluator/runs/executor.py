"""The one executor: runs a benchmark's Asks on the model and writes the raw answers into its details rows.

Items run in chunks of `batch_size` items, in the plan's order. For each chunk the items' images are fetched, the
option-scoring Asks go to the model in one score_options_many() call where the adapter has it (it processes,
prefills and scores them in batches of its own; else they are scored one by one), and every generation Ask of the chunk
goes to the model in one generate() call, which the adapter splits into batches of requests that share temperature and
seed (and backs off by halving the batch on out-of-memory). The same batch size therefore gives the same batches, and a
greedy answer depends on its batch only past a near tie, which its row records (near_ties). Progress is reported in
items and requests as the model answers: after each of the adapter's batches where its generate_results and
score_options_many take an `on_answered` callback (it only listens), else after each call.

A generated answer that ran out of its max_new_tokens budget is marked in a row that has a "hit_token_limit" column
(a benchmark opts in by giving its rows that column) where the adapter says how the completion ended.

An item whose images cannot be fetched is not dropped: its rows get status "image_unavailable" and the reason,
and the benchmark's score counts them and leaves them out.

With a responses journal (evaluator.runs.journal), `replay` first fills every item the journal answered in full, and
`execute` runs only the rest, appending each chunk's fresh answers to the journal: a run that starts again after a
kill makes only the model requests the stopped one had not finished.
"""
from __future__ import annotations

import inspect
import json
import time
from dataclasses import dataclass, field
from typing import Callable

from evaluator.benchmarks.spec import ROW_IMAGE_UNAVAILABLE, Ask, Plan
from evaluator.inputs.images import ImageUnavailable
from evaluator.models.base import GenerationResult, OptionScore
from evaluator.runs.journal import Journal

LIMIT_COLUMN = "hit_token_limit"  # a row with this column learns whether its answer hit max_new_tokens
TOKENS = "tokens"  # a journal entry's [prompt tokens, completion tokens], where the adapter counted them
THOUGHT = "thought"  # a journal entry's thought and near ties: those of the columns below that the reply has
# the details columns of a generated answer's thought and near ties (every card declares them: spec.THOUGHT_COLUMNS)
REASONING, REASONING_TOKENS, THOUGHT_UNCLOSED, NEAR_TIES = ("reasoning", "reasoning_tokens", "thought_unclosed",
                                                             "near_ties")


def prompt_as_sent(model, request, scoring: bool = False) -> str:
    """The prompt text the model receives for a request (its chat template applied; for option scoring, the prompt
    its options follow, where the adapter says it differs)."""
    build = getattr(model, "scoring_prompt", None) if scoring else None
    build = build if callable(build) else getattr(model, "build_prompt", None)
    return build(request) if callable(build) else request.text


def option_scores_json(scores: list[OptionScore]) -> str:
    """The details column "option_scores": every option's summed and per-token mean log-likelihood."""
    return json.dumps([{"sum": s.sum_logprob, "mean": s.mean_logprob, "n_tokens": s.n_tokens} for s in scores])


def _by_item(asks: list[Ask]) -> dict[str, list[Ask]]:
    grouped: dict[str, list[Ask]] = {}
    for ask in asks:
        grouped.setdefault(ask.item, []).append(ask)
    return grouped


def _mark_unavailable(plan: Plan, item: str, reason: str) -> None:
    for row in (row for row in plan.rows if row.get("question_id") == item):
        row["status"], row["error"] = ROW_IMAGE_UNAVAILABLE, reason


def _fetch_images(asks: list[Ask]) -> None:
    """Fill each Ask's request images (one fetch per loader); ImageUnavailable propagates."""
    fetched: dict[int, list] = {}
    for ask in asks:
        if ask.images is not None:
            if id(ask.images) not in fetched:
                fetched[id(ask.images)] = ask.images()
            ask.request.images = list(fetched[id(ask.images)])


def _answer_field(ask: Ask) -> str:
    """The details column an Ask's answer goes into: "prediction" (generation) or "option_scores"."""
    return "prediction" if ask.options is None else "option_scores"


def _fill(ask: Ask, answer: str, prompt: str, hit_limit: bool | None = None, thought: dict | None = None) -> None:
    for row in ask.rows:
        row[_answer_field(ask)], row["prompt"] = answer, prompt
        if hit_limit is not None and LIMIT_COLUMN in row:
            row[LIMIT_COLUMN] = hit_limit
        if thought is not None:
            row.update(thought)


def thought_fields(out: GenerationResult) -> dict | None:
    """A completion's details columns besides its answer: its thought (reasoning, reasoning_tokens, thought_unclosed)
    where the adapter knows the model's thought markers, and its near ties (models.near_ties) where it watched them;
    None when neither (nothing to say)."""
    fields = {}
    if out.thought is not None or out.thought_tokens is not None or out.thought_unclosed:
        fields = {REASONING: out.thought or "", REASONING_TOKENS: out.thought_tokens,
                  THOUGHT_UNCLOSED: bool(out.thought_unclosed)}
    if getattr(out, NEAR_TIES, None) is not None:
        fields[NEAR_TIES] = out.near_ties_cell()
    return fields or None


def _thought_entry(value) -> dict | None:
    """A journal entry's thought and near ties, checked (None when absent or not one)."""
    if not isinstance(value, dict):
        return None
    tokens, fields = value.get(REASONING_TOKENS), {}
    if any(key in value for key in (REASONING, REASONING_TOKENS, THOUGHT_UNCLOSED)):
        fields = {REASONING: str(value.get(REASONING) or ""),
                  REASONING_TOKENS: tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
                  THOUGHT_UNCLOSED: value.get(THOUGHT_UNCLOSED) is True}
    if isinstance(value.get(NEAR_TIES), str):
        fields[NEAR_TIES] = value[NEAR_TIES]
    return fields or None


def _with_callback(method, tell: Callable[[list[int]], None]) -> dict:
    """The keyword arguments that hand `tell` to an adapter method as its on_answered callback, where it takes one."""
    try:
        takes = "on_answered" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        takes = False
    return {"on_answered": tell} if takes else {}


@dataclass
class _Tally:
    """A benchmark's count as the model answers: items done (an item is done once all its Asks are) and model
    requests answered of those planned, told to `report` as (done, total, requests=(answered, planned))."""

    report: Callable[..., None]
    total: int
    done: int
    planned: int
    answered: int = 0
    left: dict[str, int] = field(default_factory=dict)  # an item being answered -> its Asks not answered yet

    def tell(self) -> None:
        self.report(self.done, self.total, requests=(self.answered, self.planned))

    def begin(self, asks: list[Ask]) -> None:
        """A chunk's Asks are about to be sent."""
        for ask in asks:
            self.left[ask.item] = self.left.get(ask.item, 0) + 1

    def finished(self, asks: list[Ask]) -> None:
        """The model answered these Asks."""
        for ask in asks:
            self.left[ask.item] -= 1
            if self.left[ask.item] == 0:
                del self.left[ask.item]
                self.done += 1
        self.answered += len(asks)
        self.tell()

    def callback(self, asks: list[Ask]) -> Callable[[list[int]], None]:
        """An adapter's on_answered for a call over `asks`: it is told the indices of each batch it answered."""
        return lambda indices: self.finished([asks[i] for i in indices])


def _score(model, asks: list[Ask], tally: _Tally) -> list[tuple[str, str]]:
    """The option-scoring Asks of a chunk, handed to the model at once where it scores many questions together
    (score_options_many), else one by one: (the option_scores text, the prompt as sent) of each. No scoring Ask
    depends on another's answer (a plan asks everything up front), so none waits for another."""
    if not asks:
        return []
    many = getattr(model, "score_options_many", None)
    if callable(many):
        hook = _with_callback(many, tally.callback(asks))
        all_scores = list(many([(ask.request, ask.options) for ask in asks], **hook))
        if not hook:
            tally.finished(asks)
    else:
        all_scores = []
        for ask in asks:
            all_scores.append(model.score_options(ask.request, ask.options))
            tally.finished([ask])
    if len(all_scores) != len(asks):
        raise RuntimeError(f"the model scored {len(all_scores)} questions of {len(asks)}")
    answers = []
    for ask, scores in zip(asks, all_scores):
        if len(scores) != len(ask.options):
            raise RuntimeError(f"the model scored {len(scores)} options of {len(ask.options)}")
        answers.append((option_scores_json(scores), prompt_as_sent(model, ask.request, scoring=True)))
    return answers


def _results(model, asks: list[Ask], tally: _Tally) -> list[GenerationResult]:
    """The model's completions with how each ended (generate_results), or its bare texts (generate); the tally
    hears of each batch where the adapter takes on_answered, else of the whole call."""
    requests = [ask.request for ask in asks]
    rich = getattr(model, "generate_results", None)
    method = rich if callable(rich) else model.generate
    hook = _with_callback(method, tally.callback(asks))
    outputs = list(method(requests, **hook))
    if not callable(rich):
        outputs = [GenerationResult(text) for text in outputs]
    if not hook:
        tally.finished(asks)
    return outputs


def _tokens(out: GenerationResult) -> tuple[int | None, int | None] | None:
    """(prompt tokens, completion tokens) of a completion where the adapter counted either; else None."""
    counts = (getattr(out, "prompt_tokens", None), out.n_tokens)
    return counts if any(isinstance(c, int) for c in counts) else None


def _generate(model, asks: list[Ask], tally: _Tally) -> list[tuple[str, str, bool | None, tuple | None, dict | None]]:
    """One generation call for the Asks: (the answer, the prompt as sent, whether it hit max_new_tokens, its token
    counts, its thought's details columns) of each."""
    if not asks:
        return []
    outputs = _results(model, asks, tally)
    if len(outputs) != len(asks):
        raise RuntimeError(f"the model returned {len(outputs)} completions for {len(asks)} prompts")
    return [(out.text if isinstance(out.text, str) else "", prompt_as_sent(model, ask.request), out.hit_limit,
             _tokens(out), thought_fields(out)) for ask, out in zip(asks, outputs)]


def _entry(key: str, ask: Ask, answer: str, prompt: str, hit_limit: bool | None, tokens: tuple | None,
           thought: dict | None = None) -> dict:
    """An answer's journal entry (with whether it hit max_new_tokens, its token counts and its thought, when the
    adapter said)."""
    entry = {"key": key, "item": ask.item, _answer_field(ask): answer, "prompt": prompt}
    if hit_limit is not None:
        entry[LIMIT_COLUMN] = hit_limit
    if tokens is not None:
        entry[TOKENS] = list(tokens)
    if thought is not None:
        entry[THOUGHT] = thought
    return entry


@dataclass
class Usage:
    """Tokens the model's answers counted (a served model's usage): prompt and completion tokens, over `answers`
    answers that said (journaled answers included, so a resumed run counts what all its attempts used)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    answers: int = 0

    def add(self, tokens) -> None:
        if not isinstance(tokens, (list, tuple)) or len(tokens) != 2:
            return
        counts = [c if isinstance(c, int) and not isinstance(c, bool) and c >= 0 else None for c in tokens]
        if counts == [None, None]:
            return
        self.prompt_tokens += counts[0] or 0
        self.completion_tokens += counts[1] or 0
        self.answers += 1


@dataclass
class Thoughts:
    """A benchmark's generated replies and their thoughts: replies counted, those with a thought, those that ended
    inside their thought (no answer), and the tokens spent on thoughts and on answers (over the replies whose counts
    the adapter gave)."""

    replies: int = 0
    with_thought: int = 0
    unclosed: int = 0
    reasoning_tokens: int = 0
    answer_tokens: int = 0

    def add(self, thought: dict | None, tokens) -> None:
        self.replies += 1
        if thought is None:
            return
        spent = thought.get(REASONING_TOKENS)
        self.with_thought += 1 if (thought.get(REASONING) or thought.get(THOUGHT_UNCLOSED)) else 0
        self.unclosed += 1 if thought.get(THOUGHT_UNCLOSED) else 0
        if isinstance(spent, int):
            self.reasoning_tokens += spent
            completion = tokens[1] if isinstance(tokens, (list, tuple)) and len(tokens) == 2 else None
            if isinstance(completion, int) and not isinstance(completion, bool):
                self.answer_tokens += max(0, completion - spent)

    def record(self) -> dict:
        """results.benchmarks.<name>.thinking."""
        return {"replies": self.replies, "with_thought": self.with_thought, "unclosed": self.unclosed,
                "reasoning_tokens": self.reasoning_tokens, "answer_tokens": self.answer_tokens}


@dataclass
class Answered:
    """What answering a plan took: its items, those filled from the journal, and the model requests made
    (generation requests plus option-scoring calls)."""

    items: int
    reused: int = 0
    model_requests: int = 0
    generate_s: float = 0.0  # seconds in the model's generation calls
    score_s: float = 0.0  # seconds in its option-scoring calls
    usage: Usage = field(default_factory=Usage)
    thoughts: Thoughts = field(default_factory=Thoughts)


@dataclass
class Replay:
    """A plan read against its journal: each Ask's journal key (by the Ask's id) and the items the journal
    answered in full (their rows are filled)."""

    journal: Journal
    keys: dict[int, str]
    items: set[str]
    usage: Usage = field(default_factory=Usage)
    thoughts: Thoughts = field(default_factory=Thoughts)


def replay(model, plan: Plan, journal: Journal) -> Replay:
    """Fill, from the journal, the rows of every item whose Asks it all answered: no image fetched, no model call."""
    keys: dict[int, str] = {}
    grouped = _by_item(plan.asks)
    for asks in grouped.values():
        for index, ask in enumerate(asks):
            keys[id(ask)] = journal.key(ask, index, prompt_as_sent(model, ask.request, ask.options is not None))
    items, usage, thoughts = set(), Usage(), Thoughts()
    for item in plan.items:
        asks = grouped.get(item, [])
        entries = [journal.get(keys[id(ask)]) for ask in asks]
        if not asks or not all(e is not None and isinstance(e.get(_answer_field(a)), str)
                                for a, e in zip(asks, entries)):
            continue
        for ask, entry in zip(asks, entries):
            thought = _thought_entry(entry.get(THOUGHT))
            _fill(ask, entry[_answer_field(ask)], str(entry.get("prompt") or ""), entry.get(LIMIT_COLUMN), thought)
            usage.add(entry.get(TOKENS))
            if ask.options is None:
                thoughts.add(thought, entry.get(TOKENS))
        items.add(item)
    return Replay(journal, keys, items, usage, thoughts)


def _silent(done: int, total: int, requests: tuple[int, int] | None = None) -> None:
    """No progress reported."""


def execute(model, plan: Plan, batch_size: int, progress: Callable[..., None] = _silent,
            replayed: Replay | None = None) -> Answered:
    """Run every Ask of `plan` on `model`, filling the plan's rows in place. With `replayed`, the items it filled
    from the journal are skipped (they count as done from the first progress report; the chunks stay those of
    the whole plan, so the rest is batched as in a run that never stopped) and every fresh answer is appended to
    the journal after its chunk. `progress(done, total, requests=(answered, planned))` hears of each answered batch."""
    grouped = _by_item(plan.asks)
    skip = replayed.items if replayed is not None else set()
    total = len(plan.items)
    done = sum(1 for item in plan.items if item in skip)
    tally = _Tally(progress, total, done,
                   planned=sum(len(grouped.get(item, [])) for item in plan.items if item not in skip))
    size = max(1, int(batch_size or 1))
    requests = 0
    generate_s = score_s = 0.0
    usage = replayed.usage if replayed is not None else Usage()
    thoughts = replayed.thoughts if replayed is not None else Thoughts()
    tally.tell()
    for start in range(0, total, size):
        items = [item for item in plan.items[start:start + size] if item not in skip]
        if not items:
            continue
        chunk: list[Ask] = []
        for item in items:
            asks = grouped.get(item, [])
            try:
                _fetch_images(asks)
            except ImageUnavailable as exc:
                _mark_unavailable(plan, item, exc.reason)
                tally.planned -= len(asks)
                asks = []
            if not asks:  # nothing to ask: done at once
                tally.done += 1
            chunk.extend(asks)
        scored = [ask for ask in chunk if ask.options is not None]
        generated = [ask for ask in chunk if ask.options is None]
        tally.begin(chunk)
        began = time.perf_counter()
        answered = [(ask, *reply, None, None, None) for ask, reply in zip(scored, _score(model, scored, tally))]
        middle = time.perf_counter()
        answered += [(ask, *reply) for ask, reply in zip(generated, _generate(model, generated, tally))]
        score_s += middle - began
        generate_s += time.perf_counter() - middle
        requests += len(answered)
        for ask, answer, prompt, hit_limit, tokens, thought in answered:
            _fill(ask, answer, prompt, hit_limit, thought)
            usage.add(tokens)
            if ask.options is None:
                thoughts.add(thought, tokens)
        if replayed is not None:
            replayed.journal.append([_entry(replayed.keys[id(ask)], ask, *reply) for ask, *reply in answered])
        for ask in chunk:
            if ask.images is not None:
                ask.request.images = []  # the chunk is done: let its images go
        if not chunk:  # every item of the chunk was done without the model: say so
            tally.tell()
    return Answered(items=total, reused=done, model_requests=requests, generate_s=generate_s,
                    score_s=score_s, usage=usage, thoughts=thoughts)
