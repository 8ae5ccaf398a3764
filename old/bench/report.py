"""What every benchmark's results file records about the run: date, GPU, driver, versions and
the command line, as the file's heading."""

from __future__ import annotations

import datetime
import platform
import subprocess
import sys
from pathlib import Path


def environment() -> dict:
    import torch
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    return dict(date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                gpu=smi, torch=torch.__version__, python=platform.python_version(),
                command="python " + " ".join(sys.argv))


def heading(title: str, env: dict) -> list[str]:
    """A results file's first lines: its title, then the run's environment()."""
    return [f"# {title}", "", f"- date: {env['date']}",
            f"- GPU, driver, max SM clock: {env['gpu']}",
            f"- torch {env['torch']}, Python {env['python']}", f"- command: `{env['command']}`"]


def publish(text: str, out: Path | None) -> None:
    """Prints a results file's text and writes it to `out` (if given), creating its folder."""
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
