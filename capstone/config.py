"""Load and validate the project's YAML configuration."""

import copy
from pathlib import Path

import yaml

DEFAULT_PATH = Path(__file__).with_name("config.yaml")
OPTIMIZERS = ("adam", "momentum", "sgd")
MODES = ("graph", "pynative")

# (section, key): (type, check, what it must be)
_RULES = {
    ("data", "n_train"): (int, lambda v: v >= 8, "an int >= 8"),
    ("data", "n_val"): (int, lambda v: v >= 1, "an int >= 1"),
    ("data", "noise"): (float, lambda v: v >= 0, "a number >= 0"),
    ("data", "seed"): (int, lambda v: v >= 0, "an int >= 0"),
    ("model", "hidden"): (int, lambda v: 1 <= v <= 4096, "an int from 1 to 4096"),
    ("train", "optimizer"): (str, lambda v: v in OPTIMIZERS, f"one of {OPTIMIZERS}"),
    ("train", "learning_rate"): (float, lambda v: 0 < v <= 10, "a number in (0, 10]"),
    ("train", "epochs"): (int, lambda v: v >= 1, "an int >= 1"),
    ("train", "batch_size"): (int, lambda v: v >= 1, "an int >= 1"),
    ("train", "weight_decay"): (float, lambda v: v >= 0, "a number >= 0"),
    ("train", "keep_checkpoints"): (int, lambda v: v >= 1, "an int >= 1"),
    ("train", "seed"): (int, lambda v: v >= 0, "an int >= 0"),
    ("train", "mode"): (str, lambda v: v in MODES, f"one of {MODES}"),
}


def validate(config):
    """Return a checked copy of ``config`` (a nested dict); raise ValueError naming the bad key."""
    if not isinstance(config, dict):
        raise ValueError(f"the configuration must be a mapping of sections, got {type(config).__name__}")
    unknown = {f"{s}.{k}" for s, sec in config.items() if isinstance(sec, dict) for k in sec} - {
        f"{s}.{k}" for s, k in _RULES}
    unknown |= {s for s in config if s not in {s for s, _ in _RULES}}
    if unknown:
        known = sorted(f"{s}.{k}" for s, k in _RULES)
        raise ValueError(f"unknown configuration keys: {sorted(unknown)} (known: {known})")
    checked = copy.deepcopy(config)
    for (section, key), (kind, ok, wanted) in _RULES.items():
        if key not in config.get(section, {}):
            raise ValueError(f"missing configuration key {section}.{key} ({wanted})")
        value = config[section][key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, kind) or not ok(value):
            raise ValueError(f"{section}.{key} must be {wanted}, got {value!r}")
        checked[section][key] = value
    return checked


def load_config(path=DEFAULT_PATH, overrides=None):
    """Read a YAML file, apply ``overrides`` ({"train.epochs": 5}) and validate."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no configuration file at {path}")
    config = yaml.safe_load(path.read_text())
    for dotted, value in (overrides or {}).items():
        section, _, key = dotted.partition(".")
        config.setdefault(section, {})[key] = value
    return validate(config)
