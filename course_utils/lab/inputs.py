"""What a learner may type or pass to the lab, turned into a usable value and a message (never an error).

Each ``validate_*`` returns ``(value to use, message or None)``: a good value and None, a clamped value
and what was clamped, or the value to keep and why the input was refused.
"""

import math

import numpy as np

LR_RANGE = (1e-3, 10.0)
STEPS_RANGE = (10, 500)
MOMENTUM_RANGE = (0.0, 0.99)


def parse_number(value, name):
    """Return (float, None) or (None, message) for anything a learner may type or pass."""
    if isinstance(value, str):
        if not value.strip():
            return None, f"{name}: the box is empty; type a number, e.g. 0.5, then press Enter"
        try:
            value = float(value.strip())
        except ValueError:
            return None, f"{name}: {value!r} is not a number"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None, f"{name}: expected a number, got {type(value).__name__}"
    try:
        value = float(value)
    except OverflowError:  # an int beyond float range: as far off the range as inf
        value = math.inf if value > 0 else -math.inf
    if math.isnan(value):
        return None, f"{name}: NaN is not a value you can train with"
    return value, None


def validate_lr(lr, keep):
    value, problem = parse_number(lr, "learning rate")
    if problem:
        return keep, f"{problem}; kept lr={keep:.4g}"
    if value <= 0:
        return keep, f"learning rate must be > 0 (got {value:g}); kept lr={keep:.4g}"
    low, high = LR_RANGE
    if value < low:
        return low, f"learning rate {value:g} is below the lab's range; clamped to {low:g}"
    if value > high:
        return high, f"learning rate {value:g} is above the lab's range; clamped to {high:g}"
    return value, None


def validate_steps(steps, keep):
    value, problem = parse_number(steps, "steps")
    if problem:
        return keep, f"{problem}; kept {keep} steps"
    low, high = STEPS_RANGE
    rounded = int(min(max(round(min(max(value, -1e18), 1e18) / 10) * 10, low), high))
    if rounded != value:
        return rounded, f"steps must be a multiple of 10 in [{low}, {high}] (got {value:g}); using {rounded}"
    return rounded, None


def validate_momentum(momentum, keep):
    value, problem = parse_number(momentum, "momentum β")
    if problem:
        return keep, f"{problem}; kept β={keep:.2f}"
    low, high = MOMENTUM_RANGE
    if not low <= value <= high:
        clamped = min(max(value, low), high)
        return clamped, f"momentum β must be in [{low:g}, {high:g}] (got {value:g}); using {clamped:g}"
    return round(value, 2), None


def validate_optimizer(name, keep, options):
    if isinstance(name, str):
        for option in options:
            if option.lower() == name.strip().lower():
                return option, None
    return keep, f"optimizer must be one of {', '.join(options)} (got {name!r}); kept {keep}"
