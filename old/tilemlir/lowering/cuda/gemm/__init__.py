"""Variants of tile.gemm."""
