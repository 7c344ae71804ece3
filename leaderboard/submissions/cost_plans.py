"""A request's cost plan as recorded (`Request.cost_plan`, made at submission by leaderboard.submissions.planning),
read back, shown, and held against the Jobs budget.

    {"flavor": the hardware it is priced on (a Jobs flavor, "cpu", or "h200" for a local GPU),
     "hours": its hours at most, "usd": its dollars at most (None: no price), "usd_per_hour": its price (None),
     "suite": the suite planned, "thinking": "on" or "off" (whether a thinking budget is counted),
     "summary": the plan in one sentence (evaluator.api.plan_summary's words), "basis": what its price rests on,
     "engine": what runs the model ("transformers" or "vllm", LEADERBOARD_ENGINE for a Job),
     "figures": each figure it was priced with ("prompts", "generation", "loading") marked "measured (GPU, date)",
     "published (source)" or "assumed (source)" (evaluator.api.plan_marks)}

A request without one (submitted before plans were recorded), or whose record cannot be read, is "not planned":
never an error; one recorded before engines were (no "engine", no "figures") reads as transformers', unmarked. The
Jobs budget's rule for a plan (over_budget): with LEADERBOARD_EXECUTOR=hf-jobs and LEADERBOARD_JOBS_BUDGET_USD above
0, a plan whose dollars (its hours x its flavor's price: the Hub's as last read where known, else its own) are more
than the whole budget is refused at submission, and a pending request holding one is failed by the dispatcher: it
would never fit. A budget of 0 pauses the Jobs and refuses nothing.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

from evaluator import api
from leaderboard.formatting import money

NOT_PLANNED = "not planned"


@dataclass(frozen=True)
class CostPlan:
    """What a request's run will cost at most, on the hardware it runs on (module docstring)."""

    flavor: str
    hours: float
    usd: float | None
    usd_per_hour: float | None
    suite: str
    thinking: str
    summary: str
    basis: str
    engine: str = "transformers"
    figures: dict[str, str] = field(default_factory=dict)

    def record(self) -> dict:
        return {key: round(value, 6) if isinstance(value, float) else value for key, value in asdict(self).items()}

    def cell(self) -> str:
        """The Queue's Plan cell: "0:24 · $0.80 on a100-large", or "0:24 on cpu (no price)"."""
        time = api.plan_duration(self.hours * 3600.0)
        return f"{time} · {money(self.usd)} on {self.flavor}" if self.usd is not None else \
            f"{time} on {self.flavor} (no price)"


def _amount(value, optional: bool) -> bool:
    if value is None:
        return optional
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def as_cost_plan(record) -> CostPlan | None:
    """A request's stored cost_plan read back; None when it has none or it cannot be read (a field missing, of
    another kind, or a negative or infinite amount)."""
    if not isinstance(record, dict):
        return None
    unset = {"summary": "", "basis": "", "engine": "transformers", "figures": {}}
    values = {f.name: record.get(f.name, unset.get(f.name)) for f in fields(CostPlan)}
    texts = ("flavor", "suite", "thinking", "summary", "basis", "engine")
    marks = values["figures"]
    if not all(isinstance(values[name], str) for name in texts) or not values["flavor"] \
            or not _amount(values["hours"], False) \
            or not all(_amount(values[name], True) for name in ("usd", "usd_per_hour")) \
            or not isinstance(marks, dict) or not all(isinstance(v, str) for v in [*marks, *marks.values()]):
        return None
    return CostPlan(**values)


def plan_cell(record) -> str:
    """A request's recorded plan as the Queue shows it; NOT_PLANNED without one."""
    plan = as_cost_plan(record)
    return plan.cell() if plan is not None else NOT_PLANNED


def over_budget(settings, plan: CostPlan | None, rates: dict[str, float] | None = None) -> str:
    """Why a plan cannot run within the Jobs budget ("" when it can, or when no rule applies: the local executor, no
    budget or a budget of 0, no plan, or no price): "Its plan: at most 3:12 on a100-large at $2.50/h = $8.00 (full
    suite, thinking off), more than this leaderboard's Jobs budget of $5.00 per 7 days". `rates`: the Hub's prices
    as last read (flavor -> dollars an hour), which stand before the plan's own."""
    budget = settings.jobs_budget_usd
    if settings.executor != "hf-jobs" or budget is None or budget <= 0 or plan is None:
        return ""
    rate = (rates or {}).get(plan.flavor, plan.usd_per_hour)
    if rate is None or plan.hours * rate <= budget + 1e-9:
        return ""
    return (f"Its plan: at most {api.plan_duration(plan.hours * 3600.0)} on {plan.flavor} at ${rate:,.2f}/h = "
            f"{money(plan.hours * rate)} ({plan.suite} suite, thinking {plan.thinking}), more than this "
            f"leaderboard's Jobs budget of {money(budget)} per {settings.jobs_budget_days:g} days")
