"""Benchmark: import a 50-character Grapevine chronicle; prints timings and query counts.

Run with `make bench`. It builds its own chronicle file from the sample characters and imports
it into a throwaway SQLite database (or DATABASE_URL's database, in a bench_ chronicle).
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
if not os.environ.get("DATABASE_URL"):
    os.environ["SQLITE_PATH"] = str(Path(tempfile.mkdtemp()) / "bench.sqlite3")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from characters.grapevine import parse_grapevine  # noqa: E402
from characters.models import Chronicle  # noqa: E402
from characters.sheet_io import sheets_write  # noqa: E402

SAMPLE = ROOT / "tests" / "characters" / "data" / "grapevine" / "chronicle_camarilla_five_xml.gex"


def fifty_characters() -> bytes:
    text = SAMPLE.read_text(encoding="utf-8")
    body = text.split('<grapevine version="3">', 1)[1].rsplit("</grapevine>", 1)[0]
    copies = [
        re.sub(r'<vampire name="([^"]+)"', rf'<vampire name="\1 #{i}"', body) for i in range(10)
    ]
    return (
        '<?xml version="1.0"?>\n<grapevine version="3">' + "".join(copies) + "</grapevine>"
    ).encode()


def main() -> None:
    call_command("migrate", verbosity=0)
    data = fifty_characters()
    parse_times, write_times = [], []
    for run in range(5):
        started = time.perf_counter()
        sheets = parse_grapevine(data)
        parsed = time.perf_counter()
        chronicle, _ = Chronicle.objects.get_or_create(name="bench_grapevine")
        with CaptureQueriesContext(connection) as queries:
            report = sheets_write(chronicle=chronicle, sheets=sheets)
        done = time.perf_counter()
        parse_times.append(parsed - started)
        write_times.append(done - parsed)
        print(
            f"run {run + 1}: {report}; parse {1000 * (parsed - started):.1f} ms, "
            f"write {1000 * (done - parsed):.1f} ms, {len(queries.captured_queries)} queries"
        )
    traits = sum(sum(len(v) for v in s["traits"].values()) for s in sheets)
    print(f"{len(sheets)} characters, {traits} trait rows, {len(data)} bytes, {connection.vendor}")
    print(
        f"median parse {1000 * statistics.median(parse_times):.1f} ms, "
        f"median write {1000 * statistics.median(write_times):.1f} ms"
    )


if __name__ == "__main__":
    main()
