"""Variants of tile.gemm_async (tcgen05 on sm_100a, wgmma on sm_90a) and their fragment layouts."""
