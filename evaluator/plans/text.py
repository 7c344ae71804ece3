"""A plan in words: what `python -m evaluator plan` prints and the Space shows (plain text, no markup; the Space
escapes it)."""
from __future__ import annotations

from evaluator.plans.engines import STYLE, TRANSFORMERS, figures
from evaluator.plans.estimate import JUDGE_CALL_S, JUDGE_IN_FLIGHT, BenchmarkPlan, Priced, RunPlan

LABELS = {"prompts": "option scorings and prompts", "generation": "answers", "loading": "start"}


def count(value: float) -> str:
    """A count as the plan prints it: "1,956", "1.2 M", "3.4 B"."""
    value = float(value)
    if value >= 1e9:
        return f"{value / 1e9:.1f} B"
    if value >= 1e6:
        return f"{value / 1e6:.1f} M"
    return f"{value:,.0f}"


def duration(seconds: float) -> str:
    """"0:18" (hours:minutes), "3 d 4:05" past a day, "<0:01" under a minute."""
    minutes = round(seconds / 60.0)
    if seconds > 0 and minutes == 0:
        return "<0:01"
    days, minutes = divmod(minutes, 24 * 60)
    text = f"{minutes // 60}:{minutes % 60:02d}"
    return f"{days} d {text}" if days else text


def money(usd: float | None) -> str:
    if usd is None:
        return "price unknown"
    return "<$0.01" if 0 < usd < 0.005 else f"${usd:,.2f}"


def calls_text(b: BenchmarkPlan) -> str:
    """"1,956 option scorings", "1,000 generations", or both."""
    parts = []
    if b.total("generations"):
        parts.append(f"{count(b.total('generations'))} generations")
    if b.total("scorings"):
        parts.append(f"{count(b.total('scorings'))} option scorings ({count(b.total('options'))} options)")
    return " + ".join(parts) or "none"


def benchmark_lines(run: RunPlan) -> list[str]:
    lines = []
    for b in run.benchmarks:
        if b.skipped:
            lines.append(f"  {b.name}: {b.skipped}")
            continue
        w = b.workload
        budget = f"{count(b.total('new_tokens'))} answer tokens" if b.total("new_tokens") else "no answer tokens"
        if b.thinking_tokens:
            budget += f" + {count(b.total('thinking'))} thinking ({b.thinking_tokens:,} a generation)"
        judge = "; no judge"
        if b.total("judge_calls"):
            judge = (f"; judge: {count(b.total('judge_calls'))} calls, {count(b.total('judge_prompt_tokens'))} prompt "
                     f"+ {count(b.total('judge_new_tokens'))} reply tokens at most")
        lines.append(f"  {b.name}: {w.items:,} items; {calls_text(b)}; {budget}, "
                     f"{count(b.total('prompt_tokens'))} prompt tokens{judge}")
        kinds = ", ".join(f"{p.kind}: {p.items:,}" for p in w.parts)
        lines.append(f"    per item: {w.parts[0].how if w.parts else 'nothing'}")
        lines.append(f"    items: {kinds} ({w.basis})")
    return lines


def priced_line(p: Priced) -> str:
    price = (f"{money(p.usd)} at ${p.hardware.usd_per_hour:,.2f}/h" if p.hardware.usd_per_hour is not None
             else f"no price ({p.hardware.price_basis})")
    start = "server start" if p.hardware.served is not None else "loading"
    return (f"  {p.hardware.name:<14} {duration(p.seconds):>9}  (model {duration(p.model_s)}, {start} "
            f"{duration(p.load_s)}, judge {duration(p.judge_s)})  {price}")


def figure_lines(run: RunPlan) -> list[str]:
    """What each record's figures are and where each comes from: measured (GPU, date), published (source) or
    assumed (source)."""
    lines, seen = [], set()
    for p in run.priced:
        machine = p.hardware
        record = machine.served or machine.measured
        if (machine.engine, record.key) in seen:
            continue
        seen.add((machine.engine, record.key))
        about = f" ({record.model}, {record.version})" if machine.served is not None else ""
        lines.append(f"  {machine.engine} on {record.hardware}, {record.params_billions:g} B parameters{about}:")
        for name, figure in figures(machine).items():
            lines.append(f"    {LABELS[name]}: {figure.value:,g} {figure.words}: {figure.mark()} ({figure.basis})")
    return lines


def plan_lines(run: RunPlan) -> list[str]:
    """The whole plan, as `python -m evaluator plan` prints it."""
    f = run.facts
    lines = [f"plan: {f.name} ({f.architecture}), suite {run.suite}"
             + (f", limit {run.limit}" if run.limit else "") + f", thinking {run.thinking_note}",
             f"  engine: {run.engine} ({STYLE[run.engine]})",
             f"  parameters: {f.params / 1e9:.2f} B ({f.params_basis})",
             f"  image tokens: {f.image_tokens:,.0f} a picture ({f.image_basis})" if f.has_vision else
             "  text only: the benchmarks with images are skipped",
             "benchmarks:", *benchmark_lines(run),
             f"in all: {count(run.total('generations'))} generations, {count(run.total('scorings'))} option scorings, "
             f"{count(run.total('new_tokens') + run.total('thinking'))} answer tokens at most, "
             f"{count(run.total('judge_calls'))} judge calls",
             "hours (h:mm, days as \"d\") and dollars, at most (every answer counted at its full budget):"]
    lines += [priced_line(p) for p in run.priced] or ["  (no machine holds this model)"]
    lines.append("what the figures rest on:")
    lines += figure_lines(run)
    if run.engine != TRANSFORMERS:
        lines.append(f"  {run.engine}: its figures are published, not measured here (bench/gpu_check.py measures "
                     "transformers'); a question scored by likelihood is 1 + K requests (its prompt, then each of its "
                     "K options), each a full prefill with max_tokens=1 and prompt log-probabilities; every answer "
                     "token is counted at the decode rate, and no batch waits for its longest reply")
    for p in run.priced:
        if p.hardware.slowdown != 1.0 or p.hardware.gpus > 1:
            lines.append(f"  {p.hardware.name}: {p.hardware.speed_basis}; price: {p.hardware.price_basis}")
    lines.append(f"  the judge: {JUDGE_CALL_S:g} s a call, {JUDGE_IN_FLIGHT} in flight (assumed, not measured); "
                 "the machine waits for it, and is paid for")
    lines.append("  model size: the figures scale with the parameters a token reads; prompts with the tokens they "
                 "hold, images included")
    return lines


def summary(run: RunPlan, flavor: str) -> str:
    """One sentence for the Space: "at most 0:18 on a100-large ($0.75): 1,956 option scorings, ..."."""
    p = run.on(flavor)
    head = f"at most {duration(p.seconds)} on {flavor} ({money(p.usd)})" if p is not None else "not priced"
    return (f"{head}: {count(run.total('generations'))} generations, {count(run.total('scorings'))} option scorings, "
            f"{count(run.total('new_tokens') + run.total('thinking'))} answer tokens, "
            f"{count(run.total('judge_calls'))} judge calls ({run.suite} suite, thinking {run.thinking}"
            + ("" if run.engine == TRANSFORMERS else f", on {run.engine}") + ")")
