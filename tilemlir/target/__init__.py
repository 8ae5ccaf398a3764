"""Targets (chips and what they can execute) and the PTX / cubin they are given."""

from tilemlir.target.chips import DEFAULT_CHIP, Target, TargetError, registers_per_thread

__all__ = ["DEFAULT_CHIP", "Target", "TargetError", "registers_per_thread"]
