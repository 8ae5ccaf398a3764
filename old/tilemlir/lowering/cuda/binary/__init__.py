"""Variants of tile.binary."""
