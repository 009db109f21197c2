"""The configuration: defaults < user file < repository file, validated once, read typed.

`defaults.py` holds every key's default, `load.py` loads and validates, `sections.py` holds
the typed sections, `entries.py` and `access.py` validate the list-like sections and the
API's roles, `cache.py` keeps a validated configuration for the CLI's next run.
"""

from __future__ import annotations

from nexusd.config.defaults import DEFAULTS
from nexusd.config.load import Config, config_from_mapping, load_config, user_config_path

__all__ = ["DEFAULTS", "Config", "config_from_mapping", "load_config", "user_config_path"]
