"""Seed 001's demo in the kernel language: one warp computes D[16,8] = A[16,16] . B[16,8].

Each lane stages its A and B fragment registers from global memory in the PTX register order,
the tile gemm becomes one mma.sync.m16n8k16, and the four result registers go back to D.
"""

import tilemlir.lang as T
from tilemlir.lang import S, TileLayout, laneid

Tx = T.tile

D_FRAG = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])
A_FRAG_K8 = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])
B_FRAG_K8 = TileLayout(S[(4, 2, 8):(1 @ laneid, 1, 4 @ laneid)])
A_FRAG = A_FRAG_K8.tile_to([16, 16], [16, 8])
B_FRAG = B_FRAG_K8.tile_to([16, 8], [8, 8])


@T.prim_func
def gemm_16x8x16(A_g: T.Buffer((16, 16), "float16"), B_g: T.Buffer((16, 8), "float16"),
                 D_g: T.Buffer((16, 8), "float32")):
    T.cta_id([1])
    T.warp_id([1])
    lane = T.lane_id([32])
    A_f = T.alloc_buffer((16, 16), "float16", scope="local", layout=A_FRAG)
    B_f = T.alloc_buffer((16, 8), "float16", scope="local", layout=B_FRAG)
    D_f = T.alloc_buffer((16, 8), "float32", scope="local", layout=D_FRAG)

    A_reg = A_f.local(8)                       # stage A into the lane's 8 registers
    for s in T.unroll(8):
        kp, rM, kHi = s % 2, (s // 2) % 2, s // 4
        A_reg[s] = A_g[lane // 4 + 8 * rM, 2 * (lane % 4) + kp + 8 * kHi]
    B_reg = B_f.local(4)                       # stage B into the lane's 4 registers
    for s in T.unroll(4):
        kp, kHi = s % 2, s // 2
        B_reg[s] = B_g[2 * (lane % 4) + kp + 8 * kHi, lane // 4]

    Tx.warp.gemm(D_f, A_f, B_f, D_f, transpose_A=False, transpose_B=False, alpha=1.0, beta=0.0)

    D_reg = D_f.local(4)                       # write the 4 result registers out
    for s in T.unroll(4):
        rN, rM = s % 2, s // 2
        D_g[lane // 4 + 8 * rM, 2 * (lane % 4) + rN] = D_reg[s]
