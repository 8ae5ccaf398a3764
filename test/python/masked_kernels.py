"""Kernels of the masked-copy tests (test_masked_copies.py, test_masked_copies_gpu.py): each
moves an M x N matrix through 64 x 64 tiles whose last ones hang past its edges, so that every
access path meets ragged bounds: global -> shared -> global (copy_masked, cooperative), global
-> shared by cp.async (copy_async_masked), global <-> registers (copy_masked, vector_registers).
The tile in the middle also goes whole to `Seen` (one 64 x 64 block per tile), so that a test
can check the fill value out of range."""

import numpy as np

import tilemlir.lang as T

Tx = T.tile
TILE = 64


def _tiles(M, N):
    return (M + TILE - 1) // TILE, (N + TILE - 1) // TILE


def through_shared(M, N, dtype="float16", fill=0.0, asynchronous=False):
    """D = A via shared memory; Seen[t] = the shared tile of tile t (fill out of range)."""
    tm, tn = _tiles(M, N)

    @T.prim_func
    def through_shared(A: T.Buffer((M, N), dtype), D: T.Buffer((M, N), dtype),
                       Seen: T.Buffer((tm * tn * TILE, TILE), dtype)):
        t = T.cta_id([tm * tn])
        T.thread_id([128])
        pool = T.SMEMPool()
        S = pool.alloc((TILE, TILE), dtype)
        pool.commit()
        m0 = t // tn * TILE
        n0 = t % tn * TILE
        if asynchronous:
            Tx.cta.copy_async(S, A[m0:m0 + TILE, n0:n0 + TILE], bounds=(M - m0, N - n0))
            T.ptx.cp_async.commit_group()
            T.ptx.cp_async.wait_group(0)
        else:
            Tx.cta.copy(S, A[m0:m0 + TILE, n0:n0 + TILE], bounds=(M - m0, N - n0), fill=fill)
        T.cuda.cta_sync()
        Tx.cta.copy(Seen[t * TILE:t * TILE + TILE, :], S)
        Tx.cta.copy(D[m0:m0 + TILE, n0:n0 + TILE], S, bounds=(M - m0, N - n0))

    return through_shared


def through_registers(M, N, dtype="float32", fill=0.0):
    """D = A through a warpgroup's registers in the wgmma accumulator layout; Seen[t] = the
    register tile (fill out of range)."""
    tm, tn = _tiles(M, N)
    layout = T.wgmma_accumulator_layout(TILE, TILE)

    @T.prim_func
    def through_registers(A: T.Buffer((M, N), dtype), D: T.Buffer((M, N), dtype),
                          Seen: T.Buffer((tm * tn * TILE, TILE), dtype)):
        t = T.cta_id([tm * tn])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        r = T.alloc_local((TILE, TILE), dtype, layout=layout)
        m0 = t // tn * TILE
        n0 = t % tn * TILE
        Tx.wg.copy(r, A[m0:m0 + TILE, n0:n0 + TILE], bounds=(M - m0, N - n0), fill=fill)
        Tx.wg.copy(Seen[t * TILE:t * TILE + TILE, :], r)
        Tx.wg.copy(D[m0:m0 + TILE, n0:n0 + TILE], r, bounds=(M - m0, N - n0))

    return through_registers


def expected_seen(a, M, N, fill):
    """What Seen holds: each tile of `a` (numpy) padded with `fill` to 64 x 64, stacked."""
    import numpy as np
    tm, tn = _tiles(M, N)
    out = np.full((tm * tn * TILE, TILE), fill, dtype=a.dtype)
    for t in range(tm * tn):
        m0, n0 = t // tn * TILE, t % tn * TILE
        block = a[m0:m0 + TILE, n0:n0 + TILE]
        out[t * TILE:t * TILE + block.shape[0], :block.shape[1]] = block
    return out


def shifted_rows(M, N, dtype="float16", fill=0.0):
    """Y = X row by row through a warp's register tile of `width` elements taken from the
    16-byte boundary at or below each row's start (a flat view of X; bounds (lead, lead + N),
    lead the row's elements past that boundary): Seen[r] = the register tile (the fill outside
    the row); V[r] = W[j - lead] for each element j of the tile (the fill outside), through a
    window of W that starts lead elements before W (realigned loads). Every access a 16-byte
    run of 8 elements a thread, cut by a lower and an upper bound at the row's ends."""
    width = -(-(N + 7) // 256) * 256
    layout = T.TileLayout(T.S[(1, width // 256, 32, 8):(1, 8, 1 @ T.laneid, 1)])
    vector = T.TileLayout(T.S[(width // 256, 32, 8):(8, 1 @ T.laneid, 1)])

    @T.prim_func
    def shifted_rows(X: T.Buffer((M, N), dtype), W: T.Buffer((N,), dtype),
                     Y: T.Buffer((M, N), dtype), Seen: T.Buffer((M, width), dtype),
                     V: T.Buffer((M, width), dtype)):
        row = T.cta_id([M])
        T.lane_id([32])
        x = T.alloc_local((1, width), dtype, layout=layout)
        w = T.alloc_local((width,), dtype, layout=vector)
        start = row * N // 8 * 8
        lead = row * N - start
        in_row = (1, (lead, lead + N))
        Tx.warp.copy(x, X.view(1, M * N)[0:1, start:start + width], bounds=in_row, fill=fill)
        Tx.warp.copy(Seen[row:row + 1, :], x)
        Tx.warp.copy(Y.view(1, M * N)[0:1, start:start + width], x, bounds=in_row)
        before = 0 - lead
        Tx.warp.copy(w, W[before:before + width], bounds=(in_row[1],), fill=fill)
        Tx.warp.copy(V[row, :], w)

    return shifted_rows


def expected_shifted(x, w, fill):
    """(Seen, V) of shifted_rows for numpy x (M x N) and w (N)."""
    M, N = x.shape
    width = -(-(N + 7) // 256) * 256
    seen = np.full((M, width), fill, x.dtype)
    v = np.full((M, width), fill, x.dtype)
    for r in range(M):
        lead = r * N % 8
        seen[r, lead:lead + N] = x[r]
        v[r, lead:lead + N] = w
    return seen, v
