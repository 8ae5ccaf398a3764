"""A fixed sample of bench/fuzz_tile_ir.py's mutants of the lit tests' tile IR, through
tile-to-ptx: each must end in a diagnostic or be accepted, never in a traceback, a death or a
hang (the full fuzzing run and its results: results/2026-11-30-fuzz-tile-ir.md)."""

import base64
import sys

import pytest

from harness import REPO, child_environment
from runner import run_cases

sys.path.insert(0, str(REPO / "bench"))
import fuzz_tile_ir  # noqa: E402

SEED, COUNT = 7, 120


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    seeds = fuzz_tile_ir.seed_chunks()
    cases = []
    for i in range(COUNT):
        text, chip = fuzz_tile_ir.mutant(seeds, SEED, i)
        cases.append({"id": str(i), "kind": "opt",
                      "stdin": base64.b64encode(text.encode("utf-8", "surrogatepass")).decode(),
                      "argv": [f"--pass-pipeline=builtin.module(tile-to-ptx{{chip={chip}}})"]})
    results = run_cases(cases, timeout=60,
                        env=child_environment(tmp_path_factory.mktemp("mutants")))
    return {k: (fuzz_tile_ir.classify(r), r.get("stderr", "")) for k, r in results.items()}


@pytest.mark.parametrize("index", range(COUNT))
def test_mutant_ends_cleanly(outcomes, index):
    outcome, stderr = outcomes[str(index)]
    assert outcome in ("clean", "accepted"), f"mutant {index} (seed {SEED}): {outcome}\n{stderr}"
