"""What a learner may type or pass to the lab, turned into a usable value and a message (never an error).

Each ``validate_*`` returns ``(value to use, message or None)``: a good value and None, a clamped value
and what was clamped, or the value to keep and why the input was refused.
"""

import math

import numpy as np

from course_utils.messages import t

LR_RANGE = (1e-3, 10.0)
STEPS_RANGE = (10, 500)
MOMENTUM_RANGE = (0.0, 0.99)


def parse_number(value, name):
    """Return (float, None) or (None, message) for anything a learner may type or pass."""
    if isinstance(value, str):
        if not value.strip():
            return None, t("{name}: the box is empty; type a number, e.g. 0.5, then press Enter", name=name)
        try:
            value = float(value.strip())
        except ValueError:
            return None, t("{name}: {value!r} is not a number", name=name, value=value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None, t("{name}: expected a number, got {kind}", name=name, kind=type(value).__name__)
    try:
        value = float(value)
    except OverflowError:  # an int beyond float range: as far off the range as inf
        value = math.inf if value > 0 else -math.inf
    if math.isnan(value):
        return None, t("{name}: NaN is not a value you can train with", name=name)
    return value, None


def validate_lr(lr, keep):
    value, problem = parse_number(lr, t("learning rate"))
    if problem:
        return keep, t("{problem}; kept lr={keep:.4g}", problem=problem, keep=keep)
    if value <= 0:
        return keep, t("learning rate must be > 0 (got {value:g}); kept lr={keep:.4g}", value=value, keep=keep)
    low, high = LR_RANGE
    if value < low:
        return low, t("learning rate {value:g} is below the lab's range; clamped to {low:g}", value=value, low=low)
    if value > high:
        return high, t("learning rate {value:g} is above the lab's range; clamped to {high:g}", value=value, high=high)
    return value, None


def validate_steps(steps, keep):
    value, problem = parse_number(steps, t("steps"))
    if problem:
        return keep, t("{problem}; kept {keep} steps", problem=problem, keep=keep)
    low, high = STEPS_RANGE
    rounded = int(min(max(round(min(max(value, -1e18), 1e18) / 10) * 10, low), high))
    if rounded != value:
        return rounded, t("steps must be a multiple of 10 in [{low}, {high}] (got {value:g}); using {rounded}",
                          low=low, high=high, value=value, rounded=rounded)
    return rounded, None


def validate_momentum(momentum, keep):
    value, problem = parse_number(momentum, t("momentum β"))
    if problem:
        return keep, t("{problem}; kept β={keep:.2f}", problem=problem, keep=keep)
    low, high = MOMENTUM_RANGE
    if not low <= value <= high:
        clamped = min(max(value, low), high)
        return clamped, t("momentum β must be in [{low:g}, {high:g}] (got {value:g}); using {clamped:g}",
                          low=low, high=high, value=value, clamped=clamped)
    return round(value, 2), None


def validate_optimizer(name, keep, options):
    if isinstance(name, str):
        for option in options:
            if option.lower() == name.strip().lower():
                return option, None
    return keep, t("optimizer must be one of {options} (got {name!r}); kept {keep}", options=", ".join(options),
                   name=name, keep=keep)
