"""One warp multiplies register tiles: D = A . B (+ C), the seed-001 test kernel, any tiling.

The fragments are the mma.sync ones repeated over the tile (MmaSync.fragments);
A and B are loaded from and D is stored to row-major global memory by tile.copy at warp scope.
With transpose_a (transpose_b) the A (B) buffer holds the transposed matrix, K x M (N x K), and
its fragment layout is the transposed one (permute_by_groups), so the same registers result.
"""

import tilemlir.lang as T

Tx = T.tile


def warp_gemm(M, N, K, dtype="float16", beta=0.0, transpose_a=False, transpose_b=False):
    k_atom = 16 if K % 16 == 0 else 8
    a_frag, b_frag, d_frag = T.MmaSync(k_atom).fragments(M, N, K)
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
