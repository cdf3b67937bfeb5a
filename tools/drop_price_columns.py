"""Move the price_* columns of instance_types.csv into instance_prices.csv and drop them (issue 22).

Usage: python tools/drop_price_columns.py [CATALOG_DIR]   (default: the shipped blueprints/catalog/data)

Each priced row of instance_types.csv becomes a pay-as-you-go row of instance_prices.csv with its region, date,
source and confidence; a row already there with the same price is kept, a conflicting one stops the run with the
line to settle. Safe to run again (after a merge that brings rows with the old columns back, run it once more).
Exit 0 done or nothing to do; 2 the catalog cannot be moved (the message names file, line and column).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blueprints.catalog.loader import CATALOG_DIR, CatalogError
from blueprints.catalog.price_columns import move_price_columns


def main(argv: list[str]) -> int:
    directory = Path(argv[0]) if argv else CATALOG_DIR
    try:
        result = move_price_columns(directory)
    except CatalogError as exc:
        print(exc.render(), file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not result.dropped:
        print(f"{directory}: instance_types.csv has no price columns; nothing to do")
        return 0
    print(
        f"{directory}: {result.added} prices moved to instance_prices.csv, {result.already_there} already there; "
        f"dropped {', '.join(result.dropped)} from instance_types.csv"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
