"""Load and validate the project's YAML configuration.

Every problem is one ValueError line that names the key, says what it must be and shows what was found.
"""

import copy
import math
from pathlib import Path

import yaml

from course_utils._validate import shown
from course_utils.messages import lazy, t

DEFAULT_PATH = Path(__file__).with_name("config.yaml")
OPTIMIZERS = ("adam", "momentum", "sgd")
MODES = ("graph", "pynative")
AMP_LEVELS = ("O0", "O1", "O2", "O3")
SEED_MAX = 2**32 - 1  # numpy's and MindSpore's seeds are 32-bit

# (section, key): (type, check, what it must be). A number is an int or a float, and always finite.
# What it must be is a catalogue text (lazy), filled in with _BOUNDS and translated where it is shown.
_RULES = {
    ("data", "classes"): (int, lambda v: 2 <= v <= 10, lazy("an int from 2 to 10")),
    ("data", "n_train"): (int, lambda v: 8 <= v <= 1_000_000, lazy("an int from 8 to 1000000")),
    ("data", "n_val"): (int, lambda v: 1 <= v <= 1_000_000, lazy("an int from 1 to 1000000")),
    ("data", "n_test"): (int, lambda v: 1 <= v <= 1_000_000, lazy("an int from 1 to 1000000")),
    ("data", "noise"): (float, lambda v: 0 <= v <= 10, lazy("a number from 0 to 10")),
    # the validation and test data use seed + 1 and seed + 2
    ("data", "seed"): (int, lambda v: 0 <= v <= SEED_MAX - 2, lazy("an int from 0 to {data_seed_max}")),
    ("model", "hidden"): (int, lambda v: 1 <= v <= 4096, lazy("an int from 1 to 4096")),
    ("model", "layers"): (int, lambda v: 0 <= v <= 8, lazy("an int from 0 to 8 (0: a straight-line classifier)")),
    ("train", "optimizer"): (str, lambda v: v in OPTIMIZERS, lazy("one of {optimizers}")),
    ("train", "learning_rate"): (float, lambda v: 0 < v <= 10, lazy("a number in (0, 10]")),
    ("train", "epochs"): (int, lambda v: 1 <= v <= 100_000, lazy("an int from 1 to 100000")),
    ("train", "batch_size"): (int, lambda v: 1 <= v <= 1_000_000, lazy("an int from 1 to 1000000")),
    ("train", "weight_decay"): (float, lambda v: 0 <= v <= 1e3, lazy("a number from 0 to 1000")),
    ("train", "patience"): (int, lambda v: 0 <= v <= 100_000, lazy("an int from 0 (never stop early) to 100000")),
    ("train", "seed"): (int, lambda v: 0 <= v <= SEED_MAX, lazy("an int from 0 to {seed_max}")),
    ("train", "mode"): (str, lambda v: v in MODES, lazy("one of {modes}")),
    ("train", "amp"): (str, lambda v: v in AMP_LEVELS, lazy("one of {amp_levels}")),
}
_BOUNDS = {"data_seed_max": SEED_MAX - 2, "seed_max": SEED_MAX, "optimizers": OPTIMIZERS, "modes": MODES,
           "amp_levels": AMP_LEVELS}
SECTIONS = tuple(dict.fromkeys(section for section, _ in _RULES))


def _wanted(section, key):
    """What ``section.key`` must be, in the learner's language."""
    return t(_RULES[(section, key)][2], **_BOUNDS)


def _found(value):
    """What was found, for a message; YAML reads 1e-3 (no dot) as text, which deserves a word."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return t("the text {text!r}", text=value)
        return t("the text {text!r} (YAML reads a number like 1e-3 without a dot as text: write 1.0e-3 "
                 "or 0.001)", text=value)
    return t("nothing") if value is None else shown(value)


def _check_value(section, key, value):
    kind, ok, _ = _RULES[(section, key)]
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is float and is_number:
        if isinstance(value, int) and abs(value) > 1e300:  # float() of a 400-digit int overflows
            raise ValueError(t("{section}.{key} must be {wanted}, got an int of {bits} bits", section=section,
                               key=key, wanted=_wanted(section, key), bits=value.bit_length()))
        value = float(value)
    if (not isinstance(value, kind) or isinstance(value, bool) or (kind is float and not math.isfinite(value))
            or not ok(value)):
        raise ValueError(t("{section}.{key} must be {wanted}, got {found}", section=section, key=key,
                           wanted=_wanted(section, key), found=_found(value)))
    return value


def _check_layout(config):
    """The shape of a configuration: a mapping of the known sections, each a mapping of known keys."""
    if config is None:
        raise ValueError(t("the configuration is empty: it needs the sections {sections}",
                           sections=", ".join(SECTIONS)))
    if not isinstance(config, dict):
        raise ValueError(t("the configuration must be a mapping of sections ({sections}), got {found}",
                           sections=", ".join(SECTIONS), found=_found(config)))
    unknown = [str(s) for s in config if s not in SECTIONS]
    if unknown:
        raise ValueError(t("unknown configuration sections: {unknown} (known: {known})", unknown=sorted(unknown),
                           known=list(SECTIONS)))
    for section, keys in config.items():
        names = [key for s, key in _RULES if s == section]
        if not isinstance(keys, dict):
            raise ValueError(t("section {section} must be a mapping of keys ({keys}), got {found}",
                               section=section, keys=", ".join(names), found=_found(keys)))
        extra = sorted(f"{section}.{k}" for k in keys if k not in names)
        if extra:
            known = sorted(f"{s}.{k}" for s, k in _RULES)
            raise ValueError(t("unknown configuration keys: {unknown} (known: {known})", unknown=extra, known=known))


def validate(config):
    """Return a checked copy of ``config`` (a nested dict); raise ValueError naming the bad key."""
    _check_layout(config)
    checked = copy.deepcopy(config)
    for section, key in _RULES:
        if key not in config.get(section, {}):
            raise ValueError(t("missing configuration key {section}.{key} ({wanted})", section=section, key=key,
                               wanted=_wanted(section, key)))
        checked[section][key] = _check_value(section, key, config[section][key])
    return checked


def load_config(path=DEFAULT_PATH, overrides=None):
    """Read a YAML file, apply ``overrides`` ({"train.epochs": 5}) and validate."""
    if not isinstance(path, (str, Path)):
        raise TypeError(t("path must be the path of a YAML file (str or Path), got {value}", value=shown(path)))
    if overrides is not None and not isinstance(overrides, dict):
        raise TypeError(t("overrides must be a dict such as {{'train.epochs': 5}}, got {value}",
                          value=shown(overrides)))
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(t("no configuration file at {path}", path=path))
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ValueError(t("{path} is not a text file (not UTF-8): give a YAML configuration", path=path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = (t(" at line {line}, column {column}", line=mark.line + 1, column=mark.column + 1)
                 if mark is not None else "")
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(t("{path} is not valid YAML{where}: {problem}", path=path, where=where,
                           problem=problem)) from None
    _check_layout(config)
    config = copy.deepcopy(config)
    for dotted, value in (overrides or {}).items():
        section, _, key = str(dotted).partition(".")
        if not isinstance(config.get(section, {}), dict):
            raise ValueError(t("cannot override {dotted}: section {section} is not a mapping", dotted=dotted,
                               section=section))
        config.setdefault(section, {})[key] = value
    return validate(config)
