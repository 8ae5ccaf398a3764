"""One warp multiplies register tiles: D = A . B (+ C), the seed-001 test kernel, any tiling.

The fragments are the mma.sync ones repeated over the tile (tile_to of the 16x8 / 16x16 atoms);
A and B are loaded from and D is stored to row-major global memory by tile.copy at warp scope.
With transpose_a (transpose_b) the A (B) buffer holds the transposed matrix, K x M (N x K), and
its fragment layout is the transposed one (permute_by_groups), so the same registers result.
"""

import tilemlir.lang as T
from tilemlir.lang import S, TileLayout, laneid

Tx = T.tile

_ACC = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])      # 16 x 8 (also A's k8 atom)
_B_K8 = TileLayout(S[(4, 2, 8):(1 @ laneid, 1, 4 @ laneid)])           # 8 x 8, K x N


def fragments(m: int, n: int, k: int, k_atom: int = 16):
    """Register layouts of A (M x K), B (K x N) and C/D (M x N) for mma.m16n8k<k_atom>."""
    a_atom = _ACC if k_atom == 8 else _ACC.tile_to([16, 16], [16, 8])
    b_atom = _B_K8 if k_atom == 8 else _B_K8.tile_to([16, 8], [8, 8])
    return (a_atom.tile_to([m, k], [16, k_atom]), b_atom.tile_to([k, n], [k_atom, 8]),
            _ACC.tile_to([m, n], [16, 8]))


def warp_gemm(M, N, K, dtype="float16", beta=0.0, transpose_a=False, transpose_b=False):
    k_atom = 16 if K % 16 == 0 else 8
    a_frag, b_frag, d_frag = fragments(M, N, K, k_atom)
    a_shape, b_shape = (K, M) if transpose_a else (M, K), (N, K) if transpose_b else (K, N)
    if transpose_a:
        a_frag = a_frag.permute_by_groups((M, K), (1, 0))
    if transpose_b:
        b_frag = b_frag.permute_by_groups((K, N), (1, 0))

    @T.prim_func
    def warp_gemm(A: T.Buffer(a_shape, dtype), B: T.Buffer(b_shape, dtype),
                  C: T.Buffer((M, N), "float32"), D: T.Buffer((M, N), "float32")):
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        A_f = T.alloc_local(a_shape, dtype, layout=a_frag)
        B_f = T.alloc_local(b_shape, dtype, layout=b_frag)
        D_f = T.alloc_local((M, N), "float32", layout=d_frag)
        Tx.warp.copy(A_f, A)
        Tx.warp.copy(B_f, B)
        if beta == 1.0:
            Tx.warp.copy(D_f, C)
        Tx.warp.gemm(D_f, A_f, B_f, D_f, transpose_A=transpose_a, transpose_B=transpose_b,
                     beta=beta)
        Tx.warp.copy(D, D_f)

    return warp_gemm
