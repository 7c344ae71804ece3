"""Reading a benchmark's run options ("<benchmark>.<name>" = text, from --option and LEADERBOARD_OPTIONS).

Every reader takes the options dict, the key and the default, and raises ValueError naming the option when the
text does not fit; an unset or empty option takes the default.
"""
from __future__ import annotations

ON = ("on", "true", "1", "yes")
OFF = ("off", "false", "0", "no")


def _raw(options: dict[str, str], key: str) -> str | None:
    raw = options.get(key)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    return str(raw).strip()


def int_option(options: dict[str, str], key: str, default: int, minimum: int) -> int:
    """An integer option, at least `minimum`."""
    raw = _raw(options, key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"option {key} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"option {key} must be at least {minimum}, got {value}")
    return value


def float_option(options: dict[str, str], key: str, default: float) -> float:
    """A number option."""
    raw = _raw(options, key)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{key} must be a number, not {raw!r}") from None


def flag_option(options: dict[str, str], key: str, default: bool) -> bool:
    """An on / off option."""
    raw = _raw(options, key)
    if raw is None:
        return default
    value = raw.lower()
    if value in ON:
        return True
    if value in OFF:
        return False
    raise ValueError(f"{key} must be 'on' or 'off', got {value!r}")


def choice_option(options: dict[str, str], key: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices`."""
    raw = _raw(options, key)
    value = default if raw is None else raw
    if value not in choices:
        raise ValueError(f"{key} must be one of {', '.join(choices)}, got {value!r}")
    return value
