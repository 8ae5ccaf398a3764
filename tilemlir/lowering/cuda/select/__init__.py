"""Variants of tile.select."""
