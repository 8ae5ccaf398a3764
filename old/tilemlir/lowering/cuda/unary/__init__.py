"""Variants of tile.unary."""
