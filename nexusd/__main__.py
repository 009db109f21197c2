"""Allow `python -m nexusd`."""

from __future__ import annotations

from nexusd.cli import main

if __name__ == "__main__":
    main()
